/**
 * Trash: delete moves an item (and a folder's whole subtree) to the trash; restore brings back the item and what
 * went with it, to its old parent or a given one (409 on a name clash); purge removes it for good and frees blobs
 * nothing else references. Only items trashed themselves show in the trash (an ancestor's trashing hides them).
 */
import type { ActorContext } from './actor-context.js';
import { BoxError, notFound } from './box-error.js';
import { assertNotDeleteLocked } from './folder-locks.js';
import { activeFolder, assertNoConflict } from './item-ops.js';
import { validateName } from './names.js';
import type { ItemRec } from './state.js';
import { rootFolderId, type Store } from './store.js';

export function trashItem(store: Store, ctx: ActorContext, item: ItemRec, recursive: boolean): void {
  if (item.id === rootFolderId) throw new BoxError(403, 'access_denied_insufficient_permissions', 'The root folder cannot be deleted');
  if (item.type === 'file') store.assertNotLockedByOther(item, ctx.userId);
  if (item.type === 'folder') assertNotDeleteLocked(store, item);
  const subtree = item.type === 'folder' ? store.descendants(item.id, (i) => i.status === 'active') : [];
  if (item.type === 'folder' && !recursive && subtree.length > 0) {
    throw new BoxError(400, 'folder_not_empty', 'The folder is not empty; pass recursive=true to delete it with its contents. Nothing was deleted');
  }
  const now = store.now();
  for (const d of subtree) {
    store.changed(d.id);
    d.status = 'trashed';
    d.trashedAtMs = now;
    d.trashedSelf = false;
    d.trashedFromParentId = d.parentId;
  }
  item.status = 'trashed';
  item.trashedAtMs = now;
  item.trashedSelf = true;
  item.trashedFromParentId = item.parentId;
  store.touch(item, ctx.userId);
  store.recordEvent('ITEM_TRASH', ctx.userId, item, ctx.sessionId);
}

/** The item as it sits in the trash (it must have been trashed itself), or 404. */
export function trashedItem(store: Store, type: ItemRec['type'], id: string): ItemRec {
  const it = store.item(id);
  if (!it || it.type !== type || it.status !== 'trashed' || !it.trashedSelf) {
    throw new BoxError(404, 'not_trashed', `The ${type} ${id} is not in the trash`);
  }
  return it;
}

export function restoreItem(store: Store, ctx: ActorContext, item: ItemRec, opts: { parentId?: string; name?: unknown }): void {
  const parentId = opts.parentId ?? item.trashedFromParentId ?? rootFolderId;
  const parent = store.item(parentId);
  if (!parent || parent.type !== 'folder' || parent.status !== 'active') {
    if (opts.parentId !== undefined) throw notFound(`The parent folder ${parentId} does not exist`);
    throw new BoxError(404, 'not_found', `The original parent folder ${parentId} is gone; pass parent.id to restore elsewhere. Nothing was restored`);
  }
  activeFolder(store, parentId);
  const name = opts.name === undefined || opts.name === null ? item.name : validateName(opts.name);
  assertNoConflict(store, parentId, name, item.type, item.id);
  const companions = item.type === 'folder' ? store.descendants(item.id, (i) => i.status === 'trashed' && !i.trashedSelf) : [];
  for (const d of companions) {
    store.changed(d.id);
    d.status = 'active';
    d.trashedAtMs = null;
    d.trashedFromParentId = null;
  }
  item.status = 'active';
  item.trashedAtMs = null;
  item.trashedSelf = false;
  item.trashedFromParentId = null;
  item.parentId = parentId;
  item.name = name;
  store.structureChanged();
  store.touch(item, ctx.userId);
  store.recordEvent('ITEM_UNDELETE_VIA_TRASH', ctx.userId, item, ctx.sessionId);
}

export function purgeItem(store: Store, item: ItemRec): void {
  // Items trashed on their own before their folder stay in the trash: they are purged separately.
  const doomed = item.type === 'folder' ? [item, ...store.descendants(item.id, (i) => !(i.status === 'trashed' && i.trashedSelf))] : [item];
  const blobs = new Set<string>();
  for (const d of doomed) {
    for (const v of d.versions) blobs.add(v.blobId);
    delete store.state.items[d.id];
    store.changed(d.id);
  }
  store.structureChanged();
  for (const b of blobs) store.collectBlob(b);
}
