/**
 * The engine end to end through createEngine: real journal, real LocalFs on a temp dir, the in-memory remote.
 * Each case arranges both sides, runs the engine to quiescence and asserts the files on both sides, the calls
 * made to the remote (so "zero downloads" is checked, not assumed) and the summary.
 */
import { stat, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RemoteId } from '../../src/core/model.js';
import { remoteError } from '../../src/remote/box/error-codes.js';
import { expectConverged, makeHarness, type Harness } from './support/harness.js';
import { closedAfterEach } from '../support/closed-after-each.js';
import { openJournal } from '../../src/journal/index.js';
import type { Journal } from '../../src/ports/journal.js';

const harness = closedAfterEach(makeHarness);

function remoteChild(h: Harness, parent: RemoteId, name: string) {
  return h.store.childByName(parent, name);
}

describe('engine: first run', () => {
  it('links files that both sides already hold with the same SHA-1, without transferring', async () => {
    const h = await harness();
    const docs = h.store.seedFolder(h.top.id, 'docs');
    h.store.seedFile(docs.id, 'a.txt', 'alpha');
    h.store.seedFile(h.top.id, 'b.txt', 'beta');
    await h.write('docs/a.txt', 'alpha');
    await h.write('b.txt', 'beta');
    const s = expectConverged(await h.run());
    expect(h.callsOf('download')).toBe(0);
    expect(h.callsOf('uploadNew') + h.callsOf('uploadVersion')).toBe(0);
    expect(s.ops.link).toBeGreaterThanOrEqual(2);
    expect(h.journal.countSynced(h.root.id)).toMatchObject({ files: 2, folders: 1 });
  });

  it('downloads what only Box has, uploads what only the disk has, then is quiescent', async () => {
    const h = await harness();
    const sub = h.store.seedFolder(h.top.id, 'remote-dir');
    h.store.seedFile(sub.id, 'r.txt', 'from box');
    await h.write('local-dir/l.txt', 'from disk');
    const first = expectConverged(await h.run());
    expect(await h.read('remote-dir/r.txt')).toBe('from box');
    const dir = remoteChild(h, h.top.id, 'local-dir');
    expect(dir?.kind).toBe('folder');
    const l = remoteChild(h, dir!.id, 'l.txt');
    expect(h.store.contentOf(l!.id)?.toString()).toBe('from disk');
    expect(first.downloadedBytes).toBe('from box'.length);
    expect(first.uploadedBytes).toBe('from disk'.length);
    const mark = h.mark();
    await h.restart();
    const second = expectConverged(await h.run());
    expect(second.ops).toEqual({});
    expect(h.callsOf('download', mark) + h.callsOf('uploadNew', mark)).toBe(0);
  });
});

describe('engine: operation listeners', () => {
  it('records every operation in the history with its commit, tells listeners once it is committed, and a throwing listener undoes nothing', async () => {
    let reader: Journal | undefined;
    const seenCommitted: string[] = [];
    const h = await harness({}, {}, (o) => {
      // A second connection sees only committed rows: the listener runs after the commit, history row included.
      reader ??= openJournal(h.journalPath).journal;
      if (reader.getSynced(o.root, o.path) !== undefined && reader.lastOperation(o.root, o.path)?.ok === true) seenCommitted.push(o.path);
      if (o.path === 'b.txt') throw new Error('listener broke');
    });
    h.store.seedFile(h.top.id, 'a.txt', 'aaa');
    h.store.seedFile(h.top.id, 'b.txt', 'bbb');
    const first = expectConverged(await h.run());
    reader?.close();
    expect(first.ops.download).toBe(2);
    expect(seenCommitted.sort()).toEqual(['a.txt', 'b.txt']);
    expect(await h.read('b.txt')).toBe('bbb');
    expect(h.journal.lastOperation(h.root.id, 'b.txt' as never)).toMatchObject({ kind: 'download', ok: true });
    expect(h.journal.operations({ path: 'a.txt' as never, under: false })).toHaveLength(1);
    // The throw did not roll the download's commit back: nothing is downloaded again.
    const mark = h.mark();
    const second = expectConverged(await h.run());
    expect(second.ops).toEqual({});
    expect(h.callsOf('download', mark)).toBe(0);
  });

});

