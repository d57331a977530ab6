/**
 * Downloads: GET /files/{id}/content answers 302 (follow it WITHOUT the bearer token: the download host gets
 * a pre-signed URL), 202 + Retry-After (not ready yet: wait and ask again), or 200 with the bytes. The body is
 * written to the caller's temp file (DownloadRequest.destFile) while the SHA-1 is computed; a connection broken
 * mid-body resumes with a Range request from the bytes already written (the hash continues, nothing is read
 * twice). The result is verified against the expected SHA-1.
 *
 * A temp file that a file worker thread can fill (TempFile.fillFromUrl: a big file, config `http.fileWorkers`) gets
 * the body of the pre-signed URL there (local/worker-fetch.ts): the API call and its 302 stay here, the thread reads,
 * hashes and writes the bytes, and the same bounds apply (the listed size, the deadline, the stall timeout, the
 * run's signal). A body cut mid-way is resumed the same way (the thread hashes the bytes already written again).
 * Anything else the thread cannot do (the URL needs the proxy, a bandwidth cap is set, also one set while it reads:
 * looked for every CAP_CHECK_MS; the host answers neither 200 nor 206; no connection) goes this thread's way from
 * there, from byte 0 when bytes were already written.
 */
import { createHash, type Hash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { isSyncError, type SyncError } from '../../core/errors.js';
import { downloadNotReadyRetry, downloadOpenRetry, downloadResumeRetry, nominalDelayMs } from '../../core/retry.js';
import type { Logger } from '../../logger.js';
import type { TempFile, UrlFillResult } from '../../ports/local-fs.js';
import type { DownloadRequest, DownloadResult } from '../../ports/remote-store.js';
import type { Bandwidth } from './bandwidth.js';
import type { FreeSpace } from './free-space.js';
import { retryAfterMs } from './classify.js';
import { remoteError } from './error-codes.js';
import { isTransient, type BoxHttp, type BoxStreamResponse } from './http.js';

export interface DownloadDeps {
  readonly http: BoxHttp;
  readonly apiUrl: string;
  readonly logger: Logger;
  /** Resume attempts after a broken body. */
  readonly maxResumes?: number;
  /** A download's deadline: this long plus its size at this slow rate (a trickling body cannot keep a run alive). */
  readonly deadline?: { readonly baseMs: number; readonly minBytesPerSec: number };
  /** The transfer bandwidth cap shared with uploads (`--bwlimit`); none: as fast as the link goes. */
  readonly bandwidth?: Bandwidth | undefined;
  /** The adapter's free-space readings, checked before a download of a known size. */
  readonly freeSpace: FreeSpace;
}

const DEFAULT_DEADLINE = { baseMs: 5 * 60_000, minBytesPerSec: 64 * 1024 };

/** How long a transfer of `bytes` may take: the deadline's base, plus the bytes at its slowest rate (or `minRate`). */
export function transferDeadlineMs(bytes: number, d: { readonly baseMs: number; readonly minBytesPerSec: number } = DEFAULT_DEADLINE, minRate = d.minBytesPerSec): number {
  return d.baseMs + Math.ceil((bytes / minRate) * 1000);
}
/** How often a body read on a worker thread looks for a bandwidth cap set meanwhile (which this thread applies). */
const CAP_CHECK_MS = 250;

/** The `box-download` child of each adapter's logger, made once (a child per download was pino work per file). */
const downloadLogs = new WeakMap<Logger, Logger>();
function downloadLog(logger: Logger): Logger {
  let log = downloadLogs.get(logger);
  if (log === undefined) {
    log = logger.child({ component: 'box-download' });
    downloadLogs.set(logger, log);
  }
  return log;
}

export async function download(deps: DownloadDeps, req: DownloadRequest): Promise<DownloadResult> {
  const log = downloadLog(deps.logger);
  const limit = req.expectSizeBytes;
  const out = req.destFile;
  let hash = createHash('sha1');
  let written = 0;
  let totalBytes = 0;
  let resumes = 0;
  // The worker thread's way (fillFromUrl), while it applies (no bandwidth cap: the cap's bucket is this thread's);
  // its SHA-1 once it read the whole body.
  const capped = (): boolean => (deps.bandwidth?.bytesPerSec ?? null) !== null;
  let fill = !capped() && out.fillFromUrl !== undefined ? out.fillFromUrl.bind(out) : undefined;
  let fillSha1: string | undefined;
  const d = deps.deadline ?? DEFAULT_DEADLINE;
  // Under a bandwidth cap below the deadline's minimum rate, the deadline allows for the cap instead.
  const minRate = Math.min(d.minBytesPerSec, deps.bandwidth?.bytesPerSec ?? Infinity);
  // The whole transfer's deadline: the body's bytes, and the waits before them (202s, retries to open it).
  const deadline = deps.http.clock.now() + transferDeadlineMs(limit ?? 0, d, minRate);
  const ctx: OpenContext = { location: undefined, failures: 0, deadline };
  try {
    if (limit !== undefined) await deps.freeSpace.admit(req.id, out.path, limit, () => out.freeBytes());
    const bounds: Bounds = { limit, deadline, now: () => deps.http.clock.now(), id: req.id, bandwidth: deps.bandwidth, signal: req.signal };
    for (;;) {
      let res: BoxStreamResponse;
      if (fill !== undefined) {
        const step = await withRetries(deps, req, deadline, () => locate(deps, req, written, ctx));
        const direct = 'location' in step ? deps.http.directGet(step.location) : undefined;
        // A cap set while the thread reads (the daemon's `bwlimit`) stops it within CAP_CHECK_MS: this thread's way then.
        const capSet = new AbortController();
        const capCheck = setInterval(() => capped() && capSet.abort(), CAP_CHECK_MS);
        capCheck.unref();
        const got =
          'location' in step && direct !== undefined
            ? await fill({
                url: step.location,
                headers: written > 0 ? { ...direct.headers, range: `bytes=${written}-` } : direct.headers,
                position: written,
                limit: limit ?? null,
                stallMs: direct.stallMs,
                connectTimeoutMs: direct.connectTimeoutMs,
                deadlineInMs: deadline - deps.http.clock.now(),
                signal: req.signal === undefined ? capSet.signal : AbortSignal.any([req.signal, capSet.signal]),
                onProgress: (done) => req.onProgress?.({ doneBytes: done, totalBytes: limit ?? totalBytes }),
              }).finally(() => clearInterval(capCheck))
            : (clearInterval(capCheck), null);
        if (got !== null) written = got.written;
        const next = got === null ? 'here' : afterFill(got, req, log, resumes, deps.maxResumes ?? downloadResumeRetry.retries);
        if (next === 'done') {
          totalBytes = got!.total;
          fillSha1 = got!.sha1;
          req.onProgress?.({ doneBytes: written, totalBytes: Math.max(totalBytes, written) });
          break;
        }
        if (next === 'resume') {
          resumes += 1;
          continue;
        }
        // This thread's way from here (the API's own body, the proxy, a status or failure it classifies and retries).
        fill = undefined;
        if (written > 0) {
          // The bytes the thread wrote were hashed there: they are read again from byte 0.
          if (!('location' in step)) step.discard();
          await out.truncate();
          written = 0;
          continue;
        }
        res = 'location' in step ? await withRetries(deps, req, deadline, () => openBody(deps, req, written, ctx)) : step;
      } else res = await withRetries(deps, req, deadline, () => openBody(deps, req, written, ctx));
      if (written > 0 && res.status === 200) {
        // The host ignored Range: start over from byte 0.
        log.info({ id: req.id }, 'download host ignored Range; restarting from the beginning');
        await out.truncate();
        hash = createHash('sha1');
        written = 0;
      }
      totalBytes = contentTotal(res.headers, written);
      if (limit !== undefined && totalBytes > limit) {
        res.body.destroy();
        throw oversize(req.id, `the download answer announces ${totalBytes} bytes`, limit);
      }
      try {
        const state = { written };
        try {
          await pump(res.body, out, hash, state, totalBytes, req.onProgress, bounds);
        } finally {
          written = state.written;
        }
        if (totalBytes > 0 && written < totalBytes) throw new Error(`body ended after ${written} of ${totalBytes} bytes`);
        break;
      } catch (e) {
        // The disk, not the connection (a full disk): resuming cannot help.
        if (e instanceof WriteFailed) throw e.cause;
        if (req.signal?.aborted) throw remoteError('aborted', `download of file ${req.id} was cancelled`, { cause: e });
        // Too many bytes, or too slow: resuming cannot help.
        if (isSyncError(e) && (e.code === 'checksum_mismatch' || e.code === 'network')) throw e;
        if (resumes >= (deps.maxResumes ?? downloadResumeRetry.retries)) {
          throw remoteError('network', `download of file ${req.id} broke ${resumes + 1} times (last at byte ${written})`, { cause: e });
        }
        resumes += 1;
        log.info({ id: req.id, atByte: written, resumes }, 'download broke mid-body; resuming with Range');
      }
    }
  } catch (e) {
    await out.close();
    throw e;
  }
  await out.syncAndClose();
  const sha1 = fillSha1 ?? hash.digest('hex');
  if (req.expectSha1 !== null && req.expectSha1.toLowerCase() !== sha1) {
    throw remoteError('checksum_mismatch', `downloaded file ${req.id} has SHA-1 ${sha1}, expected ${req.expectSha1.toLowerCase()}`, {
      details: { id: req.id, expected: req.expectSha1.toLowerCase(), actual: sha1, sizeBytes: written },
    });
  }
  return { sha1, sizeBytes: written };
}

/**
 * The download layer owns a download's retries (BoxHttp does not retry streamed requests): a transient failure
 * to open the body (5xx, network, operation blocked) is tried again with core/retry.ts's `downloadOpenRetry`,
 * or the server's Retry-After.
 */
async function withRetries<T>(deps: DownloadDeps, req: DownloadRequest, deadline: number, open: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await open();
    } catch (e) {
      if (!isSyncError(e) || !isTransient(e) || attempt > downloadOpenRetry.retries || req.signal?.aborted) throw e;
      // Past the download's deadline: not tried again in this run (the next run or pass does).
      if (deps.http.clock.now() + (e.retryAfterMs ?? 0) > deadline) throw e;
      downloadLog(deps.logger).debug({ id: req.id, attempt, code: e.code }, 'opening the download failed; trying again');
      await deps.http.backoff(downloadOpenRetry, attempt, e.retryAfterMs, req.signal);
    }
  }
}

