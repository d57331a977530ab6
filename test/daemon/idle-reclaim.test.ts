/**
 * The daemon returns unused heap once it goes idle (daemon/lifecycle/idle-reclaim.ts): collections are scheduled when the
 * pass runner runs out of work, dropped when a pass starts, skipped when the heap has not grown, and V8's real
 * collection is reachable without --expose-gc.
 */
import { describe, expect, it } from 'vitest';
import { IdleReclaimer, obtainGc, type HeapFigures, type IdleReclaimOptions } from '../../src/daemon/lifecycle/idle-reclaim.js';
import { PassRunner } from '../../src/daemon/lifecycle/pass-runner.js';
import type { Engine, RunSummary } from '../../src/engine/types.js';
import { silentLogger } from '../../src/logger.js';
import { waitFor } from '../support/wait.js';

const MB = 1024 * 1024;

function fakeHeap(initial: HeapFigures) {
  let now = initial;
  let reads = 0;
  return {
    set(h: HeapFigures) {
      now = h;
    },
    get reads() {
      return reads;
    },
    read: (): HeapFigures => {
      reads += 1;
      return now;
    },
  };
}

/** A reclaimer over a fake heap, never busy, whose collection leaves `after` on the heap. */
function reclaimerOn(heap: ReturnType<typeof fakeHeap>, after: HeapFigures, opts: Partial<IdleReclaimOptions>): IdleReclaimer {
  return new IdleReclaimer({ gc: () => heap.set(after), busy: () => false, heap: heap.read, ...opts });
}

describe('IdleReclaimer', () => {
  it('collects after the runner goes idle, then once more for the young generation', async () => {
    const heap = fakeHeap({ totalBytes: 120 * MB, usedBytes: 99 * MB });
    const r = reclaimerOn(heap, { totalBytes: 30 * MB, usedBytes: 23 * MB }, { delaysMs: [10, 30] });
    r.idle();
    await waitFor(() => r.collections === 2, { timeoutMs: 5_000, what: 'two collections' });
    expect(heap.read()).toEqual({ totalBytes: 30 * MB, usedBytes: 23 * MB });
  });

  it('counts the follow-up from the end of the first collection, however late that one ran', async () => {
    // V8 shrinks the young generation only after a stretch with little allocation: a follow-up scheduled from
    // idle() would run right after a first collection that fired late (the event loop held by other idle work).
    const at: number[] = [];
    const heap = fakeHeap({ totalBytes: 120 * MB, usedBytes: 99 * MB });
    const r = new IdleReclaimer({ gc: () => at.push(performance.now()), busy: () => false, heap: heap.read, delaysMs: [10, 50] });
    r.idle();
    const until = performance.now() + 120;
    while (performance.now() < until) {
      // the event loop held past both delays
    }
    await waitFor(() => r.collections === 2, { timeoutMs: 5_000, what: 'two collections' });
    // Timers fire no earlier than their delay (1 ms of rounding allowed).
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(49);
  });

  it('drops the pending collections when a pass starts, and does nothing while one runs', async () => {
    let collections = 0;
    let busyAsked = 0;
    let busy = false;
    const r = new IdleReclaimer({
      gc: () => (collections += 1),
      busy: () => {
        busyAsked += 1;
        return busy;
      },
      delaysMs: [20, 40],
      heap: () => ({ totalBytes: 200 * MB, usedBytes: 150 * MB }),
    });
    // Cancelled before its timers fire: a later idle() proves the timers would have run by then.
    r.idle();
    r.busy();
    busy = true;
    r.idle();
    await waitFor(() => busyAsked >= 1, { timeoutMs: 5_000, what: 'the timer to consult the runner' });
    expect(collections).toBe(0);
    // It asked once and cancelled the follow-up instead of collecting under a running pass. (Node runs timers
    // in order of expiry: one set now for 80 ms fires after the 40 ms follow-up would have.)
    await new Promise((res) => setTimeout(res, 80));
    expect(busyAsked).toBe(1);
    expect(collections).toBe(0);
    r.stop();
  });

  it('skips a collection when the heap has not grown since the last one', async () => {
    const heap = fakeHeap({ totalBytes: 100 * MB, usedBytes: 80 * MB });
    const r = reclaimerOn(heap, { totalBytes: 30 * MB, usedBytes: 20 * MB }, { delaysMs: [5, 10], minGrowthBytes: 16 * MB });
    r.idle();
    await waitFor(() => r.collections === 2, { timeoutMs: 5_000, what: 'the first idle collections' });
    // A small pass leaves 8 MB more in use than the 20 MB live after the last collection: not worth one, however
    // much the young generation has committed meanwhile.
    heap.set({ totalBytes: 60 * MB, usedBytes: 28 * MB });
    const readsBefore = heap.reads;
    r.idle();
    await waitFor(() => heap.reads > readsBefore, { timeoutMs: 5_000, what: 'the growth check' });
    await new Promise((res) => setTimeout(res, 40));
    expect(r.collections).toBe(2);
    // A big pass leaves 50 MB more: collected again.
    heap.set({ totalBytes: 80 * MB, usedBytes: 70 * MB });
    r.idle();
    await waitFor(() => r.collections === 4, { timeoutMs: 5_000, what: 'the collections after a big pass' });
  });

  it('does nothing without a gc function or after stop()', async () => {
    let asked = 0;
    const none = new IdleReclaimer({ gc: null, busy: () => (asked += 1) > 0, delaysMs: [1] });
    none.idle();
    let collections = 0;
    const stopped = new IdleReclaimer({ gc: () => (collections += 1), busy: () => (asked += 1) > 0, delaysMs: [1] });
    stopped.idle();
    stopped.stop();
    stopped.idle();
    await new Promise((res) => setTimeout(res, 30));
    expect(asked).toBe(0);
    expect(collections).toBe(0);
  });
});

