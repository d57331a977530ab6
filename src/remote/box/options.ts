/**
 * The configuration the composition root passes to `createBoxAdapter`. Only base URLs and credentials differ
 * between api.box.com and box-server.
 */
import type { ZipPrefetchOptions } from './zip-prefetch.js';
import type { Logger } from '../../logger.js';
import type { Clock } from '../../ports/clock.js';
import type { UploadSessionStore } from '../../ports/remote-store.js';
import type { BoxAuthConfig } from './auth.js';
import type { RateLimitOptions } from './rate-limiter.js';

export interface BoxAdapterOptions {
  /** e.g. https://api.box.com/2.0 */
  readonly apiUrl: string;
  /** e.g. https://upload.box.com/api/2.0 */
  readonly uploadUrl: string;
  /** e.g. https://api.box.com/oauth2/token */
  readonly tokenUrl: string;
  readonly auth: BoxAuthConfig;
  /** Act on behalf of this user (admin / service-account setups): the As-User header. */
  readonly asUser?: string;
  /** Read through a shared link (BoxApi header), e.g. for a read-only mirror of someone's shared folder. */
  readonly sharedLink?: { readonly url: string; readonly password?: string };
  readonly rateLimit?: RateLimitOptions;
  /** Where resumable upload sessions are persisted (the journal). Without it sessions cannot survive a restart. */
  readonly uploadSessions?: UploadSessionStore;
  /** Files of at least this size go through upload sessions. Default 20_000_000 (Box's minimum for sessions). */
  readonly sessionThresholdBytes?: number;
  /** Uploads of at least this size are preflighted (upload.ts, PREFLIGHT_MIN_BYTES). Default 1 MiB. */
  readonly preflightMinBytes?: number;
  /** Upload-session parts in flight at once. Default 4. */
  readonly partConcurrency?: number;
  /** Entries per folder-listing page (Box allows up to 1000). Default 1000. */
  readonly listPageSize?: number;
  /** HTTP attempts of idempotent calls. Default 5. */
  readonly maxAttempts?: number;
  /** The longest Retry-After to sit through (default 5 min); see BoxHttpOptions. */
  readonly maxRetryAfterMs?: number;
  /** No byte for this long aborts a request (default 60 s). */
  readonly stallTimeoutMs?: number;
  /** A folder listing longer than this ends as incomplete (default 15 min). */
  readonly listingDeadlineMs?: number;
  /** A download's deadline: `baseMs` plus its size at `minBytesPerSec` (default 5 min plus size at 64 KiB/s). */
  readonly downloadDeadline?: { readonly baseMs: number; readonly minBytesPerSec: number };
  /** Cap on the total transfer rate, uploads and downloads together, in bytes per second (`--bwlimit`). */
  readonly bandwidthBytesPerSec?: number | null;
  /**
   * Zip downloads (POST /zip_downloads) for a plan's many small files, written to `scratchDir` while read. Absent:
   * every file is downloaded alone.
   */
  readonly zipDownloads?: ZipPrefetchOptions;
  readonly logger?: Logger;
  readonly clock?: Clock;
}

export function trimSlash(u: string): string {
  return u.replace(/\/+$/, '');
}
