/**
 * The shared request queues of one Box account: API calls (default 1000/min) and upload requests (default
 * 240/min, Box's published per-user limits). A 429 anywhere pauses both queues until its Retry-After has
 * passed, so that the whole client backs off, not just the request that was refused.
 */
import PQueue from 'p-queue';
import type { Clock } from '../../ports/clock.js';

export type Lane = 'calls' | 'uploads';

export interface RateLimitOptions {
  readonly callsPerMinute?: number;
  readonly uploadsPerMinute?: number;
  /** The window the per-minute caps apply to; 60 000 unless a test shrinks it. */
  readonly windowMs?: number;
}

export class RateLimiter {
  private readonly queues: Readonly<Record<Lane, PQueue>>;
  private pausedUntilMs = 0;
  private resume: Promise<void> | undefined;
  private readonly released = new AbortController();

  constructor(
    opts: RateLimitOptions,
    private readonly clock: Clock,
  ) {
    const make = (perMinute: number): PQueue => new PQueue({ intervalCap: perMinute, interval: opts.windowMs ?? 60_000, strict: true });
    this.queues = {
      calls: make(opts.callsPerMinute ?? 1000),
      uploads: make(opts.uploadsPerMinute ?? 240),
    };
  }

  /**
   * Run `fn` when its lane allows; the returned promise settles with fn's outcome. An abort of `signal` while
   * the request still waits for its turn (a paused queue after a 429) rejects at once: a stop never waits out a
   * Retry-After.
   */
  run<T>(lane: Lane, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    return this.queues[lane].add(fn, signal === undefined ? {} : { signal });
  }

  /** Epoch ms until which the queues are paused (0 when they are not). */
  get pausedUntil(): number {
    return this.pausedUntilMs;
  }

  /** Stop starting new requests until `untilMs`; extends (never shortens) a pause already in force. */
  pauseUntil(untilMs: number): void {
    if (untilMs <= this.pausedUntilMs) return;
    this.pausedUntilMs = untilMs;
    for (const q of Object.values(this.queues)) q.pause();
    if (this.resume) return;
    this.resume = (async () => {
      try {
        while (this.clock.now() < this.pausedUntilMs && !this.released.signal.aborted) {
          await this.clock.sleep(this.pausedUntilMs - this.clock.now(), this.released.signal);
        }
      } catch {
        // released: the pause ends now
      }
      this.pausedUntilMs = 0;
      this.resume = undefined;
      for (const q of Object.values(this.queues)) q.start();
    })();
  }

  /** End any pause now (used on close, so that queued requests can settle). */
  release(): void {
    this.released.abort();
    this.pausedUntilMs = 0;
    for (const q of Object.values(this.queues)) q.start();
  }
}
