/**
 * The Box HTTP layer: one got instance, the bearer token, As-User and BoxApi headers, the shared rate-limit
 * queues, and the retries of one request (the layer below the transfer queue and the failures table). Each
 * kind of failure has one owner:
 * - transient failures of JSON calls (network errors, 5xx, `operation_blocked_temporary`): got's own `retry`,
 *   for idempotent methods (GET, PUT, DELETE, OPTIONS) only, with the delay from core/retry.ts (`httpBackoff`,
 *   jittered, or the server's Retry-After when longer) via `calculateDelay`; each retry takes its turn in the
 *   rate-limit lane first. A Retry-After beyond `maxRetryAfterMs` is not waited out: the request ends with a
 *   clear error at once;
 * - a 429: the rate limiter alone. It pauses every lane and slows this one, and the request is sent again when
 *   its turn comes, whatever its method (a 429 means Box did not act on it). got never retries a 429;
 * - a 401: one token refresh (shared across concurrent calls) and one replay;
 * - streamed downloads: the status line is not retried here; download.ts owns a download's retries and resumes.
 * - a request sent on a kept-alive connection that the server had just closed (ECONNRESET or EPIPE on a reused
 *   socket, no answer): sent again at once, once, whatever its method. A server closes an idle connection when
 *   its keep-alive timeout ends, and a client whose event loop was busy reuses it before it sees the close; the
 *   server never read that request (Node's documentation of `request.reusedSocket` advises the same);
 * Any other failed POST is never repeated blindly. Every failure leaves as a SyncError from classify().
 */
import type { Agent as HttpAgent, IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import type { Agents, Got, Method, OptionsInit, RequestError, RetryOptions } from 'got';
import { isSyncError, SyncError } from '../../core/errors.js';
import { backoffDelayMs, httpBackoff, rateLimitedRetry, type BackoffPolicy } from '../../core/retry.js';
import { redactUrl, type Logger } from '../../logger.js';
import type { Clock } from '../../ports/clock.js';
import type { BoxAuth } from './auth.js';
import { classify } from './classify.js';
import { remoteError } from './error-codes.js';
import { parseBoxJson } from './json.js';
import type { Lane, RateLimiter } from './rate-limiter.js';
import { discardBody, rawGet } from './raw-get.js';

export type BoxMethod = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'OPTIONS';

export interface BoxRequest {
  readonly method: BoxMethod;
  /** Absolute URL. */
  readonly url: string;
  readonly searchParams?: Readonly<Record<string, string | number>>;
  readonly json?: unknown;
  /** A body factory, so that a replay (after a 401 or 429) reopens the stream instead of reusing a spent one. */
  readonly body?: () => Readable | Buffer | string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly lane?: Lane;
  /** Statuses returned to the caller instead of being classified (default: 200-299 and 304). */
  readonly accept?: readonly number[];
  /** Override the retry policy (default: idempotent methods retry). */
  readonly retry?: boolean;
  /** Send the bearer token (default true). */
  readonly auth?: boolean;
  readonly signal?: AbortSignal;
  /** Abort when the whole exchange takes longer (long polls). */
  readonly timeoutMs?: number;
}

export interface BoxResponse<T = unknown> {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: T;
}

export interface BoxStreamResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Readable;
  /** Drop the body unread (a redirect's, a 202's), keeping the connection for the next request when it is small. */
  readonly discard: () => void;
}

export interface BoxHttpOptions {
  readonly got: Got;
  readonly auth: BoxAuth;
  readonly limiter: RateLimiter;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly asUser?: string;
  readonly sharedLink?: { readonly url: string; readonly password?: string };
  readonly maxAttempts?: number;
  /** Upper bound on one backoff wait, so a bad Retry-After cannot stall the client for hours. */
  readonly maxBackoffMs?: number;
  /**
   * The longest Retry-After (429, 202, 503) boxsync sits through. A longer one ends the request at once with
   * a clear error instead (default 5 min), so `sync --once` can say why and stop rather than wait a day.
   */
  readonly maxRetryAfterMs?: number;
  /** A request that receives no byte for this long is aborted as a network error (default 60 s). */
  readonly stallTimeoutMs?: number;
  /** The agents for a URL (a proxy's, proxy.ts), or undefined for Node's global ones; got's own requests get them from its handler. */
  readonly agentsFor?: (url: URL) => Agents | undefined;
  /**
   * Hosts the bearer token may be sent to (besides those of `trustedUrls`). A URL from an answer (upload URL,
   * long-poll URL) on any other host gets no token: `trusts()` says no and the caller refuses or goes without.
   */
  readonly trustedUrls?: readonly string[];
}

