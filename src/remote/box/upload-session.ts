/**
 * Upload sessions (files at or above the session threshold). Creating the session counts against the uploads
 * rate; parts, listing, commit and abort count as ordinary calls. Box publishes "240 upload requests a minute"
 * without saying whether parts count; counting them would cap a big file at 32 MiB/s (240 x 8 MiB), while Box's
 * own guide asks for several parts in parallel. A judgement call: revisit if Box answers parts with 429.
 *
 * create (or resume) -> parts of the server's `part_size`, several in flight, each with `Digest: sha=<base64>`
 * -> commit with the parts list and the whole-file SHA-1 (computed while the parts are read, in order) ->
 * 202 + Retry-After means "not processed yet, commit again".
 *
 * Resumable: the session id, endpoints and each confirmed part go to the UploadSessionStore (the journal)
 * under the request's `resumeKey`. A new process finds the record, asks the server which parts it holds
 * (`GET list_parts`) and sends only the rest. A changed source file, an expired or vanished session starts
 * over. How the signal ended the upload decides what happens to the session:
 *   - a shutdown (reason `shutdownReason()` from core/errors: SIGTERM, a reload, `engine.close()`) checkpoints:
 *     the server-side session and the record (with every confirmed part) are kept, and the next process resumes;
 *   - any other abort is a cancel: the session is aborted on the server and the record dropped;
 *   - a failure keeps both so the next attempt resumes, unless it proves the session useless (the file changed,
 *     the target moved on, the session expired), which aborts it like a cancel.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { RemoteEntry } from '../../core/model.js';
import { isShutdownReason, isSyncError } from '../../core/errors.js';
import type { UploadStat } from '../../ports/local-fs.js';
import { nominalDelayMs, uploadCommitRetry } from '../../core/retry.js';
import type { UploadRequest, UploadSessionRecord } from '../../ports/remote-store.js';
import type { Bandwidth } from './bandwidth.js';
import { retryAfterMs } from './classify.js';
import { decodeTime, encodeTime, idString, ITEM_FIELDS_PARAM } from './decode.js';
import { remoteError } from './error-codes.js';
import { changedWhileUploading, firstEntry, type UploadDeps, type UploadTarget } from './upload-common.js';
import type { WireFiles, WirePart } from './wire-types.js';
import { malformed, parseFrame, partSchema, partsPageSchema, uploadSessionSchema } from './schemas.js';
import PQueue from 'p-queue';

type Part = UploadSessionRecord['parts'][number];

const SESSION_LIFETIME_MS = 7 * 24 * 3600 * 1000;

export async function sessionUpload(deps: UploadDeps, target: UploadTarget, req: UploadRequest): Promise<RemoteEntry> {
  const source = req.source.stat;
  const log = deps.logger.child({ component: 'box-upload-session' });
  const key = req.resumeKey;
  const store = key === undefined ? undefined : deps.sessions;

  let rec = key === undefined ? undefined : store?.get(key);
  let present = new Map<number, Part>();
  if (rec && !resumable(rec, target, source, req.sha1, deps.http.clock.now())) {
    log.info({ key }, 'stored upload session does not match the file any more; starting a new one');
    await abortQuietly(deps, rec);
    store?.delete(rec.key);
    rec = undefined;
  }
  if (rec) {
    const listed = await listParts(deps, rec, req.signal);
    if (listed === undefined) {
      log.info({ key }, 'stored upload session is gone on the server; starting a new one');
      store?.delete(rec.key);
      rec = undefined;
    } else {
      present = listed;
      log.info({ key, sessionId: rec.sessionId, partsPresent: present.size, totalParts: rec.totalParts }, 'resuming upload session');
    }
  }
  if (!rec) {
    rec = await createSession(deps, target, req, source, key ?? '');
    store?.put(rec);
  }
  const session = rec;

  try {
    const { parts, sha1 } = await sendParts(deps, session, req, present, (p) => store?.addPart(session.key, p));
    if (req.sha1 !== undefined && req.sha1.toLowerCase() !== sha1) {
      throw changedWhileUploading(req, 'its SHA-1 is not the one planned');
    }
    const entry = await commit(deps, session, target, req, parts, sha1);
    store?.delete(session.key);
    return entry;
  } catch (e) {
    const how = interruption(req.signal);
    switch (how) {
      case 'shutdown': {
        const kept = store?.get(session.key)?.parts.length ?? 0;
        log.info({ key, sessionId: session.sessionId, partsConfirmed: kept, totalParts: session.totalParts }, 'upload interrupted by shutdown; session kept for the next start');
        throw remoteError('aborted', `upload of ${req.name} was interrupted by shutdown; ${kept} confirmed part(s) are kept and the next start resumes the session`, { cause: e });
      }
      case 'cancel':
        await abortQuietly(deps, session);
        store?.delete(session.key);
        throw remoteError('aborted', `upload of ${req.name} was cancelled; the upload session was aborted`, { cause: e });
      case 'none':
        if (isSyncError(e) && HOPELESS_CODES.has(e.code)) {
          await abortQuietly(deps, session);
          store?.delete(session.key);
        }
        throw e;
      default:
        return assertNever(how);
    }
  }
}

/** Failures after which the session can never be committed: resuming it would only fail again. */
const HOPELESS_CODES: ReadonlySet<string> = new Set(['precondition_failed', 'item_name_in_use', 'session_expired', 'checksum_mismatch', 'conflict', 'local_changed']);

