/**
 * Committing an operation's outcome: the journal rows each successful operation changes, written by the
 * reconciler inside ONE transaction per outcome (so a crash leaves either the old or the new state, and the
 * next plan, rebuilt from the trees, picks up from there).
 *
 * The merge base (synced) records what both sides agreed on after the operation: remote etag, SHA-1 and version
 * from the Box answer, inode and mtime from the local stat. Moves rename whole subtrees in one statement each,
 * so a folder rename costs one row update per tree, not one per descendant.
 */
import type { LocalEntry, RelPath, RemoteEntry, RemoteId, RootId, SyncedEntry } from '../core/model.js';
import { SyncError } from '../core/errors.js';
import { assertNever, type Operation } from '../core/operations.js';
import type { Journal } from '../ports/journal.js';
import type { OpResult } from './executor.js';

function missing(what: string, path: RelPath): SyncError {
  return new SyncError({ code: 'journal_row_missing', disposition: 'replan', message: `${what} for ${path} is no longer known; will look again` });
}

function syncedFrom(path: RelPath, r: RemoteEntry, l: LocalEntry | undefined): SyncedEntry {
  return {
    path,
    remoteId: r.id,
    kind: r.kind,
    etag: r.etag,
    sha1: r.kind === 'file' ? r.sha1 : null,
    versionId: r.versionId,
    sizeBytes: r.kind === 'file' ? r.sizeBytes : 0,
    inode: l?.inode ?? 0,
    mtimeMs: l?.mtimeMs ?? 0,
    url: r.url,
  };
}

/** After a move, the merge base takes the remote etag only when the content it agreed on is still the content. */
function rebase(s: SyncedEntry, r: RemoteEntry | undefined, l: LocalEntry | undefined): SyncedEntry {
  const sameContent = r !== undefined && (r.kind !== 'file' || r.sha1 === s.sha1);
  return {
    ...s,
    ...(sameContent ? { etag: r.etag, versionId: r.versionId } : {}),
    ...(l ? { inode: l.inode, mtimeMs: l.mtimeMs } : {}),
  };
}

/** A rename does not change content: keep the SHA-1 the moved row already had rather than hashing again. */
function keepHash(journal: Journal, root: RootId, moved: LocalEntry): LocalEntry {
  if (moved.sha1 !== null || moved.kind !== 'file') return moved;
  const before = journal.getLocal(root, moved.path);
  return before && before.sizeBytes === moved.sizeBytes && before.mtimeMs === moved.mtimeMs ? { ...moved, sha1: before.sha1 } : moved;
}

/**
 * The merge base follows the Box id, not a path: when an item's base row is somewhere else than where the
 * operation leaves it (moved on both sides, or moved aside by an earlier pass), move that row and the rows below
 * it to `to` first. Moving by the op's `from` path instead would carry another item's rows.
 */
function relocateBase(journal: Journal, root: RootId, remoteId: RemoteId, to: RelPath): void {
  const s = journal.syncedByRemoteId(root, remoteId);
  if (s && s.path !== to) journal.moveSyncedSubtree(root, s.path, to);
}

/** Apply one successful outcome to the journal. Call inside journal.transaction. */
export function commitOutcome(journal: Journal, root: RootId, op: Operation, result: OpResult): void {
  switch (op.kind) {
    case 'download': {
      const local = result.local;
      if (!local) throw missing('the downloaded file', op.path);
      journal.putLocal(root, local);
      relocateBase(journal, root, op.remoteId, op.path);
      journal.putSynced(root, {
        path: op.path,
        remoteId: op.remoteId,
        kind: 'file',
        etag: op.expect.etag,
        sha1: local.sha1 ?? op.expect.sha1,
        versionId: op.expect.versionId,
        sizeBytes: local.sizeBytes,
        inode: local.inode,
        mtimeMs: local.mtimeMs,
        url: null,
      });
      return;
    }
    case 'upload':
    case 'upload-version':
    case 'create-remote-folder': {
      const r = result.remote;
      if (!r) throw missing('the Box answer', op.path);
      journal.putRemote(r);
      journal.markTrashed(r.id, false);
      if (result.local) journal.putLocal(root, result.local);
      relocateBase(journal, root, r.id, op.path);
      journal.putSynced(root, syncedFrom(op.path, r, result.local ?? journal.getLocal(root, op.path)));
      return;
    }
    case 'create-local-folder': {
      const r = journal.getRemote(op.remoteId);
      if (!r) throw missing('the Box folder', op.path);
      if (result.local) journal.putLocal(root, result.local);
      relocateBase(journal, root, op.remoteId, op.path);
      journal.putSynced(root, syncedFrom(op.path, r, result.local));
      return;
    }
    case 'remote-move': {
      const r = result.remote;
      if (!r) throw missing('the Box answer', op.to);
      journal.putRemote(r);
      relocateBase(journal, root, op.remoteId, op.to);
      const s = journal.getSynced(root, op.to);
      if (s) journal.putSynced(root, rebase(s, r, journal.getLocal(root, op.to)));
      return;
    }
    case 'local-move': {
      if (op.from !== op.to) journal.moveLocalSubtree(root, op.from, op.to);
      relocateBase(journal, root, op.remoteId, op.to);
      if (result.local) journal.putLocal(root, keepHash(journal, root, result.local));
      const s = journal.getSynced(root, op.to);
      if (s) journal.putSynced(root, rebase(s, journal.getRemote(op.remoteId), result.local));
      return;
    }
    case 'remote-trash':
      journal.deleteRemoteSubtree(op.remoteId);
      journal.deleteRemote(op.remoteId);
      journal.markTrashed(op.remoteId, true);
      journal.deleteSyncedSubtree(root, op.path);
      return;
    case 'local-trash':
      journal.deleteLocalSubtree(root, op.path);
      journal.deleteSyncedSubtree(root, op.path);
      return;
    case 'remote-restore': {
      const r = result.remote;
      if (!r) throw missing('the Box answer', op.path);
      journal.putRemote(r);
      journal.markTrashed(r.id, false);
      const s = journal.getSynced(root, op.path);
      if (s && s.remoteId === r.id) journal.putSynced(root, rebase(s, r, undefined));
      return;
    }
    case 'conflict-copy':
      // The local version now lives under the copy's name (a new local file, uploaded by the next pass); with
      // the merge base gone, the original name reads as "new on Box" and the remote version is downloaded.
      journal.moveLocalSubtree(root, op.path, op.to);
      if (result.local) journal.putLocal(root, keepHash(journal, root, result.local));
      journal.deleteSyncedSubtree(root, op.path);
      return;
    case 'link': {
      const r = journal.getRemote(op.remoteId);
      const l = journal.getLocal(root, op.path);
      if (!r || !l) throw missing('one side', op.path);
      relocateBase(journal, root, op.remoteId, op.path);
      journal.putSynced(root, syncedFrom(op.path, r, l));
      return;
    }
    case 'forget':
      journal.deleteSyncedSubtree(root, op.path);
      return;
    case 'write-weblink': {
      const r = journal.getRemote(op.remoteId);
      if (!r) throw missing('the Box web link', op.path);
      if (result.local) journal.putLocal(root, result.local);
      relocateBase(journal, root, op.remoteId, op.path);
      journal.putSynced(root, { ...syncedFrom(op.path, r, result.local), kind: 'weblink', url: op.url, sizeBytes: result.local?.sizeBytes ?? 0 });
      return;
    }
    case 'report':
      return;
    default:
      assertNever(op);
  }
}