describe('engine: moves', () => {
  it('a remote folder rename with many files inside is one local rename and zero downloads', async () => {
    const h = await harness();
    const big = h.store.seedFolder(h.top.id, 'big');
    for (let i = 0; i < 300; i++) h.store.seedFile(big.id, `f${i}.txt`, `file ${i}`);
    expectConverged(await h.run());
    const inodeBefore = (await stat(join(h.localPath, 'big/f7.txt'))).ino;
    await h.store.move({ id: big.id, kind: 'folder', name: 'renamed' });
    const mark = h.mark();
    await h.restart();
    const s = expectConverged(await h.run());
    expect(s.ops['local-move']).toBe(1);
    expect(h.callsOf('download', mark)).toBe(0);
    expect(await h.exists('big')).toBe(false);
    expect((await h.list('renamed')).length).toBe(300);
    expect((await stat(join(h.localPath, 'renamed/f7.txt'))).ino).toBe(inodeBefore);
  });

  it('a local folder rename is one Box move and zero uploads', async () => {
    const h = await harness();
    for (let i = 0; i < 20; i++) await h.write(`photos/p${i}.jpg`, `pixels ${i}`);
    expectConverged(await h.run());
    const folderId = remoteChild(h, h.top.id, 'photos')!.id;
    await rename(join(h.localPath, 'photos'), join(h.localPath, 'pictures'));
    const mark = h.mark();
    const s = expectConverged(await h.run());
    expect(h.callsOf('move', mark)).toBe(1);
    expect(h.callsOf('uploadNew', mark) + h.callsOf('uploadVersion', mark)).toBe(0);
    expect(s.ops['remote-move']).toBe(1);
    expect(remoteChild(h, h.top.id, 'pictures')?.id).toBe(folderId);
    expect(remoteChild(h, h.top.id, 'photos')).toBeUndefined();
  });
});

describe('engine: conflicts and edit-beats-delete', () => {
  it('both sides changed a file differently: keeps both contents, and does not loop', async () => {
    const h = await harness();
    const f = h.store.seedFile(h.top.id, 'report.txt', 'v1');
    expectConverged(await h.run());
    h.store.editRemotely(f.id, 'theirs');
    await h.write('report.txt', 'ours, longer');
    const s = expectConverged(await h.run());
    expect(s.conflicts).toBe(1);
    expect(await h.read('report.txt')).toBe('theirs');
    const names = await h.list();
    const copy = names.find((n) => n.startsWith('report (conflicted copy '));
    expect(copy).toBeDefined();
    expect(await h.read(copy!)).toBe('ours, longer');
    const remoteCopy = remoteChild(h, h.top.id, copy!);
    expect(h.store.contentOf(remoteCopy!.id)?.toString()).toBe('ours, longer');
    expect(h.store.contentOf(f.id)?.toString()).toBe('theirs');
    const again = expectConverged(await h.run());
    expect(again.ops).toEqual({});
  });

  it('equal SHA-1s on both sides are not a conflict', async () => {
    const h = await harness();
    const f = h.store.seedFile(h.top.id, 'same.txt', 'v1');
    expectConverged(await h.run());
    h.store.editRemotely(f.id, 'v2 everywhere');
    await h.write('same.txt', 'v2 everywhere');
    const s = expectConverged(await h.run());
    expect(s.conflicts).toBe(0);
    expect((await h.list()).filter((n) => n.includes('conflicted copy'))).toEqual([]);
  });

  it('edited locally, trashed on Box: restores the same Box id and uploads the edit as a new version', async () => {
    const h = await harness();
    const f = h.store.seedFile(h.top.id, 'plan.txt', 'draft');
    expectConverged(await h.run());
    await h.store.trash(f.id, 'file');
    await h.write('plan.txt', 'final version');
    const s = expectConverged(await h.run());
    expect(s.ops['remote-restore']).toBe(1);
    const back = remoteChild(h, h.top.id, 'plan.txt');
    expect(back?.id).toBe(f.id);
    expect(h.store.contentOf(f.id)?.toString()).toBe('final version');
    expect(h.callsOf('uploadNew')).toBe(0);
  });

  it('edited on Box, deleted locally: downloads it again', async () => {
    const h = await harness();
    const f = h.store.seedFile(h.top.id, 'keep.txt', 'v1');
    // Another file stays: a root that lists empty is a guard of its own (below).
    h.store.seedFile(h.top.id, 'other.txt', 'o');
    expectConverged(await h.run());
    await h.remove('keep.txt');
    h.store.editRemotely(f.id, 'v2 from box');
    expectConverged(await h.run());
    expect(await h.read('keep.txt')).toBe('v2 from box');
    expect(h.callsOf('trash')).toBe(0);
  });
});

