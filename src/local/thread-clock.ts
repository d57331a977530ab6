/**
 * How long the calling thread was blocked in the kernel (asleep: neither on a CPU nor waiting for one), from Linux's
 * /proc/thread-self/schedstat (time on the CPU and time waiting on a run queue, in ns).
 *
 * What it is for: a window of synchronous lstats is timed to learn whether the disk answered them (then they should
 * go through the thread pool, quick-fs.ts); on a loaded machine the wall time of a window also counts the time the
 * scheduler gave the CPU to other processes, and a walk of a million cached entries met three such windows in a row
 * and went through the pool for the rest (about twice the main thread's CPU, and its wall time waiting for the
 * pool). A thread waiting for the disk sleeps; a thread that was preempted waits on a run queue. So the gate is
 * given the time the window slept, not its wall time (less SCHED_LAG_MS: a window of 64 lstats that each wait
 * 0.2 ms for the disk still counts as slow). Where schedstat cannot be read, `open` gives undefined and the caller
 * keeps the wall time.
 */
import { closeSync, openSync, readSync } from 'node:fs';

/** The most CPU time of a running thread schedstat may not show yet: one tick at 100 Hz. */
export const SCHED_LAG_MS = 10;

export class ThreadClock {
  readonly #fd: number;
  readonly #buf = Buffer.alloc(96);

  private constructor(fd: number) {
    this.#fd = fd;
  }

  /** The clock of the calling thread; undefined where schedstat is missing (not Linux, no schedstats). */
  static open(): ThreadClock | undefined {
    let fd: number;
    try {
      fd = openSync('/proc/thread-self/schedstat', 'r');
    } catch {
      return undefined;
    }
    const clock = new ThreadClock(fd);
    if (clock.busyNs() !== undefined) return clock;
    clock.close();
    return undefined;
  }

  /** Nanoseconds on the CPU plus waiting for one, since the thread began; undefined when unreadable. */
  busyNs(): number | undefined {
    let n: number;
    try {
      n = readSync(this.#fd, this.#buf, 0, this.#buf.length, 0);
    } catch {
      return undefined;
    }
    const m = /^(\d+) (\d+) /.exec(this.#buf.toString('latin1', 0, n));
    return m === null ? undefined : Number(m[1]) + Number(m[2]);
  }

  /**
   * Of `wallMs` spent since `busyNsBefore` (a `busyNs()` taken then), the milliseconds the thread surely slept;
   * `wallMs` itself when either reading failed. The kernel adds a running thread's CPU time to schedstat at a
   * scheduler tick or a switch, not when it is read, so up to a tick of it (SCHED_LAG_MS at the lowest usual
   * tick rate, 100 Hz) may be missing from the second reading: that much is never counted as sleep.
   */
  sleptMs(busyNsBefore: number | undefined, wallMs: number): number {
    const after = busyNsBefore === undefined ? undefined : this.busyNs();
    if (busyNsBefore === undefined || after === undefined) return wallMs;
    return Math.max(0, wallMs - (after - busyNsBefore) / 1e6 - SCHED_LAG_MS);
  }

  close(): void {
    try {
      closeSync(this.#fd);
    } catch {
      // already closed
    }
  }
}
