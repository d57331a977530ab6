/**
 * Snapshot building from a real journal: whole roots, hinted subtrees with their ancestors, the planner's
 * partial-snapshot contract (inode-moved local entries, remote ancestors), ignore rules and deferred paths.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { asRelPath, asRemoteId, asRootId, type LocalEntry, type RemoteEntry, type SyncRoot, type SyncedEntry } from '../../src/core/model.js';
import { plan } from '../../src/core/plan.js';
import { buildSnapshot, buildSnapshotSliced } from '../../src/engine/snapshot.js';
import type { Journal } from '../../src/ports/journal.js';
import { tempJournal } from './support/journal.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

const root: SyncRoot = { id: asRootId('r1'), remoteId: asRemoteId('10'), localPath: '/x', direction: 'two-way', exclude: [] };

function remote(id: string, parent: string, name: string, kind: RemoteEntry['kind'] = 'file'): RemoteEntry {
  return {
    id: asRemoteId(id), kind, parentId: asRemoteId(parent), name, etag: '1', sequenceId: '1',
    sha1: kind === 'file' ? 'aa' : null, sizeBytes: 1, modifiedAtMs: 0, versionId: null, url: null, status: 'active',
  };
}
function local(path: string, inode: number, kind: LocalEntry['kind'] = 'file'): LocalEntry {
  return { path: asRelPath(path), kind, inode, sizeBytes: 1, mtimeMs: 0, sha1: kind === 'file' ? 'aa' : null };
}
function synced(path: string, id: string, inode: number, kind: SyncedEntry['kind'] = 'file'): SyncedEntry {
  return { path: asRelPath(path), remoteId: asRemoteId(id), kind, etag: '1', sha1: kind === 'file' ? 'aa' : null, versionId: null, sizeBytes: 1, inode, mtimeMs: 0, url: null };
}

/** a/ (folder 11) with a/x.txt (12); b/ (13) with b/y.txt (14) and b/deep/ (15) with b/deep/z.txt (16); node_modules/m.js (17, 18). */
async function seeded(): Promise<Journal> {
  const j = await tempJournal();
  cleanups.push(j.cleanup);
  const { journal } = j;
  journal.transaction(() => {
    journal.putRemote({ ...remote('10', '0', 'Sync', 'folder') });
    const tree: [string, string, string, string, RemoteEntry['kind'], number][] = [
      ['11', '10', 'a', 'a', 'folder', 1],
      ['12', '11', 'x.txt', 'a/x.txt', 'file', 2],
      ['13', '10', 'b', 'b', 'folder', 3],
      ['14', '13', 'y.txt', 'b/y.txt', 'file', 4],
      ['15', '13', 'deep', 'b/deep', 'folder', 5],
      ['16', '15', 'z.txt', 'b/deep/z.txt', 'file', 6],
      ['17', '10', 'node_modules', 'node_modules', 'folder', 7],
      ['18', '17', 'm.js', 'node_modules/m.js', 'file', 8],
    ];
    for (const [id, parent, name, path, kind, inode] of tree) {
      journal.putRemote(remote(id, parent, name, kind));
      journal.putLocal(root.id, local(path, inode, kind === 'folder' ? 'folder' : 'file'));
      journal.putSynced(root.id, synced(path, id, inode, kind));
    }
  });
  return journal;
}

const noIgnore = (): boolean => false;