interface OpenContext {
  /** The pre-signed URL from the last 302, reused for Range resumes until it stops working. */
  location: string | undefined;
  failures: number;
  /** The download's deadline (epoch ms): a 202 whose wait would end past it ends the download. */
  readonly deadline: number;
}

/**
 * The response whose body holds the bytes from `offset`: from the remembered download URL if it still works,
 * otherwise via the API (302 -> download host without the bearer token; 202 -> wait Retry-After; 200 -> bytes).
 */
async function openBody(deps: DownloadDeps, req: DownloadRequest, offset: number, ctx: OpenContext): Promise<BoxStreamResponse> {
  const range: Record<string, string> = offset > 0 ? { range: `bytes=${offset}-` } : {};
  const signal = req.signal === undefined ? {} : { signal: req.signal };
  if (ctx.location !== undefined) {
    try {
      return await deps.http.stream({ url: ctx.location, auth: false, headers: range, accept: [200, 206], ...signal });
    } catch (e) {
      // An expired pre-signed URL or a download-host error: ask the API for a fresh one.
      if (!isSyncError(e) || e.code === 'aborted' || ctx.failures >= (deps.maxResumes ?? 5)) throw e;
      ctx.failures += 1;
      ctx.location = undefined;
    }
  }
  const direct = await askApi(deps, req, range, signal, ctx);
  if (direct !== undefined) return direct;
  return deps.http.stream({ url: ctx.location!, auth: false, headers: range, accept: [200, 206], ...signal });
}