describe('engine: names', () => {
  it('a case clash and an NFC/NFD pair: one of each syncs, the other is reported, nothing is clobbered', async () => {
    const h = await harness();
    await h.write('Notes.txt', 'upper');
    await h.write('notes.txt', 'lower');
    const nfc = 'caf\u00e9.txt';
    const nfd = 'cafe\u0301.txt';
    await h.write(nfc, 'composed');
    await h.write(nfd, 'decomposed');
    const s = await h.run();
    // The two clashing names are parked (not syncing until they change): the run says so and fails.
    expect(s).toMatchObject({ outcome: 'failed-items', failedItems: 0, parkedItems: 2 });
    const remoteNames = h.store.allEntries().filter((e) => e.parentId === h.top.id && e.status === 'active').map((e) => e.name);
    expect(remoteNames.filter((n) => n.toLowerCase() === 'notes.txt')).toHaveLength(1);
    expect(remoteNames.filter((n) => n.normalize('NFC') === nfc)).toHaveLength(1);
    const problems = h.engine.status().errors.map((e) => e.code).sort();
    expect(problems).toEqual(['case-clash', 'unicode-clash']);
    expect(await h.read('Notes.txt')).toBe('upper');
    expect(await h.read('notes.txt')).toBe('lower');
    expect(await h.read(nfc)).toBe('composed');
    expect(await h.read(nfd)).toBe('decomposed');
    const again = await h.run();
    expect(again.ops).toEqual({});
    expect(again).toMatchObject({ outcome: 'failed-items', parkedItems: 2 });
  });

  it('a name Box refuses is reported once and skipped, not retried', async () => {
    const h = await harness();
    await h.write('trailing space.txt ', 'x');
    await h.write('fine.txt', 'y');
    const s = await h.run();
    expect(s).toMatchObject({ outcome: 'failed-items', failedItems: 0, parkedItems: 1 });
    expect(s.problems).toEqual([expect.objectContaining({ path: 'trailing space.txt ', parked: true })]);
    expect(remoteChild(h, h.top.id, 'fine.txt')).toBeDefined();
    expect(h.engine.status().errors).toEqual([expect.objectContaining({ path: 'trailing space.txt ', nextRetryAtMs: null })]);
    const mark = h.mark();
    // Every run says it again, until the name changes.
    expect(await h.run()).toMatchObject({ outcome: 'failed-items', parkedItems: 1 });
    expect(h.callsOf('uploadNew', mark)).toBe(0);
  });

  it('a Box web link becomes a small .url file', async () => {
    const h = await harness();
    h.store.seedWeblink(h.top.id, 'Handbook', 'https://example.com/handbook');
    expectConverged(await h.run());
    const names = await h.list();
    const link = names.find((n) => n.startsWith('Handbook'));
    expect(link).toBeDefined();
    expect(await h.read(link!)).toContain('URL=https://example.com/handbook');
    expect(h.callsOf('uploadNew')).toBe(0);
  });
});

