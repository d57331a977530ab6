/**
 * The Box adapter's composition: one got instance, one rate limiter, one auth, and the port implementations
 * built on them. The daemon's composition root calls this; nothing else constructs Box parts.
 *
 *   engine ──RemoteStore──> BoxStore ─┬─ TreeReader ─┐
 *          ──RemoteChanges─> BoxChanges│  Mutations ──┤
 *   cli ────BoxActions────────────────┘  download ───┼─> BoxHttp ─> RateLimiter (pacer) ─> got ─> Box
 *                                        upload(+session)┘     └─> BoxAuth (refresh, token store)
 */
import { got } from 'got';
import { ProxyAgents } from './proxy.js';
import { Bandwidth } from './bandwidth.js';
import { silentLogger } from '../../logger.js';
import { systemClock } from '../../ports/clock.js';
import type { RemoteChanges } from '../../ports/remote-changes.js';
import type { RemoteStore } from '../../ports/remote-store.js';
import { createAuth, type BoxAuth } from './auth.js';
import { createBoxActions } from './box-actions-impl.js';
import type { BoxActions } from './box-actions.js';
import { BoxStore } from './box-store.js';
import type { DownloadDeps } from './download.js';
import { BoxChanges } from './events.js';
import { FreeSpace } from './free-space.js';
import { BoxHttp, USER_AGENT } from './http.js';
import { Mutations } from './mutations.js';
import { trimSlash, type BoxAdapterOptions } from './options.js';
import { RateLimiter } from './rate-limiter.js';
import { defaultListingLimits, TreeReader } from './tree.js';
import { PREFLIGHT_MIN_BYTES, type UploadDeps } from './upload.js';
import { cleanupSessions } from './upload-session.js';
import { ZipPrefetcher } from './zip-prefetch.js';

export interface BoxAdapter {
  readonly store: RemoteStore;
  readonly changes: RemoteChanges;
  readonly actions: BoxActions;
  readonly auth: BoxAuth;
  /** Abort and forget persisted upload sessions that expired (the cleanup schedule). Returns how many. */
  cleanupUploadSessions(): Promise<number>;
  /** Epoch ms until which every request waits after a 429 (0 when not paused); for status displays. */
  pausedUntilMs(): number;
  /** The transfer cap shared by uploads and downloads (rate null: none); the daemon's `bwlimit` verb sets it live. */
  readonly bandwidth: Bandwidth;
  /** Abort every request in flight (long polls, transfers) with `aborted` and drop queued ones. */
  close(): Promise<void>;
}

export function createBoxAdapter(opts: BoxAdapterOptions): BoxAdapter {
  const clock = opts.clock ?? systemClock;
  const logger = opts.logger ?? silentLogger;
  const apiUrl = trimSlash(opts.apiUrl);
  const uploadUrl = trimSlash(opts.uploadUrl);
  // HTTPS_PROXY / HTTP_PROXY / NO_PROXY apply to every request of this client (remote/box/proxy.ts).
  const proxies = new ProxyAgents();
  const client = got.extend({
    headers: { 'user-agent': USER_AGENT },
    handlers: [
      (options, next) => {
        const agent = options.url === undefined ? undefined : proxies.for(options.url);
        if (agent !== undefined) options.agent = agent;
        return next(options);
      },
    ],
  });
  const limiter = new RateLimiter(opts.rateLimit ?? {}, clock);
  const auth = createAuth(opts.auth, { got: client, tokenUrl: opts.tokenUrl, clock, logger, limiter });
  const http = new BoxHttp({
    got: client,
    auth,
    limiter,
    clock,
    logger,
    ...(opts.asUser === undefined ? {} : { asUser: opts.asUser }),
    ...(opts.sharedLink === undefined ? {} : { sharedLink: opts.sharedLink }),
    ...(opts.maxAttempts === undefined ? {} : { maxAttempts: opts.maxAttempts }),
    ...(opts.maxRetryAfterMs === undefined ? {} : { maxRetryAfterMs: opts.maxRetryAfterMs }),
    ...(opts.stallTimeoutMs === undefined ? {} : { stallTimeoutMs: opts.stallTimeoutMs }),
    trustedUrls: [apiUrl, uploadUrl, opts.tokenUrl],
    agentsFor: (url) => proxies.for(url),
  });
  const tree = new TreeReader(http, apiUrl, Math.min(1000, Math.max(1, opts.listPageSize ?? 1000)), {
    ...defaultListingLimits,
    ...(opts.listingDeadlineMs === undefined ? {} : { listingDeadlineMs: opts.listingDeadlineMs }),
  });
  const mutations = new Mutations(http, apiUrl);
  // Always there (a null rate passes everything), so the daemon's `bwlimit` verb can set a cap live.
  const bandwidth = new Bandwidth(opts.bandwidthBytesPerSec || null, clock);
  const uploadDeps: UploadDeps = {
    http,
    apiUrl,
    uploadUrl,
    logger,
    sessionThresholdBytes: opts.sessionThresholdBytes ?? 20_000_000,
    preflightMinBytes: opts.preflightMinBytes ?? PREFLIGHT_MIN_BYTES,
    partConcurrency: Math.max(1, opts.partConcurrency ?? 4),
    sessions: opts.uploadSessions,
    bandwidth,
  };
  const downloadDeps: DownloadDeps = {
    http,
    apiUrl,
    logger,
    bandwidth,
    // This adapter's own readings, aged by its clock.
    freeSpace: new FreeSpace(clock),
    ...(opts.downloadDeadline === undefined ? {} : { deadline: opts.downloadDeadline }),
  };
  const zip = opts.zipDownloads === undefined ? undefined : new ZipPrefetcher({ ...opts.zipDownloads, http, apiUrl, logger, nowMs: () => clock.now() });
  const store = new BoxStore(tree, mutations, downloadDeps, uploadDeps, zip);
  const changes = new BoxChanges({ http, apiUrl, logger });
  return {
    store,
    changes: {
      now: (s) => changes.now(s),
      fetch: (s, p, o) => changes.fetch(s, p, o),
      waitForChange: (s, p, sig) => changes.waitForChange(s, p, sig),
    },
    actions: createBoxActions({ http, apiUrl, tree, mutations }),
    auth,
    cleanupUploadSessions: () => cleanupSessions(uploadDeps),
    pausedUntilMs: () => limiter.pausedUntil,
    bandwidth,
    close: async () => {
      http.close();
      proxies.destroy();
    },
  };
}