type Interruption = 'none' | 'shutdown' | 'cancel';

function interruption(signal: AbortSignal | undefined): Interruption {
  if (signal?.aborted !== true) return 'none';
  return isShutdownReason(signal.reason) ? 'shutdown' : 'cancel';
}

function assertNever(x: never): never {
  throw new Error(`unexpected interruption ${String(x)}`);
}

function resumable(rec: UploadSessionRecord, target: UploadTarget, source: UploadStat, sha1: string | undefined, nowMs: number): boolean {
  const fileId = target.kind === 'version' ? target.id : null;
  return (
    rec.fileSizeBytes === source.size &&
    (rec.sourceSha1 === null || sha1 === undefined || rec.sourceSha1 === sha1.toLowerCase()) &&
    Math.floor(rec.sourceMtimeMs) === Math.floor(source.mtimeMs) &&
    rec.fileId === fileId &&
    rec.expiresAtMs > nowMs + 60_000
  );
}

async function createSession(deps: UploadDeps, target: UploadTarget, req: UploadRequest, source: UploadStat, key: string): Promise<UploadSessionRecord> {
  const url =
    target.kind === 'new'
      ? `${deps.uploadUrl}/files/upload_sessions`
      : `${deps.uploadUrl}/files/${encodeURIComponent(target.id)}/upload_sessions`;
  const json =
    target.kind === 'new'
      ? { folder_id: target.parentId, file_size: source.size, file_name: req.name }
      : { file_size: source.size, file_name: req.name };
  const res = await deps.http.request<unknown>({
    method: 'POST',
    url,
    json,
    lane: 'uploads',
    accept: [200, 201],
    ...(req.signal === undefined ? {} : { signal: req.signal }),
  });
  const s = parseFrame(uploadSessionSchema, res.body, 'POST upload_sessions');
  // The parts must cover the file exactly: anything else would upload a different file.
  if (s.part_size * s.total_parts < source.size || s.part_size * (s.total_parts - 1) >= Math.max(1, source.size)) {
    throw malformed('POST upload_sessions', 'total_parts', `${s.total_parts} parts of ${s.part_size} bytes do not cover a file of ${source.size} bytes`);
  }
  const id = idString(s.id);
  const base = `${deps.uploadUrl}/files/upload_sessions/${encodeURIComponent(id)}`;
  const endpoints: Record<string, string> = {
    upload_part: base,
    commit: `${base}/commit`,
    abort: base,
    list_parts: `${base}/parts`,
    status: base,
    ...trustedEndpoints(deps, s.session_endpoints),
  };
  return {
    key,
    sessionId: id,
    endpoints,
    partSizeBytes: s.part_size,
    totalParts: s.total_parts,
    fileSizeBytes: source.size,
    sourceSha1: req.sha1?.toLowerCase() ?? null,
    sourceMtimeMs: source.mtimeMs,
    expiresAtMs: decodeTime(s.session_expires_at) ?? deps.http.clock.now() + SESSION_LIFETIME_MS,
    fileId: target.kind === 'version' ? target.id : null,
    parts: [],
  };
}