/** One attempt of a request: its headers and signal, and got's options when it goes through got. */
interface Attempt {
  readonly headers: Record<string, string>;
  readonly signal: AbortSignal;
  readonly gotOptions: () => Record<string, unknown>;
}

export const USER_AGENT = 'boxsync/0.1';
const CONNECT_TIMEOUT_MS = 30_000;
const DEFAULT_STALL_MS = 60_000;

/** Box's own domains: a client configured for the real Box may follow Box's URLs (upload, realtime) there. */
const BOX_DOMAINS = ['box.com', 'box.net', 'boxcloud.com'];

function hostMatches(host: string, domain: string): boolean {
  return host === domain || host.endsWith(`.${domain}`);
}

export class BoxHttp {
  private readonly log: Logger;
  /** Debug logging on: each call's line, with its redacted URL, is only built then. */
  private readonly debug: boolean;
  private readonly maxAttempts: number;
  private readonly closing = new AbortController();

  private readonly trustedHosts: ReadonlySet<string>;
  private readonly boxDomains: boolean;

  constructor(private readonly o: BoxHttpOptions) {
    this.log = o.logger.child({ component: 'box-http' });
    this.debug = this.log.isLevelEnabled('debug');
    this.maxAttempts = o.maxAttempts ?? 5;
    const hosts = (o.trustedUrls ?? []).flatMap((u) => {
      try {
        return [new URL(u).host];
      } catch {
        return [];
      }
    });
    this.trustedHosts = new Set(hosts);
    this.boxDomains = hosts.some((h) => BOX_DOMAINS.some((d) => hostMatches(h.replace(/:\d+$/, ''), d)));
  }

  /**
   * May the bearer token go to this URL? Yes for the configured hosts (API, upload, token) and, when those are
   * Box's own, for Box's domains over https. No for anything else an answer may name. Without configured URLs
   * (unit tests of the layer itself) every host is trusted.
   */
  trusts(url: URL): boolean {
    if (this.trustedHosts.size === 0) return true;
    if (this.trustedHosts.has(url.host)) return true;
    return this.boxDomains && url.protocol === 'https:' && BOX_DOMAINS.some((d) => hostMatches(url.hostname, d));
  }

  /** Abort every request in flight and refuse new ones. */
  close(): void {
    this.closing.abort(remoteError('aborted', 'the Box client was closed'));
    // Queued requests must still settle: let them start, and fail at once on the aborted signal.
    this.o.limiter.release();
  }

  get clock(): Clock {
    return this.o.clock;
  }

  get limiter(): RateLimiter {
    return this.o.limiter;
  }

  /** A JSON request with the retry policy; non-accepted statuses throw a classified SyncError. */
  async request<T = unknown>(req: BoxRequest): Promise<BoxResponse<T>> {
    const res = await this.exchange(req, true, async ({ gotOptions }) => {
      const r = await this.o.got({ ...gotOptions(), url: req.url, responseType: 'text' } as OptionsInit & { url: string });
      return { status: r.statusCode, headers: r.headers, body: r.body as string };
    });
    return { status: res.status, headers: res.headers, body: parseSafe(res.body) as T };
  }

