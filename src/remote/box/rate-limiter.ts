/**
 * The pacer of one Box account: the single owner of Box's rate limits (a 429 is handled here and nowhere
 * else: the HTTP layer and the token refresh report it and wait their turn again; no queue above retries it).
 *
 * Adaptive by default, the way rclone's pacer and TCP do it:
 * - Start unpaced: requests go out as fast as the callers' concurrency allows.
 * - On a 429, every lane pauses until its Retry-After (the whole client backs off, not just the request that
 *   was refused). The lane's pace is then set from what Box actually let through: the requests that succeeded
 *   in the last window, a little below (95 %). That is Box's limit, measured, so the pace hugs it instead of
 *   halving to half of it.
 * - While requests succeed, the pace rises again additively: after 5 windows without a 429, +2 % per window
 *   (Box's limits rarely move, so probing above them is slow and each probe costs one 429). Once it is far
 *   above the last measured limit (4x), the lane is unpaced again.
 *
 * Configured caps (`rateLimit.apiCallsPerMinute`, `.uploadsPerMinute`) stay available as a ceiling: a sliding
 * window of that many request starts per window. Without them there is no fixed cap.
 *
 * Only API calls count: pre-signed download URLs (served by the download host) and the long poll do not pass
 * through the pacer at all (BoxHttp decides that, see `lane: null`).
 */
import { NumberRing } from '../../core/ring.js';
import type { Clock } from '../../ports/clock.js';

export type Lane = 'calls' | 'uploads';

export interface RateLimitOptions {
  /** Ceiling on API calls per window; none by default (adaptive only). */
  readonly callsPerMinute?: number;
  /** Ceiling on upload requests per window; none by default. */
  readonly uploadsPerMinute?: number;
  /** The window the caps and the adaptive measure use; 60 000 (Box's per-minute limits) unless a test shrinks it. */
  readonly windowMs?: number;
}

/** Floor of the adaptive pace, requests per second. */
const MIN_RATE = 0.2;
const DECREASE_TO = 0.95;
const INCREASE_BY = 1.02;
const UNPACE_ABOVE = 4;
const QUIET_WINDOWS = 5;
/** Starts (and 429s) kept per lane at most, beyond a cap's own count: past that the measure is exact enough. */
const KEEP_STARTS = 20_000;

interface LaneState {
  readonly cap: number | null;
  /** Start times of recent requests (at most one window's worth, and at most KEEP_STARTS or the cap's). */
  readonly starts: NumberRing;
  /** Times of recent 429s (as many at most). */
  readonly refusals: NumberRing;
  /** Requests per second, or null when unpaced. */
  rate: number | null;
  /** The limit measured at the last 429 (requests per second). */
  measured: number;
  /** Earliest start of the next request when paced. */
  nextAtMs: number;
  lastChangeMs: number;
  lastRefusalMs: number;
  /** Waiters in arrival order: each gets its own start slot. */
  tail: Promise<void>;
}

export class RateLimiter {
  private readonly lanes: Record<Lane, LaneState>;
  private readonly windowMs: number;
  private pausedUntilMs = 0;
  private released = false;
  private readonly closing = new AbortController();

  constructor(
    opts: RateLimitOptions,
    private readonly clock: Clock,
  ) {
    this.windowMs = opts.windowMs ?? 60_000;
    const lane = (cap: number | undefined): LaneState => ({
      cap: cap === undefined ? null : Math.max(1, Math.floor(cap)),
      starts: new NumberRing(Math.max(KEEP_STARTS, cap === undefined ? 0 : Math.floor(cap))),
      refusals: new NumberRing(Math.max(KEEP_STARTS, cap === undefined ? 0 : Math.floor(cap))),
      rate: null,
      measured: 0,
      nextAtMs: 0,
      lastChangeMs: 0,
      lastRefusalMs: 0,
      tail: Promise.resolve(),
    });
    this.lanes = { calls: lane(opts.callsPerMinute), uploads: lane(opts.uploadsPerMinute) };
  }

  /**
   * Run `fn` when its lane allows; the returned promise settles with fn's outcome. An abort of `signal` while
   * the request still waits for its turn (a pause after a 429, the pace, the cap) rejects at once: a stop never
   * waits out a Retry-After.
   */
  async run<T>(lane: Lane, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.turn(this.lanes[lane], signal);
    return fn();
  }

