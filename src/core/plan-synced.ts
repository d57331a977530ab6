/**
 * Decisions for items that have a merge-base row: compare local (L) and remote (R) with the base (S).
 * PURE. Moves are returned as pending moves; plan-moves.ts checks their targets once every item has decided
 * (a target may be freed by another item's trash or move in the same pass).
 *
 * Rules, in order: deferred -> nothing; gone on both sides -> forget; gone remotely -> trash locally unless
 * changed here (the edit wins: restore from the Box trash, else forget and upload as new); gone locally ->
 * trash on Box unless changed there (download again / forget and download the folder again); local type
 * change; moves (both moved: the Box location wins); then content (one side changed -> transfer; both changed
 * -> link on equal SHA-1, else a conflict copy of the local version).
 */
import type { LocalEntry, RelPath, RemoteId } from './model.js';
import type { ItemState } from './plan-index.js';
import { baseRowHolder, localParentExists, remoteParentId, type Candidate, type PlanContext } from './plan-context.js';
import { conflictCopyName } from './names.js';
import { basename, foldKey, joinPath, parentOf } from './paths.js';
import { conflictCopy, download, forget, kindWord, link, localTrash, remoteTrash, uploadVersion, writeWeblink } from './plan-ops.js';
import { localUnchanged } from './same-item.js';

export interface PendingMove {
  /** 'remote': move the Box item to where the local one went; 'local': move the local one to where Box has it. */
  readonly side: 'remote' | 'local';
  readonly item: ItemState;
  readonly to: RelPath;
  readonly reason: string;
}

export type SyncedDecision =
  | { readonly kind: 'none' }
  | { readonly kind: 'ops'; readonly candidates: readonly Candidate[] }
  | { readonly kind: 'move'; readonly move: PendingMove };

const none: SyncedDecision = { kind: 'none' };
const ops = (...candidates: Candidate[]): SyncedDecision => ({ kind: 'ops', candidates });

export function decideSynced(ctx: PlanContext, it: ItemState): SyncedDecision {
  const s = it.synced;
  const { isDeferred } = ctx.index;
  if (isDeferred(s.path) || (it.localPath && isDeferred(it.localPath)) || (it.remotePath && isDeferred(it.remotePath))) return none;
  if (it.local === null && it.remote === null) return ops(forget(ctx, s.path, `gone on both sides; forgetting the sync record`));
  if (s.kind === 'weblink') return decideWeblink(ctx, it);
  if (it.remote === null) return remoteGone(ctx, it);
  if (it.local === null) return localGone(ctx, it);
  if (it.localTypeChanged) return typeChanged(ctx, it);
  if (it.localPath !== s.path || it.remotePath !== s.path) return moved(ctx, it);
  return content(ctx, it);
}

function folderDirtyBelow(ctx: PlanContext, ...paths: (RelPath | null)[]): boolean {
  return paths.some((p) => p !== null && ctx.index.dirtyBelow.has(foldKey(p)));
}

function remoteGone(ctx: PlanContext, it: ItemState): SyncedDecision {
  const s = it.synced;
  const l = it.local!;
  const what = kindWord(s.kind);
  const localDirty =
    it.localChanged || it.localTypeChanged || l.path !== s.path || (s.kind === 'folder' && folderDirtyBelow(ctx, l.path, s.path));
  if (!localDirty) {
    if (!ctx.mayWriteLocal) return ops(forget(ctx, s.path, `removed from Box; upload-only keeps the local ${what} and uploads it again`));
    return ops(localTrash(ctx, l, `${what} was deleted on Box (or moved out of the synced folder); moving the local copy to the local trash`));
  }
  if (it.localTypeChanged) {
    return ops(forget(ctx, s.path, `removed from Box and replaced by a ${kindWord(l.kind)} here; forgetting the old record so the new one syncs as a new item`));
  }
  if (ctx.mayWriteRemote && ctx.index.snapshot.remoteTrashed.has(s.remoteId) && s.kind !== 'weblink') {
    const parentId = baseParentId(ctx, s.path);
    const parentPath = parentId === null ? null : parentId === ctx.index.snapshot.root.remoteId ? '' : ctx.index.remotePathOf.get(parentId)!;
    const occupied = parentPath !== null && ctx.index.remoteByKey.has(foldKey(joinPath(parentPath, basename(s.path))));
    if (parentId !== null && !occupied) {
      return ops({
        op: {
          kind: 'remote-restore',
          root: ctx.root,
          path: s.path,
          remoteId: s.remoteId,
          itemKind: s.kind,
          parentId,
          name: basename(s.path),
          reason: `${what} was trashed on Box but changed here; the local change wins: restoring it from the Box trash`,
        },
        paths: [s.path],
      });
    }
    // The parent folder is gone too: it decides first (restore or forget), this item follows next pass.
    if (parentId === null && parentOf(s.path) !== '' && ctx.index.snapshot.synced.has(parentOf(s.path) as RelPath)) return none;
  }
  return ops(forget(ctx, s.path, `${what} was deleted on Box but changed here; the local change wins: it will be uploaded as a new item`));
}

