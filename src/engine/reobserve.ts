/**
 * Re-observation after a `replan` outcome (412, 409, a guard that no longer matched, a 404): look again at
 * exactly what the operation touched, on both sides, so the next plan starts from the truth. Never overwrite.
 * Returns the local paths found beside a gone one that the journal did not know (a rename's new name, a
 * sibling that took the name in another case): a hinted pass must plan them too.
 */
import type { RelPath, RemoteId, SyncRoot } from '../core/model.js';
import { assertNever, type Operation } from '../core/operations.js';
import type { Journal } from '../ports/journal.js';
import type { LocalFs } from '../ports/local-fs.js';
import type { RemoteStore } from '../ports/remote-store.js';
import type { Logger } from 'pino';
import { listSubtree } from './observe-remote.js';
import { restatLocal, type IsIgnored } from './observe-local.js';

type RemoteKind = 'file' | 'folder' | 'weblink';

function touched(op: Operation, journal: Journal): { paths: RelPath[]; remote: { id: RemoteId; kind: RemoteKind } | null; parentId: RemoteId | null } {
  const kindOf = (id: RemoteId, fallback: RemoteKind): RemoteKind => journal.getRemote(id)?.kind ?? fallback;
  switch (op.kind) {
    case 'download':
      return { paths: [op.path], remote: { id: op.remoteId, kind: 'file' }, parentId: null };
    case 'upload':
      return { paths: [op.path], remote: null, parentId: op.parentId };
    case 'upload-version':
      return { paths: [op.path], remote: { id: op.remoteId, kind: 'file' }, parentId: null };
    case 'create-remote-folder':
      return { paths: [op.path], remote: null, parentId: op.parentId };
    case 'create-local-folder':
      return { paths: [op.path], remote: { id: op.remoteId, kind: 'folder' }, parentId: null };
    case 'remote-move':
      return { paths: [op.from, op.to], remote: { id: op.remoteId, kind: op.itemKind }, parentId: op.parentId };
    case 'local-move':
      return { paths: [op.from, op.to], remote: { id: op.remoteId, kind: kindOf(op.remoteId, 'file') }, parentId: null };
    case 'remote-trash':
      return { paths: [op.path], remote: { id: op.remoteId, kind: op.itemKind }, parentId: null };
    case 'local-trash':
      return { paths: [op.path], remote: null, parentId: null };
    case 'remote-restore':
      return { paths: [op.path], remote: { id: op.remoteId, kind: op.itemKind }, parentId: op.parentId };
    case 'conflict-copy':
      return { paths: [op.path, op.to], remote: null, parentId: null };
    case 'link':
      return { paths: [op.path], remote: { id: op.remoteId, kind: kindOf(op.remoteId, 'file') }, parentId: null };
    case 'forget':
    case 'report':
      return { paths: [op.path], remote: null, parentId: null };
    case 'write-weblink':
      return { paths: [op.path], remote: { id: op.remoteId, kind: 'weblink' }, parentId: null };
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
  const t = touched(op, journal);
  const found = await restatLocal({ journal, root: args.root, fs: args.fs, isIgnored: args.isIgnored }, t.paths, args.signal);
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
