/**
 * The status tracker's in-sync counts: an aggregate over every synced row, so reports pushed during a pass may
 * reuse a recent count, as does a status query during a pass; the end of a pass and a status query between passes
 * count afresh. Real SQLite journal.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { asRemoteId, asRootId, type SyncRoot } from '../../src/core/model.js';
import { StatusTracker } from '../../src/engine/status-tracker.js';
import { TransferQueue } from '../../src/engine/transfer-queue.js';
import type { StatusReport } from '../../src/engine/types.js';
import { openJournal } from '../../src/journal/open-journal.js';
import { systemClock, type Clock } from '../../src/ports/clock.js';
import type { Journal } from '../../src/ports/journal.js';
import { synced } from '../journal/entries.js';
import { makeTempDir } from '../support/tmp.js';
import { waitFor } from '../support/wait.js';
import { SLICE_MS } from '../../src/core/slices.js';

const R = asRootId('r');
const root: SyncRoot = { id: R, localPath: '/nowhere', remoteId: asRemoteId('0') } as SyncRoot;

describe('status tracker: in-sync counts', () => {
  let tmp: Awaited<ReturnType<typeof makeTempDir>>;
  let j: Journal;
  let pushed: StatusReport[];
  let tracker: StatusTracker;
  let nowMs: number;

  beforeEach(async () => {
    tmp = await makeTempDir('boxsync-status-');
    j = openJournal(join(tmp.dir, 'journal.db')).journal;
    pushed = [];
    nowMs = 1_800_000_000_000;
    const clock: Clock = { now: () => nowMs, sleep: systemClock.sleep };
    const queue = new TransferQueue({ concurrency: 1, clock: systemClock });
    tracker = new StatusTracker({ journal: j, roots: [root], clock, queue: () => queue, onStatus: (s) => pushed.push(s) });
  });
  afterEach(async () => {
    j.close();
    await tmp.cleanup();
  });

  const add = (from: number, n: number): void =>
    j.transaction(() => {
      for (let i = from; i < from + n; i++) j.putSynced(R, synced(`f${i}`, `id${i}`));
    });
  const lastFiles = (): number => pushed.at(-1)!.roots[0]!.inSync.files;

  it('reuses a recent count within a pass (status queries included), and counts afresh at its end and between passes', () => {
    add(0, 3);
    tracker.setPhase('scanning');
    expect(lastFiles()).toBe(3);
    add(3, 4);
    // Within the pass and less than a second later, the pushed reports reuse that count...
    nowMs += 900;
    tracker.setPhase('planning');
    tracker.emit(true);
    expect(pushed.slice(-2).map((s) => s.roots[0]!.inSync.files)).toEqual([3, 3]);
    // ...and count again once it is older.
    nowMs += 200;
    tracker.setPhase('transferring');
    expect(lastFiles()).toBe(7);
    // A status query during the pass reuses a recent count too (a client polling status costs the pass no count
    // per query), and counts again once it is older.
    add(7, 2);
    expect(tracker.report().roots[0]!.inSync.files).toBe(7);
    nowMs += 1100;
    expect(tracker.report().roots[0]!.inSync.files).toBe(9);
    // The end of the pass is exact at once; a status query between passes reuses the count taken since it ended
    // (only passes write the merge base), and the next pass's end counts again.
    add(9, 1);
    tracker.setPhase('idle');
    expect(lastFiles()).toBe(10);
    expect(tracker.report().roots[0]!.inSync.files).toBe(10);
    add(10, 1);
    tracker.setPhase('scanning');
    tracker.setPhase('idle');
    expect(tracker.report().roots[0]!.inSync.files).toBe(11);
    // A status query between passes with no count since the last pass ended counts at once.
    const other = new StatusTracker({ journal: j, roots: [root], clock: { now: () => nowMs, sleep: systemClock.sleep }, queue: () => new TransferQueue({ concurrency: 1, clock: systemClock }) });
    other.setPhase('scanning');
    other.setPhase('idle');
    expect(other.report().roots[0]!.inSync.files).toBe(11);
  });

  it('during a pass, a count longer than a slice runs in slices: a query answers at once with the last count, the next one after it ended has the new one', async () => {
    add(0, 3);
    tracker.setPhase('scanning');
    expect(lastFiles()).toBe(3);
    // The real count, made to take more than a slice before its first pause (a big journal on a slow disk).
    let stepsStarted = 0;
    const slow = Object.create(j) as Journal;
    slow.countSyncedSteps = function* (r) {
      stepsStarted += 1;
      for (const until = performance.now() + SLICE_MS + 5; performance.now() < until; );
      yield;
      return yield* j.countSyncedSteps!(r);
    };
    const queue = new TransferQueue({ concurrency: 1, clock: systemClock });
    const t = new StatusTracker({ journal: slow, roots: [root], clock: { now: () => nowMs, sleep: systemClock.sleep }, queue: () => queue });
    t.setPhase('scanning');
    t.setPhase('idle');
    expect(t.report().roots[0]!.inSync.files).toBe(3);
    t.setPhase('transferring');
    add(3, 4);
    nowMs += 1_100;
    // Due: the count starts, and this answer is the last one.
    expect(t.report().roots[0]!.inSync.files).toBe(3);
    expect(stepsStarted).toBe(1);
    // One count at a time: a query meanwhile starts no other.
    expect(t.report().roots[0]!.inSync.files).toBe(3);
    expect(stepsStarted).toBe(1);
    await waitFor(() => t.report().roots[0]!.inSync.files === 7, { what: 'the sliced count to end' });
    expect(stepsStarted).toBe(1);
  });

  it('counts only when a report is read, once per report: a pushed report nobody reads costs no count', () => {
    add(0, 3);
    let counts = 0;
    const counting = Object.create(j) as Journal;
    counting.countSynced = (root) => {
      counts += 1;
      return j.countSynced(root);
    };
    // During a pass the count runs in slices: counted the same.
    counting.countSyncedSteps = (root) => {
      counts += 1;
      return j.countSyncedSteps!(root);
    };
    const seen: StatusReport[] = [];
    const queue = new TransferQueue({ concurrency: 1, clock: systemClock });
    const t = new StatusTracker({ journal: counting, roots: [root], clock: { now: () => nowMs, sleep: systemClock.sleep }, queue: () => queue, onStatus: (s) => seen.push(s) });
    t.setPhase('scanning');
    t.setPhase('idle');
    expect(seen).toHaveLength(2);
    expect(counts).toBe(0);
    const last = seen.at(-1)!.roots[0]!;
    expect(last.inSync.files).toBe(3);
    expect(last.inSync.folders).toBe(0);
    expect(counts).toBe(1);
    // A status query is serialized at once: the count is in the JSON (between passes, the one taken since the last
    // pass ended: only passes write the merge base).
    expect(JSON.parse(JSON.stringify(t.report())).roots[0].inSync.files).toBe(3);
    expect(counts).toBe(1);
    // Within the next pass, a query counts again once the count is older than a second.
    t.setPhase('scanning');
    nowMs += 1_100;
    expect(JSON.parse(JSON.stringify(t.report())).roots[0].inSync.files).toBe(3);
    expect(counts).toBe(2);
  });

  /**
   * A tracker on the real journal whose count takes more than a slice before its first pause (a big journal on a
   * loaded machine): `n` counts the counts made in one call and the sliced ones started; `pause.run` runs once, at
   * the first pause of a sliced count.
   */
  function slowTracker(): { t: StatusTracker; n: { whole: number; steps: number }; pause: { run: (() => void) | null } } {
    const n = { whole: 0, steps: 0 };
    const pause: { run: (() => void) | null } = { run: null };
    const slow = Object.create(j) as Journal;
    slow.countSynced = (r) => {
      n.whole += 1;
      return j.countSynced(r);
    };
    slow.countSyncedSteps = function* (r) {
      n.steps += 1;
      for (const until = performance.now() + SLICE_MS + 5; performance.now() < until; );
      yield;
      const hook = pause.run;
      pause.run = null;
      hook?.();
      return yield* j.countSyncedSteps!(r);
    };
    const queue = new TransferQueue({ concurrency: 1, clock: systemClock });
    return { t: new StatusTracker({ journal: slow, roots: [root], clock: { now: () => nowMs, sleep: systemClock.sleep }, queue: () => queue }), n, pause };
  }

  it('countsReady before the first pass (starting): the query reads the count made in slices, and no count is made again', async () => {
    add(0, 5);
    const { t, n } = slowTracker();
    expect(t.report(false).phase).toBe('starting');
    await t.countsReady();
    // One count, in slices (only passes write the merge base: no pass has run), read by the query as it is.
    expect(n.steps).toBe(1);
    expect(t.report().roots[0]!.inSync.files).toBe(5);
    expect(n.whole).toBe(0);
    // Ready already: no count made again before a pass ends (the next test: a pass's end counts afresh).
    await t.countsReady();
    expect(t.report().roots[0]!.inSync.files).toBe(5);
    expect(n.steps + n.whole).toBe(1);
  });

  it('countsReady: the exact count a status query takes between passes is made in slices, and made again when a pass ended meanwhile', async () => {
    add(0, 3);
    const { t, n, pause } = slowTracker();
    t.setPhase('scanning');
    t.setPhase('idle');
    // A pass writes and ends while the first count is paused between two slices: that count is not kept.
    pause.run = () => {
      t.setPhase('scanning');
      add(3, 4);
      t.setPhase('idle');
    };
    const ready = t.countsReady();
    // The first slice ran at once and paused: the rest runs in later turns of the event loop.
    expect(n.steps).toBe(1);
    await ready;
    expect(n.steps).toBe(2);
    expect(t.report().roots[0]!.inSync.files).toBe(7);
    // The query read the count made in slices: no count in one call.
    expect(n.whole).toBe(0);
    // Ready already: no count made again until the next pass ends.
    await t.countsReady();
    expect(n.steps).toBe(2);
    add(7, 1);
    t.setPhase('scanning');
    t.setPhase('idle');
    await t.countsReady();
    expect(n.steps).toBe(3);
    expect(t.report().roots[0]!.inSync.files).toBe(8);
    expect(n.whole).toBe(0);
    // During a pass, with a count to show, a query does not wait for a due count: it starts in slices, the query is
    // answered with the last one at once, and the next query after it ended has the new one.
    t.setPhase('transferring');
    add(8, 2);
    nowMs += 1_100;
    await t.countsReady();
    expect(n.steps).toBe(3);
    expect(t.report().roots[0]!.inSync.files).toBe(8);
    expect(n.steps).toBe(4);
    await waitFor(() => t.report().roots[0]!.inSync.files === 10, { what: 'the sliced count of the pass to end' });
    expect(n.whole).toBe(0);
  });
});
