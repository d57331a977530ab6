/**
 * Shared links on files, folders and web links: create or update from the `shared_link` object of a PUT
 * (access, password, unshared_at, permissions, vanity_name), remove with `shared_link: null`.
 */
import { randomBytes } from 'node:crypto';
import type { ActorContext } from './actor-context.js';
import { BoxError } from './box-error.js';
import { parseTime } from './file-ops.js';
import type { ItemRec, SharedLinkAccess } from './state.js';
import type { Store } from './store.js';

const accessLevels: readonly SharedLinkAccess[] = ['open', 'company', 'collaborators'];

export function setSharedLink(store: Store, ctx: ActorContext, item: ItemRec, body: Record<string, unknown> | null): void {
  if (body === null) {
    if (!item.sharedLink) return;
    item.sharedLink = null;
    store.touch(item, ctx.userId);
    store.recordEvent('ITEM_SHARED_UNSHARE', ctx.userId, item, ctx.sessionId);
    return;
  }
  const existing = item.sharedLink;
  const access = body['access'] ?? existing?.access ?? 'open';
  if (!accessLevels.includes(access as SharedLinkAccess)) throw new BoxError(400, 'bad_request', "'shared_link.access' must be open, company or collaborators");
  const asked = body['password'];
  if (asked !== undefined && asked !== null && (typeof asked !== 'string' || asked.length < 8)) {
    throw new BoxError(400, 'bad_request', "'shared_link.password' must be a string of at least 8 characters, or null");
  }
  // Only a request that itself sets a password must ask for open access ("A password can only be set when
  // `access` is set to `open`"). Changing the access of a password-protected link away from open is allowed, as
  // on Box; the existing password is then dropped: it only ever guards open links, so the answer says
  // is_password_enabled false, and it does not come back if the link is later made open again (set a new one).
  if (typeof asked === 'string' && access !== 'open') throw new BoxError(400, 'bad_request', 'A password can only be set on a shared link with open access');
  const password = access !== 'open' ? null : asked === undefined ? existing?.password ?? null : asked;
  const perms = (body['permissions'] ?? {}) as Record<string, unknown>;
  if (typeof perms !== 'object') throw new BoxError(400, 'bad_request', "'shared_link.permissions' must be an object");
  const vanity = body['vanity_name'];
  if (vanity !== undefined && vanity !== null && (typeof vanity !== 'string' || vanity.length < 12)) {
    throw new BoxError(400, 'bad_request', "'shared_link.vanity_name' must be at least 12 characters");
  }
  const unsharedAt = body['unshared_at'] === undefined ? existing?.unsharedAtMs ?? null : parseTime(body['unshared_at'], 'shared_link.unshared_at') ?? null;
  item.sharedLink = {
    token: existing?.token ?? randomBytes(16).toString('hex'),
    access: access as SharedLinkAccess,
    password: password as string | null,
    unsharedAtMs: unsharedAt,
    canDownload: typeof perms['can_download'] === 'boolean' ? perms['can_download'] : existing?.canDownload ?? true,
    canPreview: true,
    canEdit: typeof perms['can_edit'] === 'boolean' ? perms['can_edit'] && item.type === 'file' : existing?.canEdit ?? false,
    vanityName: typeof vanity === 'string' ? vanity : existing?.vanityName ?? null,
    createdAtMs: existing?.createdAtMs ?? store.now(),
  };
  store.touch(item, ctx.userId);
  if (!existing) store.recordEvent('ITEM_SHARED_CREATE', ctx.userId, item, ctx.sessionId);
}
