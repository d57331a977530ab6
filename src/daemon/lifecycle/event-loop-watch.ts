/**
 * How long the daemon's event loop was blocked: the delay between when a timer should have fired and when it did
 * (node's `monitorEventLoopDelay`, sampled every 20 ms). While the loop is blocked, nothing else runs: not the
 * control socket (`boxsync status` waits), not the watcher's events, not the long poll. The daemon keeps every
 * piece of work in slices so that no block lasts more than about 100 ms; `status` shows the figures so that a
 * user (and the benchmark) can see whether it holds.
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { EventLoopStatus } from '../control/control-protocol.js';

/** The window of `recentMaxDelayMs`: rolled over lazily, when a status is asked after it ended. */
const WINDOW_MS = 60_000;
const RESOLUTION_MS = 20;

const ms = (ns: number): number => (Number.isFinite(ns) ? Math.round(ns / 1e5) / 10 : 0);

export class EventLoopWatch {
  private readonly all: IntervalHistogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  private readonly recent: IntervalHistogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  private windowStartMs: number;

  constructor(private readonly now: () => number = Date.now) {
    this.windowStartMs = now();
    this.all.enable();
    this.recent.enable();
  }

  status(): EventLoopStatus {
    // The histograms report a sample only once one was taken; before that, max is 0 and percentile NaN-free.
    const s: EventLoopStatus = {
      maxDelayMs: ms(this.all.max),
      recentMaxDelayMs: ms(this.recent.max),
      p99DelayMs: this.all.count > 0 ? ms(this.all.percentile(99)) : 0,
    };
    if (this.now() - this.windowStartMs >= WINDOW_MS) {
      this.recent.reset();
      this.windowStartMs = this.now();
    }
    return s;
  }

  stop(): void {
    this.all.disable();
    this.recent.disable();
  }
}
