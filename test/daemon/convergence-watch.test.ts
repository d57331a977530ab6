/**
 * ConvergenceWatch (issue 26 point 14) on a real engine and SQLite journal: the journal check finds what is out
 * of sync, a forgotten path is hinted once (not again while the planner has nothing to do for it), a path with a
 * failure row is left to its retry timer, and hints a pass gave back get a wake-up.
 */
import { describe, expect, it } from 'vitest';
import { asRelPath } from '../../src/core/model.js';
import type { ConvergenceWatch } from '../../src/daemon/lifecycle/convergence-watch.js';
import { comparePaths, outOfSync } from '../../src/engine/out-of-sync.js';
import { expectConverged, makeHarness, type Harness } from '../engine/support/harness.js';
import { closedAfterEach } from '../support/closed-after-each.js';
import { waitFor } from '../support/wait.js';
import { noIgnore, watchOnHarness } from './watch-harness.js';

const harness = closedAfterEach(makeHarness);

/**
 * The time each idle state is reported at: an hour after the last. A check is throttled to 20 times its own cost
 * after the last one (CHECK_COST_FACTOR), so on a loaded machine a pass shorter than that would leave the next
 * idle state to a timer; these tests are about what a check does, not about its throttle.
 */
let idleAtMs = Date.now();
const later = (): number => (idleAtMs += 3_600_000);

function watchOf(h: Harness, requests: { n: number }): ConvergenceWatch {
  return watchOnHarness(h, {
    request: () => (requests.n += 1),
    busy: () => false,
    // These tests are about what a check does with what it finds, so each check runs whole, at once, however slow
    // the machine (the first slice of a sliced check ends after 25 ms; slicing: convergence-watch-sliced.test.ts).
    sliceMs: Number.POSITIVE_INFINITY,
  });
}

describe('out of sync, from the journal', () => {
  it('is empty for a converged root, and names each kind of difference', async () => {
    const h = await harness();
    await h.write('a.txt', 'a');
    await h.write('dir/b.txt', 'b');
    h.store.seedFile(h.top.id, 'remote.txt', 'r');
    h.store.seedWeblink(h.top.id, 'Handbook', 'https://example.com/handbook');
    expectConverged(await h.run());
    expect(await h.exists('Handbook.url')).toBe(true);
    expect(outOfSync(h.journal, h.root, noIgnore)).toEqual([]);
    // The journal learns of changes a pass has not reconciled (as a pass deferring them leaves it).
    const b = h.journal.getLocal(h.root.id, asRelPath('dir/b.txt'))!;
    h.journal.putLocal(h.root.id, { ...b, sizeBytes: b.sizeBytes + 1 });
    h.journal.deleteLocal(h.root.id, asRelPath('a.txt'));
    h.journal.putLocal(h.root.id, { ...b, path: asRelPath('new.txt'), inode: b.inode + 1000 });
    const r = h.journal.getRemote(h.journal.getSynced(h.root.id, asRelPath('remote.txt'))!.remoteId)!;
    h.journal.putRemote({ ...r, etag: `${r.etag}x` });
    const found = outOfSync(h.journal, h.root, noIgnore).map((o) => `${o.path}: ${o.why}`).sort();
    expect(found).toEqual(['a.txt: deleted locally', 'dir/b.txt: changed locally', 'new.txt: new locally', 'remote.txt: changed on Box']);
  });
});

describe('out of sync: the merge of the local tree and the merge base', () => {
  it("compares paths in the journal's own order, whatever the names", async () => {
    const h = await harness();
    // ASCII around '/', Latin-1, a private-use BMP character (above the surrogates in UTF-16) and characters
    // above U+FFFF (surrogate pairs in UTF-16): UTF-16 order and SQLite's UTF-8 order differ between the last two.
    const names = ['a.txt', 'a b.txt', 'a-b.txt', 'a/b.txt', 'a0.txt', 'Z.txt', '~.txt', 'ä.txt', '\uE000.txt', '\u{1F600}.txt', '\u{1F600}/x.txt', '\uFF21.txt'];
    for (const n of names) await h.write(n, n);
    expectConverged(await h.run());
    const local = [...h.journal.localUnder(h.root.id, '')].map((e) => e.path as string);
    expect(local.length).toBe(names.length + 2);
    expect([...local].sort(comparePaths)).toEqual(local);
    expect(comparePaths('\u{1F600}', '\uE000')).toBeGreaterThan(0);
    expect(outOfSync(h.journal, h.root, noIgnore)).toEqual([]);
    // One of each kind, among those names.
    const at = (p: string) => h.journal.getLocal(h.root.id, asRelPath(p))!;
    h.journal.deleteLocal(h.root.id, asRelPath('\u{1F600}.txt'));
    h.journal.putLocal(h.root.id, { ...at('\uE000.txt'), mtimeMs: at('\uE000.txt').mtimeMs + 1 });
    h.journal.putLocal(h.root.id, { ...at('a b.txt'), path: asRelPath('\u{1F600}/new.txt'), inode: at('a b.txt').inode + 1000 });
    const gone = h.journal.getSynced(h.root.id, asRelPath('a0.txt'))!.remoteId;
    h.journal.deleteRemote(gone);
    const found = outOfSync(h.journal, h.root, noIgnore).map((o) => `${o.path}: ${o.why}`).sort();
    expect(found).toEqual(['a0.txt: gone from Box', '\u{1F600}.txt: deleted locally', '\u{1F600}/new.txt: new locally', '\uE000.txt: changed locally'].sort());
    // The limit holds, and what is ignored (with everything below it) is not named.
    expect(outOfSync(h.journal, h.root, noIgnore, 2)).toHaveLength(2);
    const ignoreEmoji = (p: string): boolean => p === '\u{1F600}' || p === '\u{1F600}.txt';
    expect(outOfSync(h.journal, h.root, ignoreEmoji).map((o) => o.path).sort()).toEqual(['\uE000.txt', 'a0.txt'].sort());
  });
});

