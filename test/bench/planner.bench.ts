/**
 * Planner scale: plan() over synthetic roots of growing size (folders of 100 files, 1 % of files edited on
 * each side, one folder renamed locally, 1 % new files on Box). Prints wall time per plan and ops planned.
 */
import { asRelPath, asRemoteId, asRootId, type LocalEntry, type RelPath, type RemoteEntry, type RemoteId, type Snapshot, type SyncedEntry } from '../../src/core/model.js';
import { plan } from '../../src/core/plan.js';

function build(files: number): Snapshot {
  const rootId = asRemoteId('0');
  const remote = new Map<RemoteId, RemoteEntry>();
  const local = new Map<RelPath, LocalEntry>();
  const synced = new Map<RelPath, SyncedEntry>();
  let next = 1;
  const folders = Math.ceil(files / 100);
  const put = (path: string, kind: 'file' | 'folder', parentId: RemoteId, sha1: string | null): RemoteId => {
    const id = asRemoteId(String(next++));
    const rp = asRelPath(path);
    const name = path.slice(path.lastIndexOf('/') + 1);
    remote.set(id, { id, kind, parentId, name, etag: '1', sequenceId: '1', sha1, sizeBytes: 10, modifiedAtMs: 1, versionId: null, url: null, status: 'active' });
    local.set(rp, { path: rp, kind, inode: next, sizeBytes: 10, mtimeMs: 1, sha1: null });
    synced.set(rp, { path: rp, remoteId: id, kind, etag: '1', sha1, versionId: null, sizeBytes: 10, inode: next, mtimeMs: 1, url: null });
    return id;
  };
  for (let d = 0; d < folders; d++) {
    const fid = put(`dir${d}`, 'folder', rootId, null);
    for (let f = 0; f < 100 && d * 100 + f < files; f++) {
      const path = `dir${d}/file${f}.bin`;
      const id = put(path, 'file', fid, `sha-${d}-${f}`);
      if (f === 1) local.set(asRelPath(path), { ...local.get(asRelPath(path))!, mtimeMs: 2, sha1: 'edited' });
      if (f === 2) remote.set(id, { ...remote.get(id)!, etag: '2', sha1: 'remote-edit' });
      if (f === 3) remote.set(asRemoteId(`n${d}`), { ...remote.get(id)!, id: asRemoteId(`n${d}`), name: 'new.bin' });
    }
  }
  // One folder renamed locally: its subtree moves to a new path with the same inodes.
  for (const [path, l] of [...local]) {
    if (path === 'dir0' || path.startsWith('dir0/')) {
      local.delete(path);
      const np = asRelPath(`renamed${path.slice(4)}`);
      local.set(np, { ...l, path: np });
    }
  }
  const root = { id: asRootId('bench'), remoteId: rootId, localPath: '/bench', direction: 'two-way' as const, exclude: [] };
  return { root, remote, local, synced, remoteTrashed: new Set(), deferred: new Set() };
}

export async function run(): Promise<void> {
  for (const files of [10_000, 100_000, 300_000]) {
    const snapshot = build(files);
    const times: number[] = [];
    let ops = 0;
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      ops = plan(snapshot, { nowMs: 0 }).ops.length;
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    const entries = snapshot.synced.size;
    console.log(`plan: ${entries} entries -> ${ops} ops, median ${times[1]!.toFixed(0)} ms (${((times[1]! * 1000) / entries).toFixed(1)} µs/entry)`);
  }
}