describe('obtainGc', () => {
  it('reaches V8\'s full collection without --expose-gc, and it frees garbage', () => {
    const gc = obtainGc();
    expect(gc).toBeTypeOf('function');
    gc!();
    const base = process.memoryUsage().heapUsed;
    let garbage: number[][] | null = Array.from({ length: 64 }, () => Array.from({ length: 64 * 1024 }, (_, i) => i + 0.5));
    const held = process.memoryUsage().heapUsed;
    expect(held - base).toBeGreaterThan(16 * MB);
    expect(garbage.length).toBe(64);
    garbage = null;
    gc!();
    expect(process.memoryUsage().heapUsed - base).toBeLessThan(8 * MB);
  });
});

describe('PassRunner idle hooks', () => {
  const summary = (): RunSummary => ({
    outcome: 'converged', ops: {}, uploadedBytes: 0, downloadedBytes: 0, failedItems: 0, parkedItems: 0, problems: [], conflicts: 0, passes: 1, windows: 0, durationMs: 1, message: 'ok',
  });

  it('says busy when a pass is asked for while idle, and idle once every pass asked for has run', async () => {
    const log: string[] = [];
    let release: (() => void) | null = null;
    let runs = 0;
    const engine = {
      runOnce: async () => {
        runs += 1;
        log.push(`run${runs}`);
        if (runs === 1) await new Promise<void>((res) => (release = res));
        return summary();
      },
    } as unknown as Engine;
    const passes = new PassRunner(engine, silentLogger, { gatherMs: 1, onBusy: () => log.push('busy'), onIdle: () => log.push('idle') });
    passes.request('hint');
    await waitFor(() => release !== null, { timeoutMs: 5_000, what: 'the first pass' });
    passes.request('hint'); // coalesced into a second pass of the same run: no second 'busy'
    release!();
    await waitFor(() => log.includes('idle'), { timeoutMs: 5_000, what: 'idle' });
    expect(log).toEqual(['busy', 'run1', 'run2', 'idle']);
    passes.request('full');
    await waitFor(() => log.filter((l) => l === 'idle').length === 2, { timeoutMs: 5_000, what: 'the second idle' });
    expect(log.slice(4)).toEqual(['busy', 'run3', 'idle']);
    await passes.stop();
  });
});