/** The Box folder that held the item when it was last in sync, if it is still under the root (wherever it is now). */
function baseParentId(ctx: PlanContext, path: RelPath): RemoteId | null {
  const parent = parentOf(path);
  if (parent === '') return ctx.index.snapshot.root.remoteId;
  const row = ctx.index.snapshot.synced.get(parent);
  if (row === undefined) return remoteParentId(ctx, path);
  const item = ctx.index.itemById.get(row.remoteId);
  return item && item.remote !== null && item.remote.kind === 'folder' ? item.remote.id : null;
}

function localGone(ctx: PlanContext, it: ItemState): SyncedDecision {
  const s = it.synced;
  const r = it.remote!;
  const rp = it.remotePath!;
  const what = kindWord(s.kind);
  const remoteDirty = it.remoteChanged || rp !== s.path || (s.kind === 'folder' && folderDirtyBelow(ctx, rp, s.path));
  if (!remoteDirty || !ctx.mayWriteLocal) {
    // Download-only never propagates a local deletion; it does not undo it either (see plan.ts).
    if (!ctx.mayWriteRemote) return none;
    const tail = remoteDirty ? '; upload-only mirrors that to Box (the changed Box version stays in the Box trash)' : '; moving it to the Box trash';
    return ops(remoteTrash(ctx, rp, r, `${what} was deleted here${tail}`));
  }
  if (s.kind === 'file' && rp !== s.path) {
    // Deleted here and moved on Box: drop the row so the Box file is downloaded afresh at its new place.
    return ops(forget(ctx, s.path, `${what} was deleted here but moved on Box; forgetting the record so it is downloaded again where Box has it`));
  }
  if (s.kind === 'file') {
    const occupants = ctx.index.localByKey.get(foldKey(rp)) ?? [];
    const stranger = occupants.find((o) => !ctx.index.localOwner.has(o.path));
    if (stranger !== undefined) return claimFromStranger(ctx, it, stranger, rp);
    if (occupants.length > 0 || !localParentExists(ctx, rp) || baseRowHolder(ctx, rp, r.id)) return none;
    return ops(download(ctx, rp, r, null, `${what} was deleted here but changed on Box; the Box change wins: downloading it again`));
  }
  return ops(forget(ctx, s.path, `folder was deleted here but has changes inside on Box; forgetting the record so it is downloaded again`));
}

/**
 * The Box item's place is taken here by an entry that belongs to nothing (created or moved there locally):
 * the same content is linked, anything else keeps both (the local one moves aside).
 */
function claimFromStranger(ctx: PlanContext, it: ItemState, stranger: LocalEntry, rp: RelPath): SyncedDecision {
  const r = it.remote!;
  if (baseRowHolder(ctx, stranger.path, r.id)) return none;
  if (stranger.kind === 'file' && stranger.sha1 !== null && stranger.sha1 === r.sha1) {
    return ops(link(ctx, stranger.path, r.id, `deleted here, but a file with the same content (same SHA-1) is now at its Box location; linking them`, it.synced.path));
  }
  if (stranger.kind !== 'file' && stranger.kind !== 'folder') return none;
  const to = conflictPath(ctx, stranger.path);
  return ops(conflictCopy(ctx, stranger, to, `its Box location "${rp}" is taken here by a different ${kindWord(stranger.kind)}; keeping both: the local one moves to "${basename(to)}"`));
}

function typeChanged(ctx: PlanContext, it: ItemState): SyncedDecision {
  const s = it.synced;
  const r = it.remote!;
  const rp = it.remotePath!;
  const now = kindWord(it.local!.kind);
  const remoteClean = !it.remoteChanged && rp === s.path && !(s.kind === 'folder' && folderDirtyBelow(ctx, rp));
  if (remoteClean) {
    if (!ctx.mayWriteRemote) return none;
    return ops(remoteTrash(ctx, rp, r, `the ${kindWord(s.kind)} was replaced by a ${now} here; moving the old Box ${kindWord(s.kind)} to the Box trash, the new ${now} follows`));
  }
  return ops(forget(ctx, s.path, `the ${kindWord(s.kind)} was replaced by a ${now} here while it changed on Box; forgetting the record so that both are kept`));
}

