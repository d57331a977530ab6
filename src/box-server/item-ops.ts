/**
 * Tree operations shared by HTTP routes and the test actor: create folders and web links, rename, move, copy,
 * sync_state, descriptions. Each records the same events Box would. Name rules and case-insensitive uniqueness
 * (409 item_name_in_use with `context_info.conflicts`: an object for files and links, an array for folders, as
 * Box's own samples read them) are enforced here.
 */
import type { ActorContext } from './actor-context.js';
import { BoxError, notFound } from './box-error.js';
import { assertNotMoveLocked } from './folder-locks.js';
import { stripName, validateName } from './names.js';
import { miniJson } from './serialize.js';
import type { ItemRec, SyncState } from './state.js';
import { blankItem, rootFolderId, type Store } from './store.js';

export function assertNoConflict(store: Store, parentId: string, name: string, forType: ItemRec['type'], exceptId?: string): void {
  const c = store.conflict(parentId, name, exceptId);
  if (!c) return;
  const mini = miniJson(store, c);
  throw new BoxError(409, 'item_name_in_use', 'Item with the same name already exists; nothing was changed', {
    conflicts: forType === 'folder' ? [mini] : mini,
  });
}

export function activeFolder(store: Store, id: string, what = 'parent'): ItemRec {
  const f = store.item(id);
  if (!f || f.type !== 'folder' || f.status !== 'active') throw notFound(`The ${what} folder ${id} does not exist`);
  return f;
}

export function createFolder(store: Store, ctx: ActorContext, parentId: string, rawName: unknown, syncState?: SyncState): ItemRec {
  const name = validateName(rawName);
  activeFolder(store, parentId);
  assertNoConflict(store, parentId, name, 'folder');
  const f = blankItem('folder', store.newId(), name, parentId, ctx.userId, store.now());
  if (syncState) f.syncState = syncState;
  store.insert(f);
  store.recordEvent('ITEM_CREATE', ctx.userId, f, ctx.sessionId);
  if (syncState === 'synced') store.recordEvent('ITEM_SYNC', ctx.userId, f, ctx.sessionId);
  return f;
}

export function createWebLink(store: Store, ctx: ActorContext, parentId: string, rawName: unknown, url: unknown): ItemRec {
  if (typeof url !== 'string' || !/^https?:\/\//.test(url)) throw new BoxError(400, 'bad_request', "'url' must start with http:// or https://");
  const name = validateName(rawName ?? url);
  activeFolder(store, parentId);
  assertNoConflict(store, parentId, name, 'web_link');
  const w = blankItem('web_link', store.newId(), name, parentId, ctx.userId, store.now());
  w.url = url;
  store.insert(w);
  store.recordEvent('ITEM_CREATE', ctx.userId, w, ctx.sessionId);
  return w;
}

/** Rename and/or move. If-Match is the caller's business (it does not guard moves, as on Box). */
export function renameOrMove(store: Store, ctx: ActorContext, item: ItemRec, rawName: unknown, parentId: string | undefined): void {
  if (item.id === rootFolderId) throw new BoxError(403, 'access_denied_insufficient_permissions', 'The root folder cannot be renamed or moved');
  if (item.type === 'file') store.assertNotLockedByOther(item, ctx.userId);
  const name = rawName === undefined ? item.name : validateName(rawName);
  const targetParent = parentId ?? item.parentId ?? rootFolderId;
  const moving = targetParent !== item.parentId;
  const renaming = name !== item.name;
  if (!moving && !renaming) return;
  if (moving && item.type === 'folder') assertNotMoveLocked(item);
  const dest = activeFolder(store, targetParent);
  if (item.type === 'folder' && store.isUnder(dest, item.id)) {
    throw new BoxError(400, 'cyclical_folder_structure', 'A folder cannot be moved into itself or its own subfolder; nothing was changed');
  }
  assertNoConflict(store, targetParent, name, item.type, item.id);
  item.name = name;
  item.parentId = targetParent;
  store.structureChanged();
  store.touch(item, ctx.userId);
  if (renaming) store.recordEvent('ITEM_RENAME', ctx.userId, item, ctx.sessionId);
  if (moving) store.recordEvent('ITEM_MOVE', ctx.userId, item, ctx.sessionId);
}

export function setSyncState(store: Store, ctx: ActorContext, folder: ItemRec, state: unknown): void {
  if (state !== 'synced' && state !== 'not_synced' && state !== 'partially_synced') {
    throw new BoxError(400, 'bad_request', "'sync_state' must be synced, not_synced or partially_synced");
  }
  if (folder.syncState === state) return;
  const was = folder.syncState;
  folder.syncState = state;
  store.touch(folder, ctx.userId);
  if (state === 'synced') store.recordEvent('ITEM_SYNC', ctx.userId, folder, ctx.sessionId);
  else if (was === 'synced') store.recordEvent('ITEM_UNSYNC', ctx.userId, folder, ctx.sessionId);
}

export function setDescription(store: Store, ctx: ActorContext, item: ItemRec, description: unknown): void {
  if (typeof description !== 'string' || description.length > 256) {
    throw new BoxError(400, 'bad_request', "'description' must be a string of at most 256 characters");
  }
  if (item.type === 'file') store.assertNotLockedByOther(item, ctx.userId);
  item.description = description;
  store.touch(item, ctx.userId);
}

export function copyItem(store: Store, ctx: ActorContext, item: ItemRec, parentId: string, rawName: unknown, versionId?: string): ItemRec {
  if (item.id === rootFolderId) throw new BoxError(500, 'internal_server_error', 'The root folder cannot be copied');
  const dest = activeFolder(store, parentId);
  if (item.type === 'folder' && store.isUnder(dest, item.id)) {
    throw new BoxError(400, 'bad_request', 'A folder cannot be copied into itself or its own subfolder; nothing was changed');
  }
  const name = rawName === undefined || rawName === null ? item.name : stripName(String(rawName));
  assertNoConflict(store, parentId, name, item.type);
  const copy = cloneInto(store, ctx, item, parentId, name, versionId);
  store.recordEvent('ITEM_COPY', ctx.userId, copy, ctx.sessionId);
  return copy;
}

function cloneInto(store: Store, ctx: ActorContext, item: ItemRec, parentId: string, name: string, versionId?: string): ItemRec {
  const now = store.now();
  const c = blankItem(item.type, store.newId(), name, parentId, ctx.userId, now);
  c.description = item.description;
  c.contentCreatedAtMs = item.contentCreatedAtMs;
  c.contentModifiedAtMs = item.contentModifiedAtMs;
  c.url = item.url;
  if (item.type === 'file') {
    const src = versionId ? item.versions.find((v) => v.id === versionId) : store.currentVersion(item);
    if (!src) throw notFound(`No version ${versionId ?? ''} of file ${item.id}`);
    const v = { ...src, id: store.newVersionId(), name, createdAtMs: now, modifiedBy: ctx.userId, trashedAtMs: null, trashedBy: null, restoredAtMs: null, restoredBy: null };
    store.attachCurrentVersion(c, v);
  }
  store.insert(c);
  if (item.type === 'folder') {
    for (const child of store.children(item.id)) cloneInto(store, ctx, child, c.id, child.name);
  }
  return c;
}