  /**
   * A streaming GET. The body is not consumed here: the caller reads it (and must drain or destroy it). Only the
   * status line goes through the retry policy; a failure mid-body is the caller's to resume. Sent over node:http
   * itself (raw-get.ts): got's work per request cost more than a small download.
   */
  async stream(req: Omit<BoxRequest, 'method' | 'json' | 'body' | 'timeoutMs'>): Promise<BoxStreamResponse> {
    const url = new URL(req.url);
    for (const [k, v] of Object.entries(req.searchParams ?? {})) url.searchParams.set(k, String(v));
    const agents = this.o.agentsFor?.(url);
    const agent = url.protocol === 'https:' ? agents?.https : agents?.http;
    const res = await this.exchange({ ...req, method: 'GET' }, false, async ({ headers, signal }) => {
      // Raw bytes: a content-encoded body would break Range offsets and the SHA-1 of what is on disk.
      const r = await rawGet(url, {
        headers: { 'user-agent': USER_AGENT, ...headers },
        agent: agent as HttpAgent | undefined,
        connectTimeoutMs: CONNECT_TIMEOUT_MS,
        stallMs: this.o.stallTimeoutMs ?? DEFAULT_STALL_MS,
        signal,
      });
      return { status: r.statusCode, headers: r.headers, body: r.body, drain: () => discardBody(r.body) };
    });
    return { ...res, discard: () => discardBody(res.body) };
  }

  /**
   * How a file worker thread may GET `url` itself (a pre-signed download URL: no token, download.ts with
   * TempFile.fillFromUrl): the headers and timeouts a streamed GET here would use. Undefined when this process must
   * send it (a proxy's agent serves the URL), or once closing.
   */
  directGet(url: string): { readonly headers: Readonly<Record<string, string>>; readonly stallMs: number; readonly connectTimeoutMs: number } | undefined {
    if (this.closing.signal.aborted) return undefined;
    if (this.o.agentsFor?.(new URL(url)) !== undefined) return undefined;
    return { headers: { 'user-agent': USER_AGENT }, stallMs: this.o.stallTimeoutMs ?? DEFAULT_STALL_MS, connectTimeoutMs: CONNECT_TIMEOUT_MS };
  }

  private async exchange<B>(
    req: BoxRequest,
    transientRetries: boolean,
    send: (attempt: Attempt) => Promise<{ status: number; headers: IncomingHttpHeaders; body: B; drain?: () => void }>,
  ): Promise<{ status: number; headers: IncomingHttpHeaders; body: B }> {
    // close() ends every request still in flight (long polls included), not just the queued ones.
    const { signal, release } = requestSignal(req.signal === undefined ? [this.closing.signal] : [req.signal, this.closing.signal]);
    try {
      const res = await this.attempts(req, transientRetries, send, signal);
      // A streamed body outlives this call: the link to the parent signals lasts until the body is over. got's
      // stream does not always emit 'close' after its last byte is read, so its end or an error releases too
      // (each download left one listener on the run's signal: O(n) listener lists, a MaxListeners warning).
      const body = res.body as unknown;
      if (body instanceof Readable && !body.destroyed && !body.readableEnded) {
        for (const ev of ['end', 'close', 'error'] as const) body.once(ev, release);
      } else release();
      return res;
    } catch (e) {
      release();
      throw e;
    }
  }