describe('buildSnapshot', () => {
  it('full scope: the whole root on all three trees, minus ignored paths', async () => {
    const journal = await seeded();
    const isIgnored = (p: string): boolean => p === 'node_modules';
    const s = buildSnapshot({ journal, root, isIgnored, nowMs: 0, scope: { kind: 'full' } });
    expect([...s.local.keys()].sort()).toEqual(['a', 'a/x.txt', 'b', 'b/deep', 'b/deep/z.txt', 'b/y.txt']);
    expect([...s.synced.keys()].sort()).toEqual(['a', 'a/x.txt', 'b', 'b/deep', 'b/deep/z.txt', 'b/y.txt']);
    expect([...s.remote.keys()].sort()).toEqual(['10', '11', '12', '13', '14', '15', '16']);
  });

  it('sliced: the same snapshot as the synchronous build, with a turn offered at every step', async () => {
    const journal = await seeded();
    for (const scope of [{ kind: 'full' as const }, { kind: 'hinted' as const, localPaths: [asRelPath('a/x.txt'), asRelPath('b/y.txt'), asRelPath('b/deep')], remoteIds: [], closeMoves: true }]) {
      const args = { journal, root, isIgnored: noIgnore, nowMs: 0, scope };
      let turns = 0;
      const sliced = await buildSnapshotSliced(args, async () => void (turns += 1));
      expect(sliced).toEqual(buildSnapshot(args));
      // One step per row read for the full scope, per base and per synced row for a hinted one.
      expect(turns).toBeGreaterThanOrEqual(scope.kind === 'full' ? 6 : 3);
    }
  });

  it('hinted scope: the hinted subtree and its ancestors only', async () => {
    const journal = await seeded();
    const s = buildSnapshot({ journal, root, isIgnored: noIgnore, nowMs: 0, scope: { kind: 'hinted', localPaths: [asRelPath('b/deep')], remoteIds: [] } });
    expect([...s.local.keys()].sort()).toEqual(['b', 'b/deep', 'b/deep/z.txt']);
    expect([...s.synced.keys()].sort()).toEqual(['b', 'b/deep', 'b/deep/z.txt']);
    expect([...s.remote.keys()].sort()).toEqual(['10', '13', '15', '16']);
  });

  it('hinted scope: a local entry carried away by a move comes along (found by inode), as do remote ancestors', async () => {
    const journal = await seeded();
    journal.transaction(() => {
      journal.moveLocalSubtree(root.id, asRelPath('a/x.txt'), asRelPath('b/deep/x-moved.txt'));
    });
    const s = buildSnapshot({ journal, root, isIgnored: noIgnore, nowMs: 0, scope: { kind: 'hinted', localPaths: [asRelPath('a/x.txt')], remoteIds: [] } });
    expect(s.synced.has(asRelPath('a/x.txt'))).toBe(true);
    expect(s.local.get(asRelPath('b/deep/x-moved.txt'))?.inode).toBe(2);
    expect([...s.remote.keys()].sort()).toEqual(['10', '11', '12']);
  });

  it('hinted remote ids bring both the old synced path and the new remote path', async () => {
    const journal = await seeded();
    journal.putRemote(remote('16', '11', 'z-renamed.txt'));
    const s = buildSnapshot({ journal, root, isIgnored: noIgnore, nowMs: 0, scope: { kind: 'hinted', localPaths: [], remoteIds: [asRemoteId('16')] } });
    expect(s.synced.has(asRelPath('b/deep/z.txt'))).toBe(true);
    expect(s.local.has(asRelPath('b/deep/z.txt'))).toBe(true);
    expect(s.remote.get(asRemoteId('16'))?.parentId).toBe('11');
    expect(s.remote.has(asRemoteId('11'))).toBe(true);
  });

  it('marks trashed remote ids and defers paths whose backoff has not elapsed', async () => {
    const journal = await seeded();
    journal.deleteRemote(asRemoteId('14'));
    journal.markTrashed(asRemoteId('14'), true);
    journal.recordFailure({ root: root.id, path: asRelPath('a/x.txt'), code: 'server_error', message: 'm', attempts: 1, nextRetryAtMs: 5000, disposition: 'retry' });
    journal.recordFailure({ root: root.id, path: asRelPath('b/y.txt'), code: 'x', message: 'm', attempts: 1, nextRetryAtMs: 1000, disposition: 'retry' });
    const s = buildSnapshot({ journal, root, isIgnored: noIgnore, nowMs: 2000, scope: { kind: 'full' } });
    expect([...s.remoteTrashed]).toEqual(['14']);
    expect([...s.deferred]).toEqual(['a/x.txt']);
  });

  // A planning window (closeMoves) that reaches a folder only as the far end of a move, or as an ancestor of one,
  // must take that folder whole when it is gone or moved on either side: the planner deletes a folder as a whole,
  // and would otherwise delete changes below it that it was not given. Found by the windowed planner property test.
  it('window: a folder deleted here, reached only through a move out of it, comes whole: the Box edit below it is kept', async () => {
    const journal = await seeded();
    journal.transaction(() => {
      journal.moveLocalSubtree(root.id, asRelPath('b/y.txt'), asRelPath('c.txt'));
      journal.deleteLocalSubtree(root.id, asRelPath('b'));
      journal.putRemote({ ...remote('16', '15', 'z.txt'), etag: '2', sha1: 'bb' });
    });
    const s = buildSnapshot({ journal, root, isIgnored: noIgnore, nowMs: 0, scope: { kind: 'hinted', localPaths: [asRelPath('c.txt')], remoteIds: [], closeMoves: true } });
    expect([...s.synced.keys()].sort()).toEqual(['b', 'b/deep', 'b/deep/z.txt', 'b/y.txt']);
    expect(s.remote.get(asRemoteId('16'))?.sha1).toBe('bb');
    const ops = plan(s, { nowMs: 0 }).ops.map((o) => `${o.kind} ${'from' in o ? `${o.from} -> ${o.to}` : o.path}`);
    // Not `remote-trash b`. The move out of `b` is planned by the next pass, once `b` is settled.
    expect(ops).toEqual(['forget b']);
  });

  it('window: a folder trashed on Box, reached only through a Box move out of it, comes whole: the local edit below it is kept', async () => {
    const journal = await seeded();
    journal.transaction(() => {
      journal.putRemote(remote('14', '10', 'c.txt'));
      for (const id of ['16', '15', '13']) journal.deleteRemote(asRemoteId(id));
      journal.markTrashed(asRemoteId('13'), true);
      journal.putLocal(root.id, { ...local('b/deep/z.txt', 6), sha1: 'cc', mtimeMs: 5 });
    });
    const s = buildSnapshot({ journal, root, isIgnored: noIgnore, nowMs: 0, scope: { kind: 'hinted', localPaths: [asRelPath('c.txt')], remoteIds: [], closeMoves: true } });
    expect([...s.local.keys()].sort()).toEqual(['b', 'b/deep', 'b/deep/z.txt', 'b/y.txt']);
    const ops = plan(s, { nowMs: 0 }).ops.map((o) => `${o.kind} ${'from' in o ? `${o.from} -> ${o.to}` : o.path}`);
    // Not `local-trash b`. The move out of `b` is planned by the next pass, once `b` is back.
    expect(ops).toEqual(['remote-restore b']);
  });

  // Found by the windowed planner property test (seed 583125438): a window follows a chain of moves MAX_MOVE_ROUNDS
  // far ends deep. The move at the end of the chain went onto a name whose occupant the window was not shown.
  it('window: a chain of Box moves longer than a window follows: its last far end is deferred, no move lands on an occupant not shown', async () => {
    const journal = await seeded();
    const names = ['n0', 'n1', 'n2', 'n3', 'n4', 'n5'];
    journal.transaction(() => {
      names.forEach((n, i) => {
        journal.putRemote(remote(String(20 + i), '10', n));
        journal.putLocal(root.id, local(n, 20 + i));
        journal.putSynced(root.id, synced(n, String(20 + i), 20 + i));
      });
      // On Box each item took the next one's name; the last one went to the trash. Nothing changed here.
      journal.deleteRemote(asRemoteId('25'));
      journal.markTrashed(asRemoteId('25'), true);
      for (let i = 4; i >= 0; i--) journal.putRemote(remote(String(20 + i), '10', names[i + 1]!));
    });
    const scope = { kind: 'hinted' as const, localPaths: [asRelPath('n1')], remoteIds: [], closeMoves: true };
    const s = buildSnapshot({ journal, root, isIgnored: noIgnore, nowMs: 0, scope });
    expect([...s.synced.keys()].sort()).toEqual(['n0', 'n1', 'n2', 'n3', 'n4']);
    expect([...s.deferred]).toEqual(['n5']);
    const ops = plan(s, { nowMs: 0 }).ops;
    expect(ops.some((o) => 'to' in o && o.to === 'n5')).toBe(false);
    // The window that holds n5 sees both its occupant and the move onto it.
    const end = buildSnapshot({ journal, root, isIgnored: noIgnore, nowMs: 0, scope: { ...scope, localPaths: [asRelPath('n5')] } });
    expect(end.deferred.has(asRelPath('n5'))).toBe(false);
    expect(end.local.has(asRelPath('n5')) && end.synced.has(asRelPath('n4'))).toBe(true);
  });
});
