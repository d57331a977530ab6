/**
 * The idle check in slices (issue 29 points 6 and 8) on a real engine and SQLite journal: the sliced walk finds
 * exactly what the whole walk finds, a path's own lookup (pathOutOfSync) agrees with it, a pass that runs while the
 * check is paused goes first and what it put in sync is not reported, and close() ends a check at its next slice.
 */
import { describe, expect, it } from 'vitest';
import { asRelPath } from '../../src/core/model.js';
import { runSliced, type SliceStats } from '../../src/core/slices.js';
import type { ConvergenceWatch } from '../../src/daemon/lifecycle/convergence-watch.js';
import { outOfSync, outOfSyncSteps, pathOutOfSync } from '../../src/engine/out-of-sync.js';
import { expectConverged, makeHarness, type Harness } from '../engine/support/harness.js';
import { closedAfterEach } from '../support/closed-after-each.js';
import { waitFor } from '../support/wait.js';
import { noIgnore, watchOnHarness } from './watch-harness.js';

const harness = closedAfterEach(makeHarness);
const FILES = 240;
const name = (i: number): string => `d${i % 4}/f${String(i).padStart(4, '0')}.txt`;

/** FILES files in 4 folders, mirrored: about 3 × 250 journal rows, several pause points each. */
async function mirrored(): Promise<Harness> {
  const h = await harness();
  for (let i = 0; i < FILES; i++) await h.write(name(i), `file ${i}`);
  expectConverged(await h.run());
  expect(outOfSync(h.journal, h.root, noIgnore)).toEqual([]);
  return h;
}

type Checked = { readonly done: boolean; readonly forgotten: number; readonly stats: SliceStats };

function watchOf(h: Harness, state: { busy: boolean; requests: number; checked: Checked[] }): ConvergenceWatch {
  return watchOnHarness(h, {
    request: () => (state.requests += 1),
    busy: () => state.busy,
    sliceMs: 0,
    onChecked: (c) => state.checked.push(c),
  });
}

describe('the out-of-sync walk in slices', () => {
  it('finds what the whole walk finds, in many slices, and each path it names is out of sync by its own lookup', async () => {
    const h = await mirrored();
    const at = (p: string) => h.journal.getLocal(h.root.id, asRelPath(p))!;
    h.journal.putLocal(h.root.id, { ...at(name(7)), sizeBytes: at(name(7)).sizeBytes + 1 });
    h.journal.deleteLocal(h.root.id, asRelPath(name(100)));
    h.journal.putLocal(h.root.id, { ...at(name(5)), path: asRelPath('d1/zz-new.txt'), inode: at(name(5)).inode + 10_000 });
    const changed = h.journal.getRemote(h.journal.getSynced(h.root.id, asRelPath(name(200)))!.remoteId)!;
    h.journal.putRemote({ ...changed, etag: `${changed.etag}x` });
    h.journal.deleteRemote(h.journal.getSynced(h.root.id, asRelPath(name(222)))!.remoteId);
    const whole = outOfSync(h.journal, h.root, noIgnore);
    expect(whole.map((o) => `${o.path}: ${o.why}`).sort()).toEqual(
      [`${name(7)}: changed locally`, `${name(100)}: deleted locally`, 'd1/zz-new.txt: new locally', `${name(200)}: changed on Box`, `${name(222)}: gone from Box`].sort(),
    );
    // Every pause point a slice of its own, with a turn of the event loop between: the same answer, in order.
    let turns = 0;
    const run = runSliced(outOfSyncSteps(h.journal, h.root, noIgnore), { sliceMs: 0, between: () => new Promise((r) => setImmediate(() => r(++turns > 0))) });
    expect(run).toBeInstanceOf(Promise);
    const sliced = await run;
    expect(sliced.done && sliced.value).toEqual(whole);
    expect(sliced.stats.slices).toBeGreaterThan(10);
    expect(turns).toBe(sliced.stats.slices - 1);
    // One lookup per path says the same; a path in sync has no reason.
    for (const o of whole) expect(pathOutOfSync(h.journal, h.root, noIgnore, o.path)).toBe(o.why);
    for (const i of [0, 1, 99, 239]) expect(pathOutOfSync(h.journal, h.root, noIgnore, asRelPath(name(i)))).toBeNull();
    expect(pathOutOfSync(h.journal, h.root, noIgnore, asRelPath('d0'))).toBeNull();
    expect(pathOutOfSync(h.journal, h.root, noIgnore, asRelPath('nowhere.txt'))).toBeNull();
    // Ignored (the folder, and so what is below it): no reason, as the walk names none.
    const ignoreD3 = (p: string): boolean => p === 'd3';
    expect(outOfSync(h.journal, h.root, ignoreD3).some((o) => o.path.startsWith('d3/'))).toBe(false);
    expect(pathOutOfSync(h.journal, h.root, ignoreD3, asRelPath(name(7)))).toBeNull();
  });
});

