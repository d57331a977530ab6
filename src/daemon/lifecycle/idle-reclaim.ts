/**
 * Give memory back once the daemon goes idle.
 *
 * A pass over a big tree allocates a lot (the scan, the snapshot, the plan), and V8 collects garbage only when
 * JavaScript allocates. A daemon that goes quiet after its first pass therefore keeps every heap page that pass
 * grew: measured at 100,000 files, 99 MB of heap in use (23 MB of it live) and 228 MB of resident memory, for as
 * long as nothing changes. Node gives V8 no idle notifications, so its memory reducer never starts either.
 *
 * So: when the pass runner has nothing left to do, wait a little (more hints often follow a pass), then run a
 * full collection if the heap holds clearly more than was live after the last one; a second one, 6 s after the end
 * of the first, lets V8 shrink the young generation (it does once its allocation rate over 5 s is low). A pass that
 * starts cancels both. At 100,000 files this brings the idle daemon to 101-108 MiB, 91-93 MiB with the daemon's
 * smaller journal cache (docs/internals.md, "Memory when idle"). A collection
 * of a 25 MB heap takes tens of milliseconds, and the heap-growth test keeps a daemon that runs a small pass every
 * few seconds from collecting after each one.
 */
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** After the runner goes idle: the first collection, then the one that lets the young generation shrink. */
export const IDLE_RECLAIM_DELAYS_MS: readonly number[] = [2_000, 6_000];
/**
 * Collect only when the heap in use is this much above what was live after the last collection: what a pass
 * left in the old generation (the young one is swept by V8's scavenges as it goes), so that a daemon running a
 * small pass every few seconds does not pay for two full collections after each.
 */
export const RECLAIM_MIN_GROWTH_BYTES = 16 * 1024 * 1024;

export type CollectGarbage = () => void;

/**
 * V8's full collection, reachable without starting node with --expose-gc: the flag set at run time exposes
 * `gc` to contexts created afterwards (the `expose-gc` package does the same). Null when it is not available
 * (another engine, or a V8 that refuses the flag), and the daemon then simply keeps its pages.
 */
export function obtainGc(): CollectGarbage | null {
  const existing = (globalThis as { gc?: unknown }).gc;
  if (typeof existing === 'function') return existing as CollectGarbage;
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as unknown;
    return typeof gc === 'function' ? (gc as CollectGarbage) : null;
  } catch {
    return null;
  }
}

export interface HeapFigures {
  /** Bytes V8 holds for the heap (committed pages). */
  readonly totalBytes: number;
  /** Bytes in use (live and not yet collected). */
  readonly usedBytes: number;
}

export interface IdleReclaimOptions {
  readonly gc: CollectGarbage | null;
  /** True while a pass runs or is wanted: a timer that fires then does nothing. */
  readonly busy: () => boolean;
  readonly delaysMs?: readonly number[];
  readonly minGrowthBytes?: number;
  readonly heap?: () => HeapFigures;
  /** Called after each collection with the heap before and after (for the debug log). */
  readonly onCollected?: (before: HeapFigures, after: HeapFigures) => void;
}

const v8Heap = (): HeapFigures => {
  const s = getHeapStatistics();
  return { totalBytes: s.total_heap_size, usedBytes: s.used_heap_size };
};

export class IdleReclaimer {
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Heap in use right after the last collection (null before the first: the first idle always collects). */
  private liveAfterLast: number | null = null;
  private stopped = false;
  collections = 0;

  constructor(private readonly opts: IdleReclaimOptions) {}

  /** The pass runner has nothing left to do: schedule the collections (replacing any pending ones). */
  idle(): void {
    if (!this.opts.gc || this.stopped) return;
    this.cancel();
    this.schedule(0);
  }

  /**
   * Collection `i` after delaysMs[i]: the first counted from idle(), each later one from the end of the one
   * before, so that it follows a stretch of that length with (nearly) no allocation even when the first one
   * fired late (a timer can, on a loaded machine). The idle journal check (convergence-watch.ts) runs in slices for
   * seconds on a large journal: the daemon counts it as busy, and its end schedules the collections again. V8 shrinks the young generation only when its allocation rate over the last 5 s is low.
   */
  private schedule(i: number): void {
    const delays = this.opts.delaysMs ?? IDLE_RECLAIM_DELAYS_MS;
    const ms = delays[i];
    if (ms === undefined) return;
    const t = setTimeout(() => {
      this.timers.delete(t);
      // The later collections are for the young generation: they run whenever the first one did.
      if (this.collect(i > 0)) this.schedule(i + 1);
    }, ms);
    t.unref();
    this.timers.add(t);
  }

  /** A pass starts: pending collections are dropped (the pass's end schedules new ones). */
  busy(): void {
    this.cancel();
  }

  stop(): void {
    this.stopped = true;
    this.cancel();
  }

  private cancel(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  /** One collection; false when there was none (busy, stopped, or the heap has not grown): no follow-up then. */
  private collect(followUp: boolean): boolean {
    const gc = this.opts.gc;
    if (!gc || this.stopped || this.opts.busy()) {
      this.cancel();
      return false;
    }
    const heap = this.opts.heap ?? v8Heap;
    const before = heap();
    const grown = this.liveAfterLast === null || before.usedBytes - this.liveAfterLast >= (this.opts.minGrowthBytes ?? RECLAIM_MIN_GROWTH_BYTES);
    if (!grown && !followUp) {
      // Nothing worth a collection now; skip the follow-up too.
      this.cancel();
      return false;
    }
    gc();
    this.collections += 1;
    const after = heap();
    this.liveAfterLast = after.usedBytes;
    this.opts.onCollected?.(before, after);
    return true;
  }
}
