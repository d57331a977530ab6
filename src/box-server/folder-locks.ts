/**
 * Folder locks (`/folder_locks`): a lock on a folder stops it being moved or deleted (Box locks both together, as
 * lock_type `freeze`) until the lock is deleted. Deleting a folder is refused too when a locked folder sits
 * anywhere below it, since the delete would take that folder with it. Locks live on the folder's record.
 */
import { randomInt } from 'node:crypto';
import { BoxError } from './box-error.js';
import { param, query, readJson, sendEmpty, sendJson, type Ctx } from './http-context.js';
import { api, type Route } from './route.js';
import { isoTime, itemJson } from './serialize.js';
import type { FolderLockRec, ItemRec } from './state.js';
import { rootFolderId, type Store } from './store.js';
import { visibleTo } from './visibility.js';

function lockJson(store: Store, folder: ItemRec, lock: FolderLockRec): Record<string, unknown> {
  return {
    id: lock.id,
    type: 'folder_lock',
    folder: itemJson(store, folder, null, 'mini'),
    created_by: { type: 'user', id: lock.createdBy },
    created_at: isoTime(lock.createdAtMs),
    locked_operations: { move: lock.move, delete: lock.delete },
    lock_type: 'freeze',
  };
}

/** 400 (as Box answers a move of a locked folder) when `folder` has a move lock. */
export function assertNotMoveLocked(folder: ItemRec): void {
  if ((folder.folderLocks ?? []).some((l) => l.move)) {
    throw new BoxError(400, 'bad_request', `Folder ${folder.id} has a folder lock that prevents moving it; delete the lock first. Nothing was changed`);
  }
}

/** 403 when `folder` or a folder below it has a delete lock. */
export function assertNotDeleteLocked(store: Store, folder: ItemRec): void {
  const locked = [folder, ...store.descendants(folder.id, (i) => i.type === 'folder' && i.status === 'active')].find((f) =>
    (f.folderLocks ?? []).some((l) => l.delete),
  );
  if (locked) {
    throw new BoxError(403, 'access_denied_insufficient_permissions', `Folder ${locked.id} has a folder lock that prevents deleting it; delete the lock first. Nothing was deleted`);
  }
}

function lockedFolder(ctx: Ctx, id: string | null | undefined): ItemRec {
  const store = ctx.core.store;
  const folder = id ? store.item(id) : undefined;
  if (!folder || folder.type !== 'folder' || folder.status !== 'active' || !visibleTo(store, ctx.userId, folder, ctx.sharedRoot)) {
    throw new BoxError(404, 'not_found', `Folder ${String(id)} was not found`);
  }
  return folder;
}

function findLock(store: Store, id: string): { folder: ItemRec; lock: FolderLockRec } | undefined {
  for (const folder of Object.values(store.state.items)) {
    const lock = folder.folderLocks?.find((l) => l.id === id);
    if (lock) return { folder, lock };
  }
  return undefined;
}

function listLocks(ctx: Ctx): void {
  const id = query(ctx, 'folder_id');
  if (id === null || id === '') throw new BoxError(400, 'bad_request', "'folder_id' is required");
  const store = ctx.core.store;
  const folder = lockedFolder(ctx, id);
  sendJson(ctx, 200, { limit: '1000', next_marker: null, entries: (folder.folderLocks ?? []).map((l) => lockJson(store, folder, l)) });
}

async function createLock(ctx: Ctx): Promise<void> {
  const store = ctx.core.store;
  const body = await readJson(ctx);
  const f = body['folder'] as { type?: unknown; id?: unknown } | undefined;
  if (typeof f !== 'object' || f === null || typeof f.id !== 'string' || (f.type !== undefined && f.type !== 'folder')) {
    throw new BoxError(400, 'bad_request', "'folder' must be {\"type\": \"folder\", \"id\": \"...\"}");
  }
  const ops = body['locked_operations'] as { move?: unknown; delete?: unknown } | undefined;
  if (ops !== undefined && (typeof ops !== 'object' || ops === null || ops.move !== true || ops.delete !== true)) {
    throw new BoxError(400, 'bad_request', "'locked_operations' must lock both move and delete (both true)");
  }
  const folder = lockedFolder(ctx, f.id);
  if (folder.id === rootFolderId) throw new BoxError(400, 'bad_request', 'The root folder cannot be locked');
  const lock: FolderLockRec = { id: String(randomInt(1, 2 ** 47)), createdBy: ctx.userId, createdAtMs: store.now(), move: true, delete: true };
  folder.folderLocks = [...(folder.folderLocks ?? []), lock];
  store.changed(folder.id);
  sendJson(ctx, 200, lockJson(store, folder, lock));
}

function deleteLock(ctx: Ctx): void {
  const store = ctx.core.store;
  const found = findLock(store, param(ctx, 0));
  if (!found || !visibleTo(store, ctx.userId, found.folder, ctx.sharedRoot)) throw new BoxError(404, 'not_found', `Folder lock ${param(ctx, 0)} was not found`);
  found.folder.folderLocks = (found.folder.folderLocks ?? []).filter((l) => l.id !== found.lock.id);
  store.changed(found.folder.id);
  sendEmpty(ctx, 204);
}

export const folderLockRoutes: readonly Route[] = [
  api('GET', /^\/folder_locks$/, listLocks),
  api('POST', /^\/folder_locks$/, createLock),
  api('DELETE', /^\/folder_locks\/(\d+)$/, deleteLock),
];
