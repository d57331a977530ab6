/**
 * Shared vocabulary of the planner's parts: the context every decision reads, candidate operations before
 * batching, and the guards built from observed entries. PURE.
 */
import type { LocalEntry, RelPath, RemoteEntry, RemoteId, RootId, SyncDirection } from './model.js';
import { pathsTouched, type LocalGuard, type Operation, type RemoteExpect } from './operations.js';
import type { ItemState, PlanIndex } from './plan-index.js';
import { foldKey, parentOf } from './paths.js';

export interface PlanContext {
  readonly index: PlanIndex;
  readonly root: RootId;
  readonly direction: SyncDirection;
  readonly nowMs: number;
  readonly mayWriteRemote: boolean;
  readonly mayWriteLocal: boolean;
}

/**
 * A proposed operation before batching. `paths` are every path the operation touches (both ends of a move,
 * the old base path of a re-keyed link); the batcher keeps ancestor/descendant pairs out of one batch by them.
 */
export interface Candidate {
  readonly op: Operation;
  readonly paths: readonly RelPath[];
}

export function candidate(op: Operation, ...extra: RelPath[]): Candidate {
  return { op, paths: [...pathsTouched(op), ...extra] };
}

export function localGuard(l: LocalEntry | null): LocalGuard {
  if (l === null) return { state: 'absent' };
  if (l.kind === 'folder') return { state: 'folder', inode: l.inode };
  return { state: 'file', sizeBytes: l.sizeBytes, mtimeMs: l.mtimeMs, inode: l.inode };
}

export function expectOf(r: RemoteEntry): RemoteExpect {
  return { etag: r.etag, sha1: r.sha1, sizeBytes: r.sizeBytes, versionId: r.versionId, modifiedAtMs: r.modifiedAtMs };
}

/**
 * The folder that holds `path`, when it is the same synced folder on both sides at exactly that path (or the
 * root). Anything less (a folder only on one side, a same-named but different folder on each side, a folder
 * still moving) means the item must wait: putting it there would file it under the wrong folder on one side.
 */
function parentInSync(ctx: PlanContext, path: RelPath): RemoteId | null {
  const parent = parentOf(path);
  if (parent === '') return ctx.index.snapshot.root.remoteId;
  const row = ctx.index.snapshot.synced.get(parent);
  const item = row === undefined ? undefined : ctx.index.itemById.get(row.remoteId);
  if (item === undefined || item.remote === null || item.local === null) return null;
  if (item.remote.kind !== 'folder' || item.local.kind !== 'folder' || item.remotePath !== parent || item.localPath !== parent) return null;
  return item.remote.id;
}

/** The Box id of the folder that holds `path`, or null while that folder is not in sync (see parentInSync). */
export function remoteParentId(ctx: PlanContext, path: RelPath): RemoteId | null {
  return parentInSync(ctx, path);
}

/** True when the folder that holds `path` is in sync on both sides, so a local entry may be created in it. */
export function localParentExists(ctx: PlanContext, path: RelPath): boolean {
  return parentInSync(ctx, path) !== null;
}

/** UTF-8 length, for the Linux 255-byte name limit. */
export function utf8Bytes(s: string): number {
  let n = 0;
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    n += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
  }
  return n;
}

/** The item whose merge-base row sits at `path` (folded), when that is not the item `self`. */
export function baseRowHolder(ctx: PlanContext, path: RelPath, self: RemoteId): ItemState | undefined {
  const row = ctx.index.syncedByKey.get(foldKey(path));
  if (row === undefined || row.remoteId === self) return undefined;
  return ctx.index.itemById.get(row.remoteId);
}
