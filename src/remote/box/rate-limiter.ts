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

  /** Run `fn` when its lane allows; the returned promise settles with fn's outcome. */
  run<T>(lane: Lane, fn: () => Promise<T>): Promise<T> {
    return this.queues[lane].add(fn);
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
      while (this.clock.now() < this.pausedUntilMs) await this.clock.sleep(this.pausedUntilMs - this.clock.now());
      this.pausedUntilMs = 0;
      this.resume = undefined;
      for (const q of Object.values(this.queues)) q.start();
    })();
  }

  /** End any pause now (used on close, so that queued requests can settle). */
  release(): void {
    this.pausedUntilMs = 0;
    for (const q of Object.values(this.queues)) q.start();
  }
}