/**
 * Where the bytes from `offset` are, for a worker thread to read them (fillFromUrl): the remembered pre-signed URL,
 * a new one from the API's 302, or the API's own answer when it sends the bytes itself.
 */
async function locate(deps: DownloadDeps, req: DownloadRequest, offset: number, ctx: OpenContext): Promise<{ readonly location: string } | BoxStreamResponse> {
  if (ctx.location === undefined) {
    const direct = await askApi(deps, req, offset > 0 ? { range: `bytes=${offset}-` } : {}, req.signal === undefined ? {} : { signal: req.signal }, ctx);
    if (direct !== undefined) return direct;
  }
  return { location: ctx.location! };
}

/** The API's answer for the file's bytes: a 200/206 with them, or undefined with ctx.location set from its 302. */
async function askApi(deps: DownloadDeps, req: DownloadRequest, range: Record<string, string>, signal: { signal?: AbortSignal }, ctx: OpenContext): Promise<BoxStreamResponse | undefined> {
  const url = `${deps.apiUrl}/files/${encodeURIComponent(req.id)}/content${req.versionId === undefined ? '' : `?version=${encodeURIComponent(req.versionId)}`}`;
  for (let notReady = 0; ; notReady++) {
    const res = await deps.http.stream({ url, headers: range, accept: [200, 206, 202, 302, 303, 307], ...signal });
    if (res.status === 200 || res.status === 206) return res;
    res.discard();
    if (res.status === 202) {
      if (notReady >= downloadNotReadyRetry.retries) throw remoteError('server_error', `file ${req.id} is still not ready for download`);
      const wait = retryAfterMs(res.headers, deps.http.clock.now()) ?? nominalDelayMs(downloadNotReadyRetry, notReady + 1);
      if (deps.http.clock.now() + wait > ctx.deadline) {
        throw remoteError('server_error', `file ${req.id} is still not ready for download (202) by its deadline, after ${notReady + 1} answers; the next run or pass tries again`, {
          details: { id: req.id, tooLongToWait: true },
        });
      }
      deps.http.refuseLongWait(remoteError('operation_blocked', `GET /files/${req.id}/content: not ready yet (202)`, { retryAfterMs: wait }), `GET /files/${req.id}/content`);
      await deps.http.backoff(downloadNotReadyRetry, notReady + 1, wait, req.signal);
      continue;
    }
    const loc = res.headers.location;
    if (!loc) throw remoteError('server_error', `GET /files/${req.id}/content: redirect without a Location`);
    ctx.location = new URL(loc, url).toString();
    return undefined;
  }
}

