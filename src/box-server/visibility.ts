/**
 * Who can see what. The tree is shared (every user collaborates on everything) except for items owned by an
 * isolated user (`addUser({ isolated: true })`): those are visible only to their owner, or to a request whose
 * `BoxApi: shared_link=...` header names the item or one of its ancestors, as on Box; to anyone else they are 404.
 */
import { BoxError } from './box-error.js';
import { idOf, objField, type Ctx } from './http-context.js';
import type { ItemRec } from './state.js';
import type { Store } from './store.js';

export function visibleTo(store: Store, userId: string, item: ItemRec, sharedRoot: ItemRec | null): boolean {
  if (item.ownedBy === userId || !store.state.users[item.ownedBy]?.isolated) return true;
  return sharedRoot !== null && store.isUnder(item, sharedRoot.id);
}

/** The item id an API path addresses (`/files/{id}...`, `/folders/{id}...`, `/web_links/{id}...`), if any. */
export function addressedItemId(apiPath: string): string | null {
  const m = /^\/(?:files|folders|web_links)\/(\d+)(?:\/|$)/.exec(apiPath);
  return m ? m[1]! : null;
}

/** A destination folder id from a request, 404 when it belongs to an isolated user the caller cannot see. */
export function visibleTargetId(ctx: Ctx, id: string | undefined): string | undefined {
  const item = id === undefined ? undefined : ctx.core.store.item(id);
  if (item && !visibleTo(ctx.core.store, ctx.userId, item, ctx.sharedRoot)) throw new BoxError(404, 'not_found', `The parent folder ${String(id)} does not exist`);
  return id;
}

/** `parent.id` of a JSON body (or attributes part), checked with `visibleTargetId`. */
export function parentIdOf(ctx: Ctx, body: Record<string, unknown>): string | undefined {
  return visibleTargetId(ctx, idOf(objField(body, 'parent'), 'parent'));
}
