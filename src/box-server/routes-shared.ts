/**
 * Shared-link access: the `BoxApi: shared_link=<url>[&shared_link_password=<pw>]` header, checked on any API
 * request that carries it (404 for an unknown or ended link, 403 for a missing or wrong password), and
 * GET /shared_items, which resolves a link to its item. Every user can already read every item here (one shared
 * tree), so a valid header grants nothing more; an invalid one is refused as Box would.
 */
import { BoxError } from './box-error.js';
import { fieldsOf, sendEmpty, sendJson, type Ctx } from './http-context.js';
import { api, notModified, type Route } from './route.js';
import { itemJson } from './serialize.js';
import type { ItemRec } from './state.js';
import type { Store } from './store.js';

/** The item a BoxApi header points at, or a Box error; null when the request carries no such header. */
export function sharedItemOf(store: Store, header: string | string[] | undefined): ItemRec | null {
  const raw = Array.isArray(header) ? header[0] : header;
  if (raw === undefined || raw.trim() === '') return null;
  const params = new URLSearchParams(raw.trim());
  const url = params.get('shared_link');
  if (!url) throw new BoxError(400, 'bad_request', 'The BoxApi header must be shared_link=<url>[&shared_link_password=<password>]');
  const token = url.replace(/[?#].*$/, '').split('/').filter((p) => p !== '').pop() ?? '';
  const now = store.now();
  const item = Object.values(store.state.items).find((i) => {
    const l = i.sharedLink;
    return l !== null && (l.token === token || l.vanityName === token) && (l.unsharedAtMs === null || l.unsharedAtMs > now);
  });
  if (!item || item.status !== 'active') throw new BoxError(404, 'not_found', 'No item is shared with this link (unknown, removed or expired)');
  const password = item.sharedLink?.password ?? null;
  if (password !== null && params.get('shared_link_password') !== password) {
    throw new BoxError(403, 'forbidden', 'This shared link needs its password: add shared_link_password to the BoxApi header');
  }
  return item;
}

function sharedItems(ctx: Ctx): void {
  const store = ctx.core.store;
  const item = sharedItemOf(store, ctx.req.headers['boxapi']);
  if (!item) throw new BoxError(400, 'bad_request', 'GET /shared_items needs a BoxApi: shared_link=<url> header');
  if (notModified(ctx, item)) return sendEmpty(ctx, 304);
  sendJson(ctx, 200, itemJson(store, item, fieldsOf(ctx), 'standard'));
}

export const sharedRoutes: readonly Route[] = [api('GET', /^\/shared_items$/, sharedItems)];
