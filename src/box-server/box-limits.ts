/**
 * Box's published per-user rate limits, enforced when asked (`--box-limits`, `boxLimits` option): API calls a
 * minute and uploads a minute, each over a sliding 60-second window. A request over a limit is answered as Box
 * answers it: 429 `rate_limit_exceeded` with `Retry-After` (whole seconds until the oldest call in the window
 * leaves it). API calls are the requests to API routes (JSON calls, uploads, upload sessions, the events
 * endpoint); pre-signed download URLs, zip content URLs and the long-poll URL are not API calls, as on Box.
 * Uploads are the content uploads (new files and new versions) and the creation of upload sessions.
 */
import { BoxError } from './box-error.js';

export interface BoxLimitsOptions {
  /** API calls a minute per user (Box: 1,000). */
  readonly apiCallsPerMinute?: number;
  /** Uploads a minute per user (Box: 240). */
  readonly uploadsPerMinute?: number;
}

export const BOX_API_CALLS_PER_MINUTE = 1000;
export const BOX_UPLOADS_PER_MINUTE = 240;
const WINDOW_MS = 60_000;

/** Calls per key over a sliding window: the times of the calls still in it, oldest first (faults.ts uses it too). */
export class SlidingWindow {
  private readonly calls = new Map<string, number[]>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number = WINDOW_MS,
  ) {}

  /** Seconds to wait when `key` is at the limit (the call is not counted), else null (and it is). */
  take(key: string, nowMs: number): number | null {
    const list = this.calls.get(key) ?? [];
    let drop = 0;
    while (drop < list.length && list[drop]! <= nowMs - this.windowMs) drop++;
    if (drop > 0) list.splice(0, drop);
    if (list.length >= this.limit) {
      this.calls.set(key, list);
      return Math.max(1, Math.ceil((list[0]! + this.windowMs - nowMs) / 1000));
    }
    list.push(nowMs);
    this.calls.set(key, list);
    return null;
  }
}

const UPLOAD_PATH = /^\/files(?:\/\d+)?\/content\/?$|^\/files(?:\/\d+)?\/upload_sessions\/?$/;

export class BoxLimits {
  private readonly api: SlidingWindow;
  private readonly uploads: SlidingWindow;
  readonly apiCallsPerMinute: number;
  readonly uploadsPerMinute: number;

  constructor(opts: BoxLimitsOptions = {}) {
    this.apiCallsPerMinute = opts.apiCallsPerMinute ?? BOX_API_CALLS_PER_MINUTE;
    this.uploadsPerMinute = opts.uploadsPerMinute ?? BOX_UPLOADS_PER_MINUTE;
    this.api = new SlidingWindow(this.apiCallsPerMinute);
    this.uploads = new SlidingWindow(this.uploadsPerMinute);
  }

  /** Throws Box's 429 when this API call by `userId` is over a limit; counts it otherwise. */
  check(userId: string, method: string, apiPath: string, nowMs: number): void {
    const isUpload = method === 'POST' && UPLOAD_PATH.test(apiPath);
    if (isUpload) {
      const wait = this.uploads.take(userId, nowMs);
      if (wait !== null) throw limited(wait, `upload rate limit of ${this.uploadsPerMinute} a minute`);
    }
    const wait = this.api.take(userId, nowMs);
    if (wait !== null) throw limited(wait, `API rate limit of ${this.apiCallsPerMinute} calls a minute`);
  }
}

function limited(waitSec: number, what: string): BoxError {
  return new BoxError(429, 'rate_limit_exceeded', `Request rate limit exceeded (${what}), please try again after ${waitSec} seconds`, null, {
    'Retry-After': String(waitSec),
  });
}
