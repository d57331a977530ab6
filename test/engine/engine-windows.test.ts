/**
 * Full passes over a root bigger than one planning window (windows.ts): the engine plans it piecewise and the
 * result is the one a single full snapshot gives. Real journal, real disk, the in-memory remote.
 */
import { rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { asRelPath } from '../../src/core/model.js';
import { planWindows } from '../../src/engine/windows.js';
import { closedAfterEach } from '../support/closed-after-each.js';
import { ignoreFor } from './support/engine-workspace.js';
import { expectConverged, makeHarness, type Harness } from './support/harness.js';

const harness = closedAfterEach(makeHarness);

/** 6 folders of 8 files, and 4 files at the top: 58 rows. */
function seedTree(h: Harness): void {
  for (let d = 0; d < 6; d++) {
    const folder = h.store.seedFolder(h.top.id, `d${d}`);
    for (let f = 0; f < 8; f++) h.store.seedFile(folder.id, `f${f}.txt`, `d${d} f${f}`);
  }
  for (let f = 0; f < 4; f++) h.store.seedFile(h.top.id, `top${f}.txt`, `top ${f}`);
}

describe('engine: full passes planned in windows', () => {
  it('mirrors a root bigger than a window, then a second run has nothing to do', async () => {
    const h = await harness({ windowEntries: 10 });
    seedTree(h);
    const first = expectConverged(await h.run());
    expect(first.windows).toBeGreaterThanOrEqual(5);
    expect(first.ops.download).toBe(52);
    expect(await h.read('d3/f5.txt')).toBe('d3 f5');
    await h.restart();
    // A full rescan plans every window again and finds nothing to do.
    const second = expectConverged(await h.run({ fullRescan: true }));
    expect(second.ops).toEqual({});
    expect(second.windows).toBeGreaterThanOrEqual(5);
  });

  it('no window holds more than about its size, and every row is in exactly one window', async () => {
    const h = await harness({ windowEntries: 10 });
    seedTree(h);
    expectConverged(await h.run());
    const windows = [...planWindows(h.journal, h.root, ignoreFor(h.root), 10)];
    const all = windows.flat();
    expect(new Set(all).size).toBe(all.length);
    // The folders (9 rows each) are bases of their own; the top files are packed together.
    expect(all.sort()).toEqual(['d0', 'd1', 'd2', 'd3', 'd4', 'd5', 'top0.txt', 'top1.txt', 'top2.txt', 'top3.txt']);
    // Each window holds at most 10 rows, unless it is one base that cannot be cut.
    const rows = (w: readonly string[]): number => w.reduce((n, b) => n + 1 + h.journal.countSyncedUnder(h.root.id, asRelPath(b), 1000), 0);
    for (const w of windows) if (w.length > 1) expect(rows(w)).toBeLessThanOrEqual(10);
    expect(windows.length).toBe(7);
    // A window of 4 rows splits each folder into its files.
    const small = [...planWindows(h.journal, h.root, ignoreFor(h.root), 4)].flat();
    expect(small).toContain('d2/f7.txt');
    expect(small).not.toContain('d2');
  });

  it('a file moved locally between folders planned in different windows keeps its Box id and is not uploaded again', async () => {
    const h = await harness({ windowEntries: 4 });
    seedTree(h);
    expectConverged(await h.run());
    const before = h.store.childByName(h.store.childByName(h.top.id, 'd0')!.id, 'f1.txt')!;
    await rename(join(h.localPath, 'd0/f1.txt'), join(h.localPath, 'd5/moved.txt'));
    await rename(join(h.localPath, 'd1'), join(h.localPath, 'd4/d1-inside'));
    const mark = h.mark();
    await h.restart();
    const s = expectConverged(await h.run());
    expect(s.windows).toBeGreaterThan(1);
    expect(h.callsOf('uploadNew', mark) + h.callsOf('uploadVersion', mark) + h.callsOf('trash', mark)).toBe(0);
    expect(h.callsOf('move', mark)).toBe(2);
    const d5 = h.store.childByName(h.top.id, 'd5')!;
    expect(h.store.childByName(d5.id, 'moved.txt')?.id).toBe(before.id);
    const d4 = h.store.childByName(h.top.id, 'd4')!;
    expect(h.store.childByName(d4.id, 'd1-inside')?.kind).toBe('folder');
    expect(h.store.childByName(h.top.id, 'd1')).toBeUndefined();
  });

  it('a remote move between windows is one local rename: same inode, no download', async () => {
    const h = await harness({ windowEntries: 4 });
    seedTree(h);
    expectConverged(await h.run());
    const inode = (await stat(join(h.localPath, 'd2/f3.txt'))).ino;
    const f = h.store.childByName(h.store.childByName(h.top.id, 'd2')!.id, 'f3.txt')!;
    await h.store.move({ id: f.id, kind: 'file', parentId: h.store.childByName(h.top.id, 'd5')!.id, name: 'from-d2.txt' });
    const mark = h.mark();
    await h.restart();
    const s = expectConverged(await h.run());
    expect(s.ops['local-move']).toBe(1);
    expect(h.callsOf('download', mark)).toBe(0);
    expect((await stat(join(h.localPath, 'd5/from-d2.txt'))).ino).toBe(inode);
    expect(await h.exists('d2/f3.txt')).toBe(false);
  });

  it('deletions spread over many windows meet the mass-delete guard together: nothing is deleted', async () => {
    const h = await harness({ windowEntries: 10, maxDeletes: 20, maxDeleteFraction: 0.3 });
    seedTree(h);
    expectConverged(await h.run());
    // Each folder (9 rows) is below the limit on its own; together (36 rows of 59, with the new file) they are above it.
    // Written first, so that it cannot reuse the inode of a deleted file (which would read as a move).
    await h.write('new-here.txt', 'still uploaded');
    for (const d of ['d0', 'd1', 'd2', 'd3']) await h.remove(d);
    const mark = h.mark();
    await h.restart();
    const s = await h.run();
    expect(s.outcome).toBe('guard');
    expect(s.message).toMatch(/refusing to delete 36 of 59 synced items/);
    expect(h.callsOf('trash', mark)).toBe(0);
    expect(h.store.childByName(h.top.id, 'd0')?.kind).toBe('folder');
    // The windows without deletions ran: the guard holds back only the deletions.
    expect(h.store.childByName(h.top.id, 'new-here.txt')?.kind).toBe('file');
  });

  it('deletions spread over windows and under the limits are carried out', async () => {
    const h = await harness({ windowEntries: 10, maxDeletes: 20, maxDeleteFraction: 0.3 });
    seedTree(h);
    expectConverged(await h.run());
    await h.remove('d0');
    await h.remove('top1.txt');
    await h.restart();
    const s = expectConverged(await h.run());
    expect(s.ops['remote-trash']).toBe(2);
    expect(h.store.childByName(h.top.id, 'd0')).toBeUndefined();
    expect(h.journal.getSynced(h.root.id, asRelPath('top1.txt'))).toBeUndefined();
  });

  it('a change made while a long full pass runs is synced between two windows, not after the whole pass', async () => {
    const h = await harness({ windowEntries: 4 });
    seedTree(h);
    let acted = false;
    const record = h.opLines.push.bind(h.opLines);
    // At the first download of the pass, change both sides and hint it, as the daemon's watcher and long poll do.
    h.opLines.push = (...lines) => {
      if (!acted && lines.some((l) => l.kind === 'download')) {
        acted = true;
        void (async () => {
          await h.write('live-here.txt', 'saved during the pass');
          h.engine.hintLocal(h.root.id, [asRelPath('live-here.txt')]);
          h.store.seedFile(h.top.id, 'live-on-box.txt', 'uploaded during the pass');
          h.engine.hintRemote([]);
        })();
      }
      return record(...lines);
    };
    const s = expectConverged(await h.run());
    expect(acted).toBe(true);
    expect(s.windows).toBeGreaterThan(5);
    const at = (kind: string, path: string): number => h.opLines.findIndex((l) => l.kind === kind && l.path === path);
    const lastSeeded = Math.max(...h.opLines.flatMap((l, i) => (l.kind === 'download' && /^(d\d|top)/.test(l.path) ? [i] : [])));
    expect(at('upload', 'live-here.txt')).toBeGreaterThan(-1);
    expect(at('upload', 'live-here.txt')).toBeLessThan(lastSeeded);
    expect(at('download', 'live-on-box.txt')).toBeGreaterThan(-1);
    expect(at('download', 'live-on-box.txt')).toBeLessThan(lastSeeded);
    expect(await h.read('live-on-box.txt')).toBe('uploaded during the pass');
    expect(h.store.contentOf(h.store.childByName(h.top.id, 'live-here.txt')!.id)?.toString()).toBe('saved during the pass');
    // The next run is a cheap hinted one with nothing to do, not a full rescan.
    const next = expectConverged(await h.run());
    expect(next.ops).toEqual({});
    expect(next.windows).toBe(0);
  });
});

describe('engine: after a converged run, the next plans only what changed (clean-mark.ts)', () => {
  it('a no-change run plans no window; one edit on each side is synced from a plan of just those', async () => {
    const h = await harness({ windowEntries: 4 });
    seedTree(h);
    expect(expectConverged(await h.run()).windows).toBeGreaterThan(5);
    await h.restart();
    const quiet = expectConverged(await h.run());
    expect(quiet.ops).toEqual({});
    expect(quiet.windows).toBe(0);
    expect(quiet.passes).toBe(1);
    await h.write('d1/f2.txt', 'edited here');
    const onBox = h.store.childByName(h.store.childByName(h.top.id, 'd4')!.id, 'f4.txt')!;
    h.store.editRemotely(onBox.id, 'edited on Box');
    await h.restart();
    const s = expectConverged(await h.run());
    expect(s.windows).toBe(0);
    expect(s.ops).toEqual({ 'upload-version': 1, download: 1 });
    expect(await h.read('d4/f4.txt')).toBe('edited on Box');
    expect(h.store.contentOf(h.store.childByName(h.store.childByName(h.top.id, 'd1')!.id, 'f2.txt')!.id)?.toString()).toBe('edited here');
  });

  it('a run that did not converge leaves the mark cleared: the next run plans the whole root', async () => {
    const h = await harness({ windowEntries: 10, maxDeletes: 5, maxDeleteFraction: 0.05 });
    seedTree(h);
    expectConverged(await h.run());
    await h.remove('d0');
    await h.restart();
    expect((await h.run()).outcome).toBe('guard');
    // Nothing changed on disk since the guarded run, whose scan wrote "d0 is gone" into the journal without
    // reconciling it. Planning only what the next scan sees change would plan nothing (and forget the deletion):
    // the whole root is planned again, and the guard holds again.
    await h.restart();
    const again = await h.run();
    expect(again.windows).toBeGreaterThan(0);
    expect(again.outcome).toBe('guard');
  });

  it('a change of the configuration (exclusions) plans the whole root again', async () => {
    const h = await harness({ windowEntries: 4 });
    seedTree(h);
    expectConverged(await h.run());
    const changedRoot = { ...h.root, exclude: ['*.tmp'] };
    const { clearClean, isClean, markClean } = await import('../../src/engine/clean-mark.js');
    expect(isClean(h.journal, h.root, Date.now())).toBe(true);
    expect(isClean(h.journal, changedRoot, Date.now())).toBe(false);
    // And a whole-root plan at least once a day.
    expect(isClean(h.journal, h.root, Date.now() + 25 * 3600_000)).toBe(false);
    clearClean(h.journal, h.root);
    expect(isClean(h.journal, h.root, Date.now())).toBe(false);
    markClean(h.journal, h.root, Date.now(), false);
    expect(isClean(h.journal, h.root, Date.now())).toBe(true);
    // The paths deferred as settling (engine-daemon.test.ts) unreadable in the journal: the whole root is planned.
    const { setSettlingPaths, settlingPaths } = await import('../../src/engine/clean-mark.js');
    setSettlingPaths(h.journal, h.root, [asRelPath('a/b.txt')]);
    expect(settlingPaths(h.journal, h.root)).toEqual(['a/b.txt']);
    expect(isClean(h.journal, h.root, Date.now())).toBe(true);
    for (const bad of ['{', '["../outside"]', '[1]', '"a"']) {
      h.journal.setMeta(`settling:${h.root.id}`, bad);
      expect(isClean(h.journal, h.root, Date.now())).toBe(false);
    }
    setSettlingPaths(h.journal, h.root, []);
    expect(isClean(h.journal, h.root, Date.now())).toBe(true);
  });
});