describe('engine: safety', () => {
  it('refuses a mass delete, deletes nothing, and goes ahead once the guard is confirmed', async () => {
    const h = await harness({ maxDeletes: 3, maxDeleteFraction: 0.5 });
    for (let i = 0; i < 8; i++) await h.write(`f${i}.txt`, `content ${i}`);
    expectConverged(await h.run());
    // One file stays: deleting everything (and a root that lists empty) are guards of their own, below.
    for (let i = 0; i < 7; i++) await h.remove(`f${i}.txt`);
    const s = await h.run();
    expect(s.outcome).toBe('guard');
    expect(h.callsOf('trash')).toBe(0);
    const held = h.engine.status().heldGuard;
    expect(held?.message).toMatch(/refusing to delete 7 of 8/);
    expect(h.engine.confirmGuard('not-the-id')).toBe(false);
    expect(h.engine.confirmGuard(held!.id)).toBe(true);
    expectConverged(await h.run());
    expect(h.callsOf('trash')).toBe(7);
    expect(h.store.allEntries().filter((e) => e.status === 'trashed')).toHaveLength(7);
  });

  it('a pass held by a guard loses no local change its scan found: once confirmed, new local files are uploaded too', async () => {
    const h = await harness({ maxDeletes: 3, maxDeleteFraction: 0.5 });
    for (let i = 0; i < 8; i++) await h.write(`f${i}.txt`, `content ${i}`);
    expectConverged(await h.run());
    // The second run is planned from the clean mark: what the scan found changed is its scope.
    for (let i = 0; i < 7; i++) await h.remove(`f${i}.txt`);
    await h.write('new.txt', 'made while the deletes were held');
    expect((await h.run()).outcome).toBe('guard');
    expect(h.store.childByName(h.top.id, 'new.txt')).toBeUndefined();
    // The same engine (as the daemon keeps it) asks a hinted pass next: the scan's findings are in the journal now,
    // and no hint names new.txt.
    h.engine.hintLocal(h.root.id, []);
    expect(h.engine.confirmGuard(h.engine.status().heldGuard!.id)).toBe(true);
    expectConverged(await h.run());
    expect(h.callsOf('trash')).toBe(7);
    expect(h.store.contentOf(h.store.childByName(h.top.id, 'new.txt')!.id)?.toString()).toBe('made while the deletes were held');
  });

  it('a held guard stays shown and confirmable while the next pass runs (a Confirm clicked mid-pass is not refused)', async () => {
    const h = await harness({ maxDeletes: 3, maxDeleteFraction: 0.5 });
    for (let i = 0; i < 8; i++) await h.write(`f${i}.txt`, `content ${i}`);
    expectConverged(await h.run());
    for (let i = 0; i < 7; i++) await h.remove(`f${i}.txt`);
    expect((await h.run()).outcome).toBe('guard');
    const held = h.engine.status().heldGuard!;
    // Another pass starts (a watcher hint, a wake-up) and the user confirms while it runs: at its first phase report.
    const midPass: { shown: string | null; confirmed: boolean }[] = [];
    let asked = false;
    const push = h.statuses.push.bind(h.statuses);
    h.statuses.push = (...st) => {
      if (!asked && st[0]?.phase === 'listing') {
        asked = true; // confirmGuard reports the change at once, through this same push
        const shown = st[0].heldGuard?.id ?? null;
        midPass.push({ shown, confirmed: h.engine.confirmGuard(held.id) });
      }
      return push(...st);
    };
    await h.run();
    expect(midPass).toEqual([{ shown: held.id, confirmed: true }]);
    // That pass or the one after runs the deletes; the guard is not shown again.
    if (h.callsOf('trash') < 7) expectConverged(await h.run());
    expect(h.callsOf('trash')).toBe(7);
    expect(h.engine.status().heldGuard).toBeNull();
  });

  it('deleting everything under a root asks whatever the count: the root that lists empty first, then the deletes', async () => {
    const h = await harness();
    await h.write('a.txt', 'a');
    await h.write('d/b.txt', 'b');
    expectConverged(await h.run());
    await h.remove('a.txt');
    await h.remove('d');
    const s = await h.run();
    expect(s.outcome).toBe('guard');
    expect(s.message).toMatch(/suddenly empty while files were in sync; refusing to delete them on Box/);
    expect(h.callsOf('trash')).toBe(0);
    expect(h.engine.confirmGuard(h.engine.status().heldGuard!.id)).toBe(true);
    const next = await h.run();
    expect(next.outcome).toBe('guard');
    const held = h.engine.status().heldGuard!;
    expect(held.id).toMatch(/^mass-delete:/);
    expect(held.message).toMatch(/refusing to delete all 3 synced items/);
    expect(h.callsOf('trash')).toBe(0);
    expect(h.engine.confirmGuard(held.id)).toBe(true);
    expectConverged(await h.run());
    expect(h.store.allEntries().filter((e) => e.status === 'trashed').length).toBeGreaterThan(0);
    expect(h.store.allEntries().filter((e) => e.status === 'active' && e.parentId === h.top.id)).toEqual([]);
  });

  it('refuses a root whose local folder went missing, touching nothing on Box', async () => {
    const h = await harness();
    await h.write('a.txt', 'a');
    expectConverged(await h.run());
    await h.remove('');
    const s = await h.run();
    expect(s.outcome).toBe('guard');
    expect(s.message).toMatch(/missing/);
    expect(h.callsOf('trash')).toBe(0);
  });

  it('a 412 on a new version re-plans instead of overwriting the other edit', async () => {
    const h = await harness();
    const f = h.store.seedFile(h.top.id, 'doc.txt', 'v1');
    expectConverged(await h.run());
    await h.write('doc.txt', 'local edit');
    const original = h.store.uploadVersion.bind(h.store);
    let raced = false;
    h.store.uploadVersion = async (req) => {
      if (!raced) {
        raced = true;
        h.store.editRemotely(f.id, 'remote edit that raced');
      }
      return original(req);
    };
    const s = expectConverged(await h.run());
    expect(raced).toBe(true);
    expect(h.store.contentOf(f.id)?.toString()).toBe('remote edit that raced');
    expect(await h.read('doc.txt')).toBe('remote edit that raced');
    expect(s.conflicts).toBe(1);
    const copies = h.store.allEntries().filter((e) => e.name.startsWith('doc (conflicted copy'));
    expect(copies.map((c) => h.store.contentOf(c.id)?.toString())).toEqual(['local edit']);
  });

  it('a 409 (the name was taken on Box meanwhile) re-plans and keeps both contents', async () => {
    const h = await harness();
    await h.write('new.txt', 'mine');
    const original = h.store.uploadNew.bind(h.store);
    let raced = false;
    h.store.uploadNew = async (req) => {
      if (!raced && req.name === 'new.txt') {
        raced = true;
        h.store.seedFile(h.top.id, 'new.txt', 'theirs, created meanwhile');
      }
      return original(req);
    };
    const s = expectConverged(await h.run());
    expect(raced).toBe(true);
    expect(s.conflicts).toBe(1);
    expect(await h.read('new.txt')).toBe('theirs, created meanwhile');
    const copy = (await h.list()).find((n) => n.startsWith('new (conflicted copy'));
    expect(await h.read(copy!)).toBe('mine');
    const remoteCopy = h.store.childByName(h.top.id, copy!);
    expect(h.store.contentOf(remoteCopy!.id)?.toString()).toBe('mine');
  });

  it('one failing file does not block the others and backs off in the failures table', async () => {
    const h = await harness();
    await h.write('a.txt', 'a');
    await h.write('b.txt', 'b');
    await h.write('c.txt', 'c');
    h.store.failNext('uploadNew', remoteError('server_error', 'Box answered 500'));
    const s = await h.run();
    expect(s.outcome).toBe('failed-items');
    expect(s.failedItems).toBe(1);
    const active = h.store.allEntries().filter((e) => e.parentId === h.top.id).map((e) => e.name);
    expect(active).toHaveLength(2);
    const failures = h.journal.failures(h.root.id);
    expect(failures).toHaveLength(1);
    expect(failures[0]!.nextRetryAtMs).toBeGreaterThan(Date.now() + 10_000);
    expect(h.engine.status().errors[0]?.nextRetryAtMs).toBe(failures[0]!.nextRetryAtMs);
    const mark = h.mark();
    const again = await h.run();
    expect(again.outcome).toBe('failed-items');
    expect(h.callsOf('uploadNew', mark)).toBe(0);
    // Once the backoff has elapsed the item is tried again; success clears its row.
    h.journal.recordFailure({ ...failures[0]!, nextRetryAtMs: Date.now() - 1 });
    const third = expectConverged(await h.run());
    expect(third.ops.upload).toBe(1);
    expect(h.journal.failures(h.root.id)).toEqual([]);
    expect(h.store.allEntries().filter((e) => e.parentId === h.top.id)).toHaveLength(3);
  });

  it('refuses a Box root that is suddenly empty on a full listing, until the guard is confirmed', async () => {
    const h = await harness();
    const a = h.store.seedFile(h.top.id, 'a.txt', 'a');
    const b = h.store.seedFile(h.top.id, 'b.txt', 'b');
    expectConverged(await h.run());
    await h.store.trash(a.id, 'file');
    await h.store.trash(b.id, 'file');
    h.changes.invalidate();
    const s = await h.run();
    expect(s.outcome).toBe('guard');
    expect(s.message).toMatch(/suddenly empty/);
    expect(await h.list()).toEqual(['a.txt', 'b.txt']);
    const held = h.engine.status().heldGuard!;
    expect(h.engine.confirmGuard(held.id)).toBe(true);
    h.changes.invalidate();
    // Then the deletes meet the mass-delete guard: deleting everything under a root always asks.
    const next = await h.run();
    expect(next.outcome).toBe('guard');
    expect(await h.list()).toEqual(['a.txt', 'b.txt']);
    const all = h.engine.status().heldGuard!;
    expect(all.message).toMatch(/refusing to delete all 2 synced items/);
    expect(h.engine.confirmGuard(all.id)).toBe(true);
    expectConverged(await h.run());
    expect(await h.list()).toEqual([]);
  });
});