/**
 * What a worker thread's read of the body (fillFromUrl) leaves to do: `done` (the whole body, hashed), `resume`
 * (cut mid-body: again from `written`, within the resumes allowed), `here` (this thread's way: a status or failure
 * it classifies and retries as before). A body too big, too slow or cancelled ends the download as here.
 */
function afterFill(got: UrlFillResult, req: DownloadRequest, log: Logger, resumes: number, maxResumes: number): 'done' | 'resume' | 'here' {
  if (req.signal?.aborted === true) throw remoteError('aborted', `download of file ${req.id} was cancelled`);
  // Stopped for a bandwidth cap set meanwhile: this thread's way, which paces it.
  if (got.failed?.kind === 'aborted') return 'here';
  if (got.restarted === true) log.info({ id: req.id }, 'download host ignored Range; restarting from the beginning');
  const failed = got.failed;
  if (failed?.kind === 'oversize') throw oversize(req.id, failed.message, req.expectSizeBytes ?? got.written);
  if (failed?.kind === 'slow') throw remoteError('network', `download of file ${req.id} is too slow (${got.written} bytes by its deadline); stopped`, { details: { id: req.id } });
  if (failed === undefined && got.status !== 200 && got.status !== 206) return 'here';
  if (failed?.kind === 'open') return 'here';
  if (failed === undefined && !(got.total > 0 && got.written < got.total)) return 'done';
  // Cut mid-body (or ended before the announced total): resumed from the bytes written, as here.
  const why = failed?.message ?? `body ended after ${got.written} of ${got.total} bytes`;
  if (resumes >= maxResumes) throw remoteError('network', `download of file ${req.id} broke ${resumes + 1} times (last at byte ${got.written})`, { cause: new Error(why) });
  log.info({ id: req.id, atByte: got.written, resumes: resumes + 1 }, 'download broke mid-body; resuming with Range');
  return 'resume';
}

function contentTotal(headers: Record<string, string | string[] | undefined>, offset: number): number {
  const range = headers['content-range'];
  if (typeof range === 'string') {
    const m = /\/(\d+)\s*$/.exec(range);
    if (m) return Number(m[1]);
  }
  const len = headers['content-length'];
  return typeof len === 'string' ? offset + Number(len) : 0;
}

interface Bounds {
  readonly limit: number | undefined;
  readonly deadline: number;
  readonly now: () => number;
  readonly id: string;
  readonly bandwidth: Bandwidth | undefined;
  readonly signal: AbortSignal | undefined;
}

function oversize(id: string, what: string, limit: number): SyncError {
  return remoteError('checksum_mismatch', `download of file ${id} refused: ${what}, but Box lists the file at ${limit} bytes (the file changed, or the server misbehaves); nothing was written under its name`, {
    details: { id, expectedSize: limit },
  });
}

async function pump(
  body: Readable,
  out: TempFile,
  hash: Hash,
  state: { written: number },
  totalBytes: number,
  onProgress: DownloadRequest['onProgress'],
  bounds: Bounds,
): Promise<void> {
  // state.written always matches what was hashed and handed to `out`, so a resume starts at the right byte.
  for await (const chunk of body) {
    const b = chunk as Buffer;
    if (bounds.limit !== undefined && state.written + b.length > bounds.limit) {
      body.destroy();
      throw oversize(bounds.id, `the server sent more than ${bounds.limit} bytes`, bounds.limit);
    }
    if (bounds.now() > bounds.deadline) {
      body.destroy();
      throw remoteError('network', `download of file ${bounds.id} is too slow (${state.written} bytes by its deadline); stopped`, { details: { id: bounds.id } });
    }
    if (bounds.bandwidth) await bounds.bandwidth.take(b.length, bounds.signal, bounds.limit);
    hash.update(b);
    try {
      await out.write(b);
    } catch (e) {
      body.destroy();
      throw new WriteFailed(e);
    }
    state.written += b.length;
    onProgress?.({ doneBytes: state.written, totalBytes });
  }
}

/** A write to the temp file failed: the cause is the disk's error, which ends the download (no resume). */
class WriteFailed extends Error {
  constructor(override readonly cause: unknown) {
    super('writing the download failed', { cause });
  }
}
