import { afterEach, describe, expect, it } from 'vitest';
import { asRelPath, asRemoteId, asRootId, type SyncRoot } from '../../src/core/model.js';
import { silentLogger } from '../../src/logger.js';
import { observeRemote, type RemoteObserverDeps } from '../../src/engine/observe-remote.js';
import { remotePathOf } from '../../src/engine/remote-tree.js';
import { FakeRemoteStore } from '../support/fake-remote-store.js';
import { FakeChanges } from './support/fake-changes.js';
import { tempJournal } from './support/journal.js';
import type { Journal } from '../../src/ports/journal.js';
import { remoteError } from '../../src/remote/box/error-codes.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function setup(pageSize = 2) {
  const j = await tempJournal();
  cleanups.push(j.cleanup);
  const store = new FakeRemoteStore({ pageSize });
  const top = store.seedFolder(asRemoteId('0'), 'Sync');
  const root: SyncRoot = { id: asRootId('r1'), remoteId: top.id, localPath: '/nonexistent', direction: 'two-way', exclude: [] };
  const changes = new FakeChanges(store);
  const deps: RemoteObserverDeps = { journal: j.journal, remote: store, changes, roots: [root], streamType: 'changes', logger: silentLogger };
  return { journal: j.journal, store, root, changes, deps, top };
}

function pathsUnder(journal: Journal, root: SyncRoot): string[] {
  const out: string[] = [];
  const walk = (id: ReturnType<typeof asRemoteId>): void => {
    for (const c of journal.remoteChildren(id)) {
      out.push(String(remotePathOf(journal, root, c.id)));
      if (c.kind === 'folder') walk(c.id);
    }
  };
  walk(root.remoteId);
  return out.sort();
}