describe('engine: journal and status', () => {
  it('a revoked token stops the run as fatal and says so in status', async () => {
    const h = await harness();
    await h.write('a.txt', 'a');
    h.store.failNext('getItem', remoteError('auth_revoked', 'the access token was revoked'));
    const s = await h.run();
    expect(s.outcome).toBe('fatal');
    expect(s.message).toMatch(/revoked/);
    expect(h.engine.status()).toMatchObject({ phase: 'error', fatal: { code: 'auth_revoked' } });
    expect(h.callsOf('uploadNew')).toBe(0);
  });


  it('a corrupt journal is rebuilt from a fresh scan and listing, losing nothing and transferring nothing', async () => {
    const h = await harness();
    h.store.seedFile(h.top.id, 'remote.txt', 'r');
    await h.write('local.txt', 'l');
    expectConverged(await h.run());
    await h.engine.close();
    h.journal.close();
    const { writeFile } = await import('node:fs/promises');
    await writeFile(h.journalPath, 'this is not a database, it is garbage'.repeat(100));
    const mark = h.mark();
    const { rebuilt } = await h.restart();
    expect(rebuilt).toBe(true);
    expectConverged(await h.run());
    expect(h.callsOf('download', mark) + h.callsOf('uploadNew', mark) + h.callsOf('uploadVersion', mark)).toBe(0);
    expect(await h.read('remote.txt')).toBe('r');
    expect(await h.read('local.txt')).toBe('l');
    expect(h.journal.countSynced(h.root.id).files).toBe(2);
  });

  it('reports per-root counts, the last success and an idle phase after a run', async () => {
    const h = await harness();
    h.store.seedFile(h.top.id, 'x.txt', 'xyz');
    const before = h.engine.status();
    expect(before.lastSuccessfulSyncAtMs).toBeNull();
    const s = expectConverged(await h.run());
    expect(s.message).toMatch(/^in sync: 1 downloaded/);
    const st = h.engine.status();
    expect(st.phase).toBe('idle');
    expect(st.roots[0]).toMatchObject({ root: h.root.id, inSync: { files: 1, bytes: 3 }, queued: { ops: 0, bytes: 0 }, inFlight: [] });
    expect(st.lastSuccessfulSyncAtMs).not.toBeNull();
    expect(h.opLines.some((o) => o.kind === 'download' && o.path === 'x.txt' && o.ok)).toBe(true);
  });
});