  /** Epoch ms until which every lane is paused (0 when it is not). */
  get pausedUntil(): number {
    return this.pausedUntilMs > this.clock.now() ? this.pausedUntilMs : 0;
  }

  /** The pace of a lane in requests per second, or null when unpaced (for status and tests). */
  pace(lane: Lane): number | null {
    return this.lanes[lane].rate;
  }

  /** Stop starting new requests until `untilMs`; extends (never shortens) a pause already in force. */
  pauseUntil(untilMs: number): void {
    if (untilMs > this.pausedUntilMs) this.pausedUntilMs = untilMs;
  }

  /**
   * Box refused a request of this lane with 429: pause every lane for `retryAfterMs`, and pace this lane just
   * below what Box let through in the last window.
   */
  rateLimited(laneName: Lane, retryAfterMs: number): void {
    const now = this.clock.now();
    this.pauseUntil(now + retryAfterMs);
    const lane = this.lanes[laneName];
    this.trim(lane, now);
    lane.refusals.push(now);
    // Box allows N requests per window: what got through in the last window is N, however fast it went.
    const ok = Math.max(0, lane.starts.length - lane.refusals.length);
    const measured = Math.max(MIN_RATE, (ok / this.windowMs) * 1000);
    lane.measured = measured;
    lane.rate = Math.max(MIN_RATE, Math.min(lane.rate ?? Infinity, measured * DECREASE_TO));
    lane.lastChangeMs = now;
    lane.lastRefusalMs = now;
  }

  /** End any pause now and let every waiter through at once (used on close, so that queued requests settle). */
  release(): void {
    this.released = true;
    this.pausedUntilMs = 0;
    this.closing.abort();
  }

  private async turn(lane: LaneState, signal: AbortSignal | undefined): Promise<void> {
    // One waiter at a time per lane takes the next slot; the others queue behind it in arrival order.
    const previous = lane.tail;
    let done!: () => void;
    lane.tail = new Promise<void>((r) => (done = r));
    try {
      await abortable(previous, signal);
      for (;;) {
        signal?.throwIfAborted();
        if (this.released) return;
        const now = this.clock.now();
        this.trim(lane, now);
        this.increase(lane, now);
        let waitUntil = Math.max(this.pausedUntilMs, lane.rate === null ? 0 : lane.nextAtMs);
        if (lane.cap !== null && lane.starts.length >= lane.cap) waitUntil = Math.max(waitUntil, lane.starts.at(lane.starts.length - lane.cap)! + this.windowMs);
        if (waitUntil <= now) {
          lane.starts.push(now);
          if (lane.rate !== null) lane.nextAtMs = Math.max(now, lane.nextAtMs) + 1000 / lane.rate;
          return;
        }
        await this.sleep(waitUntil - now, signal);
      }
    } finally {
      done();
    }
  }

  /** Additive increase: after QUIET_WINDOWS without a 429, +2 % per window; far above the measured limit, unpaced. */
  private increase(lane: LaneState, now: number): void {
    if (lane.rate === null) return;
    const lastRefusal = lane.refusals.at(-1) ?? lane.lastRefusalMs;
    if (now - lastRefusal < QUIET_WINDOWS * this.windowMs || now - lane.lastChangeMs < this.windowMs) return;
    lane.rate *= INCREASE_BY;
    lane.lastChangeMs = now;
    if (lane.rate > lane.measured * UNPACE_ABOVE) lane.rate = null;
  }

  /**
   * Keep one window of starts and 429s. Their rings (core/ring.ts) hold at most KEEP_STARTS (or the cap's count)
   * and drop the oldest on a push when full, so dropping what left the window moves nothing: each start is dropped
   * once, by the turn that finds it old.
   */
  private trim(lane: LaneState, now: number): void {
    lane.refusals.dropWhile((t) => now - t >= this.windowMs);
    lane.starts.dropWhile((t) => now - t >= this.windowMs);
  }

  private async sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
    const signals = [this.closing.signal, ...(signal ? [signal] : [])];
    try {
      await this.clock.sleep(ms, AbortSignal.any(signals));
    } catch (e) {
      if (signal?.aborted) throw signal.reason ?? e;
      // released: the loop sees it
    }
  }
}

function abortable(p: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<void>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
