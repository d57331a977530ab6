/**
 * Long synchronous work in slices, so that it never holds the event loop for long: while a slice runs, nothing
 * else does (not the control socket, not the watcher's events, not a live change, not SIGTERM's handler).
 *
 * The work is written once, as a generator that yields (no value) at the points where it may be paused; it then
 * runs either whole at once (runWhole: the synchronous callers, tests, the simulation) or in slices of about
 * `sliceMs` each (runSliced), with the event loop free between them. A generator over the journal's keyset
 * pages (Journal.localUnder, syncedUnder) resumes from the path it stopped at, however long the pause.
 */

/** Work that may be paused at each `yield`, and ends with a T. */
export type Steps<T> = Generator<void, T, void>;

/** A slice's length when the caller names none: long enough that yielding costs nothing, short enough that a
 * status answer or a watcher event waits at most about that long. */
export const SLICE_MS = 25;

/** Rows a loop reads between two pause points (`yield`): a few milliseconds of journal reads at most. */
export const ROWS_PER_STEP = 64;

export interface SliceStats {
  /** Slices run (1: the work ended in its first slice, at once). */
  slices: number;
  /** Time spent in the slices, in ms (the work itself, not the pauses between them). */
  workMs: number;
  /** The longest slice, in ms (the longest the work held the event loop). */
  longestMs: number;
}

export type Sliced<T> = { readonly done: true; readonly value: T; readonly stats: SliceStats } | { readonly done: false; readonly stats: SliceStats };

export interface SliceOptions {
  /** Each slice runs until this much time has passed at its next pause point (default SLICE_MS). */
  readonly sliceMs?: number;
  /**
   * Awaited between two slices (default: one turn of the event loop, setImmediate): what else is waiting runs
   * first. Resolves false to abandon the work (its generator is closed: its `finally` blocks run).
   */
  readonly between?: () => Promise<boolean>;
}

/** Runs work to its end at once. */
export function runWhole<T>(steps: Steps<T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

export const nextTurn = (): Promise<boolean> => new Promise((resolve) => setImmediate(() => resolve(true)));

/**
 * Runs work in slices. The first slice runs now, synchronously: when the work ends in it (a small tree), its
 * result is returned at once, not a promise. Otherwise a promise of the result (done: false when `between`
 * abandoned it). An exception thrown by the work ends it: thrown by the first slice, or rejected later.
 */
export function runSliced<T>(steps: Steps<T>, opts: SliceOptions = {}): Sliced<T> | Promise<Sliced<T>> {
  const sliceMs = opts.sliceMs ?? SLICE_MS;
  const between = opts.between ?? nextTurn;
  const stats: SliceStats = { slices: 0, workMs: 0, longestMs: 0 };
  const slice = (): IteratorResult<void, T> => {
    const t0 = performance.now();
    stats.slices += 1;
    try {
      let r = steps.next();
      while (!r.done && performance.now() - t0 < sliceMs) r = steps.next();
      return r;
    } finally {
      const ms = performance.now() - t0;
      stats.workMs += ms;
      stats.longestMs = Math.max(stats.longestMs, ms);
    }
  };
  const first = slice();
  if (first.done) return { done: true, value: first.value, stats };
  return (async (): Promise<Sliced<T>> => {
    for (;;) {
      let goOn = false;
      try {
        goOn = await between();
      } finally {
        if (!goOn) steps.return(undefined as never);
      }
      if (!goOn) return { done: false, stats };
      const r = slice();
      if (r.done) return { done: true, value: r.value, stats };
    }
  })();
}