/** The parts the server holds, by offset; undefined when the session no longer exists. */
async function listParts(deps: UploadDeps, rec: UploadSessionRecord, signal: AbortSignal | undefined): Promise<Map<number, Part> | undefined> {
  const out = new Map<number, Part>();
  let offset = 0;
  for (;;) {
    const res = await deps.http.request<unknown>({
      method: 'GET',
      url: rec.endpoints.list_parts!,
      searchParams: { offset, limit: 1000 },
      accept: [200, 404, 410],
      lane: 'calls',
      ...(signal === undefined ? {} : { signal }),
    });
    if (res.status !== 200) return undefined;
    const page = parseFrame(partsPageSchema, res.body, 'GET upload_sessions parts');
    const entries = page.entries ?? [];
    for (const p of entries) out.set(p.offset, toPart(p));
    offset += entries.length;
    if (entries.length === 0 || offset >= (page.total_count ?? 0)) return out;
  }
}

/** Session endpoints from the answer, kept only on hosts the token may go to (the defaults are used otherwise). */
function trustedEndpoints(deps: UploadDeps, given: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(given ?? {})) {
    try {
      if (deps.http.trusts(new URL(v))) out[k] = v;
      else deps.logger.child({ component: 'box-upload-session' }).warn({ endpoint: k, host: new URL(v).host }, 'ignored an upload-session endpoint on an untrusted host');
    } catch {
      // not a URL: the default endpoint is used
    }
  }
  return out;
}

function toPart(p: Pick<WirePart, 'part_id' | 'offset' | 'size' | 'sha1'>): Part {
  return { partId: p.part_id, offset: p.offset, size: p.size, sha1: p.sha1.toLowerCase() };
}

/**
 * Reads the file part by part, in order (so the whole-file SHA-1 is computed in one pass), and uploads each
 * part the server lacks with at most `partConcurrency` in flight (a p-queue). Memory: (concurrency + 2) x part
 * size: the parts in flight, one waiting for a slot, and the one being read.
 */
async function sendParts(
  deps: UploadDeps,
  rec: UploadSessionRecord,
  req: UploadRequest,
  present: ReadonlyMap<number, Part>,
  onPart: (p: Part) => void,
): Promise<{ parts: Part[]; sha1: string }> {
  const whole = createHash('sha1');
  const parts: Part[] = [];
  const queue = new PQueue({ concurrency: Math.max(1, deps.partConcurrency) });
  let failure: unknown;
  let doneBytes = 0;
  // A fixed snapshot (UploadReader): the file opened, exactly the session's file_size (resumable() checked it is
  // the reader's size), nothing beyond it: reading the last part checks that.
  for (let i = 0; i < rec.totalParts && failure === undefined; i++) {
    const offset = i * rec.partSizeBytes;
    const size = Math.min(rec.partSizeBytes, rec.fileSizeBytes - offset);
    const buf = await req.source.read(offset, offset + size);
    whole.update(buf);
    const partSha1 = createHash('sha1').update(buf).digest();
    const known = present.get(offset);
    if (known && known.size === size && known.sha1 === partSha1.toString('hex')) {
      parts.push(known);
      doneBytes += size;
      req.onProgress?.({ doneBytes, totalBytes: rec.fileSizeBytes });
      continue;
    }
    // Read ahead only when a slot is about to free up: memory stays bounded by the concurrency.
    await queue.onSizeLessThan(1);
    if (failure !== undefined) break;
    void queue.add(async () => {
      if (failure !== undefined) return;
      try {
        const p = await putPart(deps, rec, offset, buf, partSha1, req.signal);
        parts.push(p);
        onPart(p);
        doneBytes += size;
        req.onProgress?.({ doneBytes, totalBytes: rec.fileSizeBytes });
      } catch (e) {
        failure ??= e;
        queue.clear();
      }
    });
  }
  await queue.onIdle();
  if (failure !== undefined) throw failure;
  parts.sort((a, b) => a.offset - b.offset);
  return { parts, sha1: whole.digest('hex') };
}

/** A part's bytes at the capped rate, in 64 KiB slices. */
function throttled(buf: Buffer, bandwidth: Bandwidth, signal: AbortSignal | undefined): Readable {
  return Readable.from(
    (async function* () {
      for (let at = 0; at < buf.length; at += 64 * 1024) {
        const slice = buf.subarray(at, Math.min(buf.length, at + 64 * 1024));
        await bandwidth.take(slice.length, signal);
        yield slice;
      }
    })(),
    { objectMode: false },
  );
}