describe('observeRemote', () => {
  it('first run: takes the stream position before listing, lists every page, stores the cursor after', async () => {
    const { journal, store, root, changes, deps, top } = await setup();
    const docs = store.seedFolder(top.id, 'docs');
    for (const n of ['a.txt', 'b.txt', 'c.txt']) store.seedFile(docs.id, n, n);
    store.seedFile(top.id, 'top.txt', 'x');
    store.seedFile(asRemoteId('0'), 'outside.txt', 'not ours');
    const obs = await observeRemote(deps, { full: false, extraIds: [] });
    expect(obs.full).toBe(true);
    expect(changes.calls[0]).toEqual({ method: 'now' });
    const firstList = store.calls.findIndex((c) => c.method === 'listFolder');
    expect(firstList).toBeGreaterThanOrEqual(0);
    expect(pathsUnder(journal, root)).toEqual(['docs', 'docs/a.txt', 'docs/b.txt', 'docs/c.txt', 'top.txt']);
    expect(journal.getCursor('events:changes')).toBe('0');
  });

  it('later runs: applies hinted edits, moves, trashes and new folders, and advances the cursor', async () => {
    const { journal, store, root, deps, top } = await setup();
    const docs = store.seedFolder(top.id, 'docs');
    const a = store.seedFile(docs.id, 'a.txt', 'a');
    const b = store.seedFile(top.id, 'b.txt', 'b');
    await observeRemote(deps, { full: false, extraIds: [] });
    store.editRemotely(a.id, 'a2');
    await store.move({ id: docs.id, kind: 'folder', name: 'papers' });
    await store.trash(b.id, 'file');
    const fresh = store.seedFolder(top.id, 'fresh');
    store.seedFile(fresh.id, 'inside.txt', 'i');
    const calls = store.calls.length;
    const obs = await observeRemote(deps, { full: false, extraIds: [] });
    expect(obs.full).toBe(false);
    expect(store.calls.slice(calls).filter((c) => c.method === 'listFolder')).toHaveLength(1);
    expect(pathsUnder(journal, root)).toEqual(['fresh', 'fresh/inside.txt', 'papers', 'papers/a.txt']);
    expect(journal.getRemote(a.id)?.sha1).toBe(store.allEntries().find((e) => e.id === a.id)?.sha1);
    expect(journal.isTrashed(b.id)).toBe(true);
    expect(journal.getCursor('events:changes')).toBe('1');
  });

  it("a stream with no cursor of its own catches up from the 'changes' cursor, then keeps the position taken before", async () => {
    const { journal, store, deps, top, changes } = await setup();
    const a = store.seedFile(top.id, 'a.txt', 'a');
    await observeRemote(deps, { full: false, extraIds: [] });
    expect(journal.getCursor('events:changes')).toBe('0');
    store.editRemotely(a.id, 'a2');
    const fresh = store.seedFolder(top.id, 'fresh');
    store.seedFile(fresh.id, 'inside.txt', 'i');
    // The daemon's position on its own stream, taken before its first pass.
    const since = await changes.now('sync');
    const calls = store.calls.length;
    const obs = await observeRemote({ ...deps, streamType: 'sync' }, { full: false, extraIds: [], since });
    expect(obs.full).toBe(false);
    // One listing: the new folder the events named; not the root.
    expect(store.calls.slice(calls).filter((c) => c.method === 'listFolder')).toHaveLength(1);
    expect(journal.getRemote(a.id)?.sha1).toBe(store.allEntries().find((e) => e.id === a.id)?.sha1);
    expect(journal.remoteChildren(fresh.id).map((e) => e.name)).toEqual(['inside.txt']);
    expect(changes.calls.filter((c) => c.method === 'fetch').map((c) => c.position)).toEqual(['0']);
    expect(journal.getCursor('events:sync')).toBe(since);
    expect(journal.getCursor('events:changes')).not.toBe('0');
  });

  it('a catch-up from the other stream that could not list a new folder stores no cursor of its own', async () => {
    const { journal, store, deps, top, changes } = await setup();
    await observeRemote(deps, { full: false, extraIds: [] });
    const fresh = store.seedFolder(top.id, 'fresh');
    store.seedFile(fresh.id, 'inside.txt', 'i');
    store.failNext('listFolder', remoteError('server_error', 'Box answered 500'));
    await observeRemote({ ...deps, streamType: 'sync' }, { full: false, extraIds: [], since: await changes.now('sync') });
    expect(journal.getCursor('events:sync')).toBeUndefined();
    expect(journal.getCursor('events:changes')).toBe('0');
    // The next pass reads the other stream again from where it was, and lists the folder.
    await observeRemote({ ...deps, streamType: 'sync' }, { full: false, extraIds: [], since: await changes.now('sync') });
    expect(journal.remoteChildren(fresh.id).map((e) => e.name)).toEqual(['inside.txt']);
    expect(journal.getCursor('events:sync')).toBeDefined();
  });

  it('a change made during the first listing replays on the next run (position taken before the listing)', async () => {
    const { journal, store, deps, top, changes } = await setup();
    const early = store.seedFile(top.id, 'early.txt', 'v1');
    const sub = store.seedFolder(top.id, 'sub');
    store.seedFile(sub.id, 's.txt', 's');
    const list = store.listFolder.bind(store);
    store.listFolder = async function* (id) {
      // While the subfolder is listed, someone edits a file whose folder was already listed.
      if (id === sub.id) store.editRemotely(early.id, 'v2');
      yield* list(id);
    };
    await observeRemote(deps, { full: false, extraIds: [] });
    const v2 = store.allEntries().find((e) => e.id === early.id)!.sha1;
    expect(journal.getRemote(early.id)?.sha1).not.toBe(v2);
    await observeRemote(deps, { full: false, extraIds: [] });
    expect(changes.calls.map((c) => c.method)).toEqual(['now', 'fetch']);
    expect(journal.getRemote(early.id)?.sha1).toBe(v2);
  });

  it('does not fetch items outside the roots, and takes back an item restored from the trash', async () => {
    const { journal, store, root, deps, top } = await setup();
    const f = store.seedFile(top.id, 'f.txt', 'f');
    await observeRemote(deps, { full: false, extraIds: [] });
    await store.trash(f.id, 'file');
    await observeRemote(deps, { full: false, extraIds: [] });
    expect(journal.isTrashed(f.id)).toBe(true);
    const elsewhere = store.seedFolder(asRemoteId('0'), 'Elsewhere');
    const other = store.seedFile(elsewhere.id, 'other.txt', 'o');
    await store.restore({ id: f.id, kind: 'file' });
    const mark = store.calls.length;
    await observeRemote(deps, { full: false, extraIds: [] });
    const fetched = store.calls.slice(mark).filter((c) => c.method === 'getItem').map((c) => c.args[0]);
    expect(fetched).toEqual([f.id]);
    expect(fetched).not.toContain(other.id);
    expect(journal.isTrashed(f.id)).toBe(false);
    expect(pathsUnder(journal, root)).toEqual(['f.txt']);
  });

  it('falls back to a full listing when the stored position is too old', async () => {
    const { journal, store, root, changes, deps, top } = await setup();
    const gone = store.seedFile(top.id, 'gone.txt', 'g');
    await observeRemote(deps, { full: false, extraIds: [] });
    changes.invalidate();
    await store.trash(gone.id, 'file');
    store.seedFile(top.id, 'new.txt', 'n');
    const obs = await observeRemote(deps, { full: false, extraIds: [] });
    expect(obs.full).toBe(true);
    expect(pathsUnder(journal, root)).toEqual(['new.txt']);
  });

  it('refuses a remote root that is suddenly empty while files were in sync, and keeps its rows', async () => {
    const { journal, store, root, deps, top } = await setup();
    const f = store.seedFile(top.id, 'keep.txt', 'k');
    await observeRemote(deps, { full: true, extraIds: [] });
    journal.putSynced(root.id, {
      path: asRelPath('keep.txt'), remoteId: f.id, kind: 'file', etag: f.etag, sha1: f.sha1, versionId: f.versionId,
      sizeBytes: f.sizeBytes, inode: 1, mtimeMs: 1, url: null,
    });
    await store.trash(f.id, 'file');
    const obs = await observeRemote(deps, { full: true, extraIds: [] });
    expect(obs.refusals).toEqual([expect.objectContaining({ root: root.id, code: 'remote-root-empty' })]);
    expect(journal.getRemote(f.id)).toBeDefined();
  });
});