describe('ConvergenceWatch in slices', () => {
  it('a pass asked for during the check runs first; what that pass put in sync is not reported', async () => {
    const h = await mirrored();
    const stale = asRelPath(name(0)); // the first path of the walk: read in the check's first slice
    const l = h.journal.getLocal(h.root.id, stale)!;
    // Control: no pass meanwhile, the stale row is reported (forgotten) and a pass asked for.
    const quiet = { busy: false, requests: 0, checked: [] as Checked[] };
    const w1 = watchOf(h, quiet);
    h.journal.putLocal(h.root.id, { ...l, sizeBytes: l.sizeBytes + 1 });
    w1.idle();
    expect(w1.status()).toMatchObject({ running: true, done: 0 });
    await waitFor(() => quiet.checked.length === 1, { timeoutMs: 30_000, what: 'the quiet check' });
    expect(quiet.checked[0]).toMatchObject({ done: true, forgotten: 1 });
    expect(quiet.checked[0]!.stats.slices).toBeGreaterThan(5);
    expect(quiet.requests).toBe(1);
    expect(w1.status()).toEqual({ running: false, slices: 0, pauses: 0, done: 1 });
    w1.close();

    // The pass it asked for puts the row right (read again from disk); then the row goes stale again.
    expectConverged(await h.run());
    expect(h.engine.hasHints()).toBe(false);
    h.journal.putLocal(h.root.id, { ...l, sizeBytes: l.sizeBytes + 1 });

    // Now a pass comes while the check runs: the check waits for it, and then drops what it put in sync.
    const raced = { busy: false, requests: 0, checked: [] as Checked[] };
    const w2 = watchOf(h, raced);
    w2.idle();
    expect(w2.status().running).toBe(true);
    raced.busy = true;
    const slicesBefore = w2.status().slices;
    h.engine.hintLocal(h.root.id, [stale]);
    expectConverged(await h.run());
    expect(h.journal.getLocal(h.root.id, stale)!.sizeBytes).toBe(l.sizeBytes); // the pass re-read it from disk
    // While the pass ran, the check did not move on.
    expect(w2.status()).toMatchObject({ running: true, slices: slicesBefore, pauses: 1 });
    expect(raced.checked).toEqual([]);
    raced.busy = false;
    await waitFor(() => raced.checked.length === 1, { timeoutMs: 30_000, what: 'the raced check' });
    expect(raced.checked[0]).toMatchObject({ done: true, forgotten: 0 });
    expect(raced.requests).toBe(0);
    w2.close();
  });

  it('close() ends a running check at its next slice, and nothing is asked for', async () => {
    const h = await mirrored();
    const l = h.journal.getLocal(h.root.id, asRelPath(name(0)))!;
    h.journal.putLocal(h.root.id, { ...l, sizeBytes: l.sizeBytes + 1 });
    const state = { busy: false, requests: 0, checked: [] as Checked[] };
    const w = watchOf(h, state);
    w.idle();
    expect(w.status().running).toBe(true);
    w.close();
    await waitFor(() => state.checked.length === 1, { timeoutMs: 30_000, what: 'the closed check' });
    expect(state.checked[0]).toMatchObject({ done: false, forgotten: 0 });
    expect(state.checked[0]!.stats.slices).toBe(1);
    expect(state.requests).toBe(0);
    expect(w.status().running).toBe(false);
    expect(h.engine.hasHints()).toBe(false);
  });
});