async function putPart(deps: UploadDeps, rec: UploadSessionRecord, offset: number, buf: Buffer, sha1: Buffer, signal: AbortSignal | undefined): Promise<Part> {
  const last = offset + buf.length - 1;
  const res = await deps.http.request<{ part?: WirePart } & Partial<WirePart>>({
    method: 'PUT',
    url: rec.endpoints.upload_part!,
    body: () => (deps.bandwidth?.bytesPerSec == null ? buf : throttled(buf, deps.bandwidth, signal)),
    lane: 'calls',
    accept: [200, 201, 409],
    headers: {
      'content-type': 'application/octet-stream',
      'content-range': `bytes ${offset}-${last}/${rec.fileSizeBytes}`,
      digest: `sha=${sha1.toString('base64')}`,
    },
    ...(signal === undefined ? {} : { signal }),
  });
  if (res.status === 409) {
    // The range overlaps a part the server already has (an earlier attempt's answer was lost): look it up.
    const listed = await listParts(deps, rec, signal);
    const p = listed?.get(offset);
    if (p && p.sha1 === sha1.toString('hex')) return p;
    throw remoteError('conflict', `upload session ${rec.sessionId} refused the part at byte ${offset}`);
  }
  const body = res.body as { part?: unknown } | null | undefined;
  const raw = body !== null && typeof body === 'object' && body.part !== undefined ? body.part : body;
  const wire = partSchema.safeParse(raw);
  if (!wire.success) throw remoteError('server_error', `upload session ${rec.sessionId}: the part at byte ${offset} was answered without a valid part (${wire.error.issues[0]?.message ?? 'malformed'})`);
  if (wire.data.offset !== offset || wire.data.size !== buf.length) {
    throw remoteError('server_error', `upload session ${rec.sessionId}: the part at byte ${offset} (${buf.length} bytes) was confirmed as ${wire.data.size} bytes at ${wire.data.offset}`);
  }
  return toPart(wire.data);
}

async function commit(deps: UploadDeps, rec: UploadSessionRecord, target: UploadTarget, req: UploadRequest, parts: readonly Part[], sha1: string): Promise<RemoteEntry> {
  const url = new URL(rec.endpoints.commit!);
  if (!url.searchParams.has('fields')) url.searchParams.set('fields', ITEM_FIELDS_PARAM);
  const json = {
    parts: parts.map((p) => ({ part_id: p.partId, offset: p.offset, size: p.size, sha1: p.sha1 })),
    attributes: { content_modified_at: encodeTime(req.modifiedAtMs) },
  };
  const digest = `sha=${Buffer.from(sha1, 'hex').toString('base64')}`;
  for (let attempt = 1; ; attempt++) {
    const res = await deps.http.request<WireFiles>({
      method: 'POST',
      url: url.toString(),
      json,
      lane: 'calls',
      accept: [200, 201, 202],
      headers: {
        digest,
        ...(target.kind === 'version' && target.ifMatch !== undefined ? { 'if-match': target.ifMatch } : {}),
      },
      ...(req.signal === undefined ? {} : { signal: req.signal }),
    });
    if (res.status !== 202) return firstEntry(res.body, url.toString());
    if (attempt > uploadCommitRetry.retries) throw remoteError('server_error', `upload session ${rec.sessionId} was still not processed after ${attempt} commits`);
    // 202: the parts are in but not processed yet. POSTing the same commit again is what Box asks for.
    await deps.http.backoff(uploadCommitRetry, attempt, retryAfterMs(res.headers, deps.http.clock.now()) ?? nominalDelayMs(uploadCommitRetry, attempt), req.signal);
  }
}

/**
 * Drop persisted sessions that can no longer be resumed (expired, or expiring within a minute), aborting each
 * on the server first. For the daemon's cleanup schedule. Returns how many were dropped.
 */
export async function cleanupSessions(deps: UploadDeps): Promise<number> {
  const store = deps.sessions;
  if (!store) return 0;
  const now = deps.http.clock.now();
  let dropped = 0;
  for (const rec of store.list()) {
    if (rec.expiresAtMs > now + 60_000) continue;
    await abortQuietly(deps, rec);
    store.delete(rec.key);
    dropped += 1;
  }
  return dropped;
}

async function abortQuietly(deps: UploadDeps, rec: UploadSessionRecord): Promise<void> {
  const url = rec.endpoints.abort;
  if (!url) return;
  await deps.http.request({ method: 'DELETE', url, lane: 'calls', accept: [200, 204, 404, 410], retry: false }).catch(() => undefined);
}