  private async attempts<B>(
    req: BoxRequest,
    transientRetries: boolean,
    send: (attempt: Attempt) => Promise<{ status: number; headers: IncomingHttpHeaders; body: B; drain?: () => void }>,
    signal: AbortSignal,
  ): Promise<{ status: number; headers: IncomingHttpHeaders; body: B }> {
    const useAuth = req.auth ?? true;
    const u = new URL(req.url);
    // A URL used without the bearer token is pre-signed: its path is a credential and never reaches logs or messages.
    const what = useAuth ? `${req.method} ${u.pathname}` : `${req.method} ${u.origin} (pre-signed download URL)`;
    if (useAuth && !this.trusts(u)) {
      throw remoteError('forbidden', `refusing to send the Box token to ${u.host}, which is neither a configured host nor Box's (${req.method} ${u.pathname})`, {
        details: { host: u.host },
      });
    }
    // Only API calls are paced: a pre-signed download URL (the download host) and the long poll are not.
    const lane = req.lane ?? (useAuth && req.timeoutMs === undefined ? 'calls' : null);
    const idempotent = req.retry ?? req.method !== 'POST';
    let token = useAuth ? await this.o.auth.accessToken() : undefined;
    let refreshed = false;
    let replayedStale = false;
    for (let sent = 1; ; sent++) {
      const headers: Record<string, string> = { ...this.commonHeaders(), ...req.headers };
      if (token !== undefined) headers.authorization = `Bearer ${token}`;
      // got's options are built only for a request sent through got (a streamed GET goes over raw-get.ts).
      const gotOptions = (): Record<string, unknown> => ({
        method: req.method as Method,
        headers,
        throwHttpErrors: false,
        followRedirect: false,
        decompress: true,
        retry: transientRetries && idempotent ? this.gotRetry(req, what, signal) : { limit: 0 },
        ...(transientRetries && idempotent ? { hooks: { beforeRetry: this.beforeRetry(req, lane, signal) } } : {}),
        // socket: no byte in either direction for this long is a stall (a server that accepted and went silent).
        timeout: req.timeoutMs === undefined ? { connect: CONNECT_TIMEOUT_MS, socket: this.o.stallTimeoutMs ?? DEFAULT_STALL_MS } : { request: req.timeoutMs },
        ...(req.searchParams === undefined ? {} : { searchParams: req.searchParams }),
        ...(req.json === undefined ? {} : { json: req.json }),
        ...(req.body === undefined ? {} : { body: req.body() }),
        signal,
      });
      const opts: Attempt = { headers, signal, gotOptions };
      const started = this.o.clock.now();
      let res: { status: number; headers: IncomingHttpHeaders; body: B; drain?: () => void };
      try {
        res = lane === null ? await send(opts) : await this.o.limiter.run(lane, () => send(opts), signal);
      } catch (e) {
        if (signal.aborted) throw remoteError('aborted', `${what} was cancelled`, { cause: e });
        if (isSyncError(e)) throw e;
        const cause = (e as { cause?: unknown }).cause;
        // calculateDelay refused the wait (a Retry-After beyond the maximum): got wraps that error.
        if (isSyncError(cause)) throw cause;
        if (!replayedStale && closedWhileIdle(e)) {
          replayedStale = true;
          this.log.debug({ what, errno: netCodeOf(e) }, 'kept-alive connection was closed by the server; sending again');
          continue;
        }
        this.log.debug({ what, errno: netCodeOf(e) }, 'network error');
        throw this.classifyNetwork(what, e);
      }
      if (this.debug) this.log.debug({ what, url: useAuth ? redactUrl(req.url) : u.origin, status: res.status, ms: this.o.clock.now() - started, sent }, 'box call');
      const accepted = req.accept ? req.accept.includes(res.status) : (res.status >= 200 && res.status < 300) || res.status === 304;
      if (accepted) return res;

      const body = typeof res.body === 'string' ? parseSafe(res.body) : await readErrorBody(res.body);
      res.drain?.();
      if (res.status === 401 && useAuth && !refreshed && token !== undefined) {
        refreshed = true;
        token = await this.o.auth.refreshAfter401(token);
        continue;
      }
      const err = classify({ what, status: res.status, body, headers: res.headers, nowMs: this.o.clock.now() });
      this.log.debug({ what, status: res.status, code: err.code, sent }, 'box call failed');
      this.refuseLongWait(err, what);
      if (err.code === 'rate_limited') {
        // The pacer owns 429s: it pauses every lane and slows this one; the request then waits its turn again.
        const waitMs = this.capped(err.retryAfterMs ?? this.backoffMs(sent, rateLimitedRetry));
        this.o.limiter.rateLimited(req.lane ?? 'calls', waitMs);
        if (sent < Math.max(this.maxAttempts, rateLimitedRetry.retries + 1)) continue;
      }
      throw err;
    }
  }