describe('ConvergenceWatch', () => {
  it('hints a forgotten path once and asks for a pass; leaves one with a failure row to its retry timer', async () => {
    const h = await harness();
    await h.write('a.txt', 'a1');
    await h.write('b.txt', 'b1');
    expectConverged(await h.run());
    const requests = { n: 0 };
    const watch = watchOf(h, requests);
    watch.idle(later());
    expect(requests.n).toBe(0);
    expect(h.engine.hasHints()).toBe(false);
    // Both saved; the journal saw them (a pass that deferred them), but no hint is left for either.
    await h.write('a.txt', 'a2 saved');
    await h.write('b.txt', 'b2 saved');
    h.engine.hintLocal(h.root.id, [asRelPath('a.txt'), asRelPath('b.txt')]);
    h.journal.recordFailure({ root: h.root.id, path: asRelPath('a.txt'), code: 'x', message: 'held for the test', attempts: 1, nextRetryAtMs: Date.now() + 600_000, disposition: 'retry' });
    h.journal.recordFailure({ root: h.root.id, path: asRelPath('b.txt'), code: 'x', message: 'held for the test', attempts: 1, nextRetryAtMs: Date.now() + 600_000, disposition: 'retry' });
    await h.run();
    h.journal.clearFailure(h.root.id, asRelPath('b.txt')); // cleared without re-planning: b.txt is forgotten
    watch.idle(later());
    expect(requests.n).toBe(1);
    expect(h.engine.hasHints()).toBe(true);
    // The pass it asked for uploads b.txt; a.txt waits for its retry.
    await h.run();
    expect(h.store.contentOf(h.store.childByName(h.top.id, 'b.txt')!.id)?.toString()).toBe('b2 saved');
    expect(h.store.contentOf(h.store.childByName(h.top.id, 'a.txt')!.id)?.toString()).toBe('a1');
    watch.idle(later());
    expect(requests.n).toBe(1);
    watch.close();
  });

  it('does not hint the same path twice in a row when a pass changes nothing for it', async () => {
    const h = await harness();
    await h.write('a.txt', 'a');
    expectConverged(await h.run());
    const a = h.journal.getLocal(h.root.id, asRelPath('a.txt'))!;
    const requests = { n: 0 };
    const watch = watchOf(h, requests);
    // A merge base the planner never rewrites (a journal out of step): hinted once, then left alone.
    h.journal.putSynced(h.root.id, { ...h.journal.getSynced(h.root.id, asRelPath('a.txt'))!, mtimeMs: a.mtimeMs - 5_000 });
    h.journal.putLocal(h.root.id, a);
    watch.idle(later());
    expect(requests.n).toBe(1);
    h.engine.hintLocal(h.root.id, []);
    await h.run();
    h.journal.putSynced(h.root.id, { ...h.journal.getSynced(h.root.id, asRelPath('a.txt'))!, mtimeMs: a.mtimeMs - 5_000 });
    watch.idle(later());
    expect(requests.n).toBe(1);
    watch.close();
  });

  it('after a pass that did not converge, the hints it gave back get a wake-up (a backoff); after a converged one, a pass at once', async () => {
    const h = await harness();
    const requests = { n: 0 };
    const watch = watchOf(h, requests);
    watch.afterPass({ outcome: 'failed-items' });
    expect(requests.n).toBe(0); // no hints: nothing to wake for
    h.engine.hintLocal(h.root.id, [asRelPath('x.txt')]);
    watch.afterPass({ outcome: 'converged' });
    expect(requests.n).toBe(1);
    watch.afterPass({ outcome: 'failed-items' });
    expect(requests.n).toBe(1);
    await waitFor(() => requests.n === 2, { timeoutMs: 10_000, what: 'the wake-up after a pass that did not converge' });
    watch.close();
  });
});
