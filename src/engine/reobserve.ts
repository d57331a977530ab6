/**
 * Re-observation after a `replan` outcome (412, 409, a guard that no longer matched, a 404): look again at
 * exactly what the operation touched, on both sides, so the next plan starts from the truth. Never overwrite.
 * Returns the local paths found beside a gone one that the journal did not know (a rename's new name, a
 * sibling that took the name in another case): a hinted pass must plan them too.
 */
import type { RelPath, RemoteId, SyncRoot } from '../core/model.js';
import { assertNever, pathsTouched, type Operation } from '../core/operations.js';
import type { Journal } from '../ports/journal.js';
import type { LocalFs } from '../ports/local-fs.js';
import type { RemoteStore } from '../ports/remote-store.js';
import type { Logger } from 'pino';
import { listSubtree } from './observe-remote.js';
import { restatLocal, type IsIgnored } from './observe-local.js';

type RemoteKind = 'file' | 'folder' | 'weblink';

interface RemoteTouched {
  /** The Box item to fetch again. */
  readonly remote: { id: RemoteId; kind: RemoteKind } | null;
  /** A folder to list again for what appeared in it (a name an upload or a new folder wanted). */
  readonly parentId: RemoteId | null;
}

function remoteTouched(op: Operation, journal: Journal): RemoteTouched {
  const kindOf = (id: RemoteId, fallback: RemoteKind): RemoteKind => journal.getRemote(id)?.kind ?? fallback;
  switch (op.kind) {
    case 'download':
    case 'upload-version':
      return { remote: { id: op.remoteId, kind: 'file' }, parentId: null };
    case 'upload':
    case 'create-remote-folder':
      return { remote: null, parentId: op.parentId };
    case 'create-local-folder':
      return { remote: { id: op.remoteId, kind: 'folder' }, parentId: null };
    case 'remote-move':
    case 'remote-restore':
      return { remote: { id: op.remoteId, kind: op.itemKind }, parentId: op.parentId };
    case 'local-move':
    case 'link':
      return { remote: { id: op.remoteId, kind: kindOf(op.remoteId, 'file') }, parentId: null };
    case 'remote-trash':
      return { remote: { id: op.remoteId, kind: op.itemKind }, parentId: null };
    case 'write-weblink':
      return { remote: { id: op.remoteId, kind: 'weblink' }, parentId: null };
    case 'local-trash':
    case 'conflict-copy':
    case 'forget':
    case 'report':
      return { remote: null, parentId: null };
    default:
      return assertNever(op);
  }
}

export async function reobserve(args: {
  op: Operation;
  journal: Journal;
  remote: RemoteStore;
  root: SyncRoot;
  fs: LocalFs;
  isIgnored: IsIgnored;
  logger: Logger;
  signal?: AbortSignal;
}): Promise<RelPath[]> {
  const { op, journal, remote } = args;
  const t = remoteTouched(op, journal);
  const found = await restatLocal({ journal, root: args.root, fs: args.fs, isIgnored: args.isIgnored }, pathsTouched(op), args.signal);
  if (t.remote) {
    const entry = await remote.getItem(t.remote.id, t.remote.kind);
    const id = t.remote.id;
    journal.transaction(() => {
      if (entry) journal.putRemote(entry);
      else {
        journal.deleteRemoteSubtree(id);
        journal.deleteRemote(id);
      }
    });
  }
  if (t.parentId) await listSubtree({ ...args, roots: [args.root] }, t.parentId, args.signal, { onlyNewFolders: true });
  return found;
}