  /**
   * got's retry options for one idempotent JSON call: got decides nothing itself; `calculateDelay` classifies the
   * failure exactly as a final one would be, and retries only the transient ones (never a 429, a 401 or a status
   * the caller accepts), after the delay of core/retry.ts.
   */
  private gotRetry(req: BoxRequest, what: string, signal: AbortSignal): Partial<RetryOptions> {
    return {
      limit: this.maxAttempts - 1,
      methods: [req.method as Method],
      maxRetryAfter: undefined,
      calculateDelay: ({ attemptCount, error }) => {
        if (attemptCount >= this.maxAttempts || signal.aborted) return 0;
        const err = this.classifyAttempt(what, req, error);
        if (err === null || err.code === 'rate_limited' || !isTransient(err)) return 0;
        // A wait beyond the maximum is not sat through: thrown here, it ends the call with the clear reason.
        this.refuseLongWait(err, what);
        const ms = this.capped(backoffDelayMs({ policy: httpBackoff, attempt: attemptCount, random: Math.random(), retryAfterMs: err.retryAfterMs }));
        this.log.debug({ what, attempt: attemptCount, code: err.code, retryInMs: ms }, 'retrying');
        return ms;
      },
    };
  }

  /** The SyncError a failed attempt stands for, or null when the caller accepts its status. */
  private classifyAttempt(what: string, req: BoxRequest, error: RequestError): SyncError | null {
    const r = error.response;
    if (r === undefined) return this.classifyNetwork(what, error);
    const accepted = req.accept ? req.accept.includes(r.statusCode) : (r.statusCode >= 200 && r.statusCode < 300) || r.statusCode === 304;
    if (accepted || r.statusCode === 401) return null;
    return classify({ what, status: r.statusCode, body: typeof r.body === 'string' ? parseSafe(r.body) : undefined, headers: r.headers, nowMs: this.o.clock.now() });
  }

  private classifyNetwork(what: string, e: unknown): SyncError {
    const netCode = netCodeOf(e);
    return classify({ what, networkError: { ...(netCode === undefined ? {} : { code: netCode }), message: (e as Error).message } });
  }

  /**
   * Before each of got's retries: a fresh request body (a stream is spent after the first attempt), and a turn in
   * the rate-limit lane, like a first attempt takes.
   */
  private beforeRetry(req: BoxRequest, lane: Lane | null, signal: AbortSignal): ((error: RequestError) => Promise<void>)[] {
    return [
      async (error) => {
        if (req.body !== undefined) (error.options as { body?: unknown }).body = req.body();
        if (lane !== null) await this.o.limiter.run(lane, async () => undefined, signal);
      },
    ];
  }

  /** A Retry-After beyond the configured maximum ends the request now, with the reason, instead of a day's wait. */
  refuseLongWait(err: SyncError, what: string): void {
    const max = this.o.maxRetryAfterMs ?? 5 * 60_000;
    if (err.retryAfterMs === undefined || err.retryAfterMs <= max) return;
    throw new SyncError({
      code: err.code,
      disposition: err.disposition === 'fatal' ? 'fatal' : 'retry',
      message: `${what}: Box asked to wait ${Math.ceil(err.retryAfterMs / 1000)} s before trying again, more than the ${Math.ceil(max / 1000)} s boxsync waits (http.maxRetryAfterSec); gave up on this request for now, the next run or pass tries again`,
      details: { ...err.details, retryAfterMs: err.retryAfterMs, tooLongToWait: true },
      cause: err,
    });
  }

  private commonHeaders(): Record<string, string> {
    const h: Record<string, string> = {};
    if (this.o.asUser) h['as-user'] = this.o.asUser;
    if (this.o.sharedLink) {
      const pw = this.o.sharedLink.password;
      h.boxapi = `shared_link=${this.o.sharedLink.url}${pw ? `&shared_link_password=${pw}` : ''}`;
    }
    return h;
  }

  private backoffMs(attempt: number, policy: BackoffPolicy = httpBackoff): number {
    return backoffDelayMs({ policy, attempt, random: Math.random() });
  }

  private capped(ms: number): number {
    return Math.min(ms, this.o.maxBackoffMs ?? 5 * 60_000);
  }