function moved(ctx: PlanContext, it: ItemState): SyncedDecision {
  const s = it.synced;
  const lp = it.localPath!;
  const rp = it.remotePath!;
  const what = kindWord(s.kind);
  const lMoved = lp !== s.path;
  const rMoved = rp !== s.path;
  if (lMoved && rMoved) {
    // Moved to the same place on both sides: only content can differ, decided at the new path (the base row
    // follows the Box id there when the outcome is recorded).
    if (lp === rp) return baseRowHolder(ctx, rp, s.remoteId) ? none : content(ctx, it, rp, `${what} was moved to the same place on both sides`);
    if (!ctx.mayWriteLocal) {
      return { kind: 'move', move: { side: 'remote', item: it, to: lp, reason: `${what} was moved on both sides; upload-only: the local location (${lp}) wins` } };
    }
    return {
      kind: 'move',
      move: { side: 'local', item: it, to: rp, reason: `${what} was moved on both sides (here to ${lp}, on Box to ${rp}); the Box location wins` },
    };
  }
  if (lMoved) {
    if (!ctx.mayWriteRemote) return none;
    return { kind: 'move', move: { side: 'remote', item: it, to: lp, reason: `${what} was moved here from ${s.path}; moving it on Box in one call, nothing is uploaded again` } };
  }
  if (!ctx.mayWriteLocal) return none;
  return { kind: 'move', move: { side: 'local', item: it, to: rp, reason: `${what} was moved on Box from ${s.path}; moving it here, nothing is downloaded again` } };
}

function content(ctx: PlanContext, it: ItemState, path: RelPath = it.synced.path, movedBoth?: string): SyncedDecision {
  const s = it.synced;
  const l = it.local!;
  const r = it.remote!;
  const pre = movedBoth === undefined ? '' : `${movedBoth}; `;
  // When moved on both sides the old base path is touched too (its row moves with the recorded outcome).
  const extra = (c: Candidate): Candidate => (path === s.path ? c : { ...c, paths: [...c.paths, s.path] });
  if (s.kind === 'folder' || (!it.localChanged && !it.remoteChanged)) {
    if (!it.baseStale && path === s.path) return none;
    return ops(link(ctx, path, s.remoteId, `${pre}content agrees on both sides; ${path === s.path ? 'refreshing' : 'recording'} the sync record`, s.path));
  }
  if (it.localChanged && !it.remoteChanged) {
    if (!ctx.mayWriteRemote) return none;
    return ops(extra(uploadVersion(ctx, path, r, l, `${pre}changed here since the last sync; uploading a new version`)));
  }
  if (!it.localChanged) {
    if (!ctx.mayWriteLocal) return none;
    return ops(extra(download(ctx, path, r, l, `${pre}changed on Box since the last sync; downloading the new version`)));
  }
  if (l.sha1 !== null && l.sha1 === r.sha1) {
    return ops(link(ctx, path, s.remoteId, `${pre}changed on both sides to the same content (same SHA-1); recording it without a transfer`, s.path));
  }
  if (!ctx.mayWriteLocal) {
    return ops(extra(uploadVersion(ctx, path, r, l, `${pre}changed on both sides; upload-only: the local version is uploaded over it (Box keeps the previous version)`)));
  }
  const to = conflictPath(ctx, path);
  return ops(
    extra(conflictCopy(ctx, l, to, `${pre}changed on both sides with different content; keeping both: the local version moves to "${basename(to)}" and the Box version takes the original name`)),
  );
}

/** A free conflict-copy path next to `path`. */
export function conflictPath(ctx: PlanContext, path: RelPath): RelPath {
  const parent = parentOf(path);
  const name = conflictCopyName(basename(path), ctx.nowMs, (c) => {
    const k = foldKey(joinPath(parent, c));
    return ctx.index.localByKey.has(k) || ctx.index.remoteByKey.has(k);
  });
  return joinPath(parent, name);
}

function decideWeblink(ctx: PlanContext, it: ItemState): SyncedDecision {
  const s = it.synced;
  if (it.remote === null) {
    const l = it.local!;
    // Its stat says whether the user touched the link file since it was written (see core/tree-effects.ts).
    const unchanged = l.kind === 'file' && localUnchanged(s, l);
    if (unchanged && ctx.mayWriteLocal) return ops(localTrash(ctx, l, `web link was deleted on Box; moving its link file to the local trash`));
    return ops(forget(ctx, s.path, `web link was deleted on Box; the link file was changed here, so it stays as an ordinary file`));
  }
  const r = it.remote;
  const rp = it.remotePath!;
  if (!ctx.mayWriteLocal) return none;
  if (it.local === null) {
    if (ctx.index.localByKey.has(foldKey(rp)) || !localParentExists(ctx, rp)) return none;
    return ops(writeWeblink(ctx, rp, r, null, `the link file of this Box web link is missing here; web links are download-only, so it is written again`));
  }
  if (rp !== s.path) return { kind: 'move', move: { side: 'local', item: it, to: rp, reason: `web link was renamed or moved on Box from ${s.path}; moving its link file here` } };
  if (it.remoteChanged) return ops(writeWeblink(ctx, rp, r, it.local, `the web link's target changed on Box; rewriting the link file`));
  return it.baseStale ? ops(link(ctx, s.path, s.remoteId, `web link unchanged on Box; refreshing the sync record of its link file`)) : none;
}