  /** The wait before retry `attempt` of a loop with this policy (core/retry.ts); a Retry-After given wins. */
  async backoff(policy: BackoffPolicy, attempt: number, retryAfterMs: number | undefined, signal?: AbortSignal): Promise<void> {
    await this.sleep(this.capped(retryAfterMs ?? this.backoffMs(attempt, policy)), signal);
  }

  /** The clock's sleep, with an abort surfacing as a SyncError like every other failure of the adapter. */
  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    try {
      await this.o.clock.sleep(ms, signal);
    } catch (e) {
      if (signal?.aborted) throw remoteError('aborted', 'cancelled while waiting to retry', { cause: e });
      throw e;
    }
  }
}

function netCodeOf(e: unknown): string | undefined {
  const err = e as NodeJS.ErrnoException;
  return err.code === 'ERR_GOT_REQUEST_ERROR' ? ((err.cause as NodeJS.ErrnoException | undefined)?.code ?? err.code) : err.code;
}

/**
 * Did the request fail because it went out on a kept-alive connection the server had already closed? A reset or
 * broken pipe on a reused socket, before any answer.
 */
function closedWhileIdle(e: unknown): boolean {
  const err = e as Partial<RequestError>;
  const code = netCodeOf(e);
  return (code === 'ECONNRESET' || code === 'EPIPE') && err.response === undefined && err.request?.reusedSocket === true;
}

/** Failures worth another attempt of the same request: 5xx, network, a temporarily blocked operation. */
export function isTransient(e: SyncError): boolean {
  if (e.details?.tooLongToWait === true) return false;
  return e.code === 'server_error' || e.code === 'network' || e.code === 'operation_blocked';
}

function parseSafe(text: string): unknown {
  try {
    return parseBoxJson(text);
  } catch {
    return undefined;
  }
}

/** Error bodies of streamed responses are small JSON; read at most 64 KiB of them. */
async function readErrorBody(body: unknown): Promise<unknown> {
  const s = body as Readable | undefined;
  if (!s || typeof (s as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] !== 'function') return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const c of s) {
      chunks.push(c as Buffer);
      size += (c as Buffer).length;
      if (size > 65_536) break;
    }
  } catch {
    return undefined;
  }
  return parseSafe(Buffer.concat(chunks).toString('utf8'));
}

/**
 * A fresh signal for one request that aborts when any parent aborts. got attaches its own 'abort' listener to
 * the signal it is given and, for streamed bodies, does not always remove it; handing got a long-lived signal
 * (the engine's run-wide one, the adapter's closing one) therefore kept every finished request alive: memory
 * grew with the file count. The per-request signal dies with its request; `release` (called when the request,
 * or its streamed body, is over) takes it off its parents' sets (see childrenOf).
 */
function requestSignal(parents: readonly AbortSignal[]): { signal: AbortSignal; release: () => void } {
  const ctrl = new AbortController();
  const aborted = parents.find((p) => p.aborted);
  if (aborted) {
    ctrl.abort(aborted.reason);
    return { signal: ctrl.signal, release: () => undefined };
  }
  const sets = parents.map(childrenOf);
  for (const set of sets) set.add(ctrl);
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    for (const set of sets) set.delete(ctrl);
  };
  ctrl.signal.addEventListener('abort', release, { once: true });
  return { signal: ctrl.signal, release };
}

/**
 * The requests in flight under one parent signal. The parent holds ONE listener that aborts them all, however
 * many there are: a listener per request made adding one O(n) (EventTarget scans its list) and warned about a
 * leak past ten concurrent requests.
 */
const children = new WeakMap<AbortSignal, Set<AbortController>>();

/** How many requests are still linked to a parent signal (for tests and leak checks). */
export function requestsLinkedTo(parent: AbortSignal): number {
  return children.get(parent)?.size ?? 0;
}
function childrenOf(parent: AbortSignal): Set<AbortController> {
  let set = children.get(parent);
  if (set === undefined) {
    const created = new Set<AbortController>();
    set = created;
    children.set(parent, created);
    parent.addEventListener(
      'abort',
      () => {
        for (const c of [...created]) c.abort(parent.reason);
        created.clear();
      },
      { once: true },
    );
  }
  return set;
}
