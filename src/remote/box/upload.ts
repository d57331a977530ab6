/**
 * Uploads, new files and new versions alike:
 * 1. from PREFLIGHT_MIN_BYTES up, a preflight (OPTIONS /files/content) so that a name clash, a full quota or an
 *    oversize file fails before the bytes are sent; its `upload_url`, when present, is where they go (Box's
 *    accelerated upload). A smaller file is sent at once: its POST fails the same way having sent less;
 * 2. below the session threshold, one multipart POST: the `attributes` part first (Box rejects the other
 *    order), `content_modified_at` in whole seconds, `Content-MD5` carrying the SHA-1 (Box's naming), If-Match
 *    for a new version;
 * 3. at or above it, an upload session (upload-session.ts).
 * Nothing is buffered whole: the multipart body is a stream around the reader's snapshot (UploadReader, opened by the
 * caller through LocalFs.openForUpload: this module never stats nor opens a file).
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { isSyncError } from '../../core/errors.js';
import type { RemoteEntry } from '../../core/model.js';
import type { NewFileUpload, NewVersionUpload, UploadRequest } from '../../ports/remote-store.js';
import { encodeTime, ITEM_FIELDS_PARAM } from './decode.js';
import { changedWhileUploading, firstEntry, type UploadDeps, type UploadTarget } from './upload-common.js';
import { sessionUpload } from './upload-session.js';
import type { WireFiles, WirePreflight } from './wire-types.js';

export type { UploadDeps } from './upload-common.js';

/**
 * Below this size an upload is not preflighted. Its POST fails the same ways (a name clash with the conflicting
 * item, a full quota; no account caps a single file this small) after sending less than this, and a small edit
 * reaches Box in one request instead of two (the daemon's pass uploading 50 edited small files took 460 ms with
 * a preflight each, 320-400 ms without). rclone's Box backend posts its simple uploads without one either.
 */
export const PREFLIGHT_MIN_BYTES = 1024 * 1024;

export function uploadNew(deps: UploadDeps, req: NewFileUpload): Promise<RemoteEntry> {
  return upload(deps, { kind: 'new', parentId: req.parentId }, req);
}

export function uploadVersion(deps: UploadDeps, req: NewVersionUpload): Promise<RemoteEntry> {
  return upload(deps, { kind: 'version', id: req.id, ifMatch: req.ifMatch }, req);
}

async function upload(deps: UploadDeps, target: UploadTarget, req: UploadRequest): Promise<RemoteEntry> {
  const size = req.source.size;
  const pre = size >= (deps.preflightMinBytes ?? PREFLIGHT_MIN_BYTES) ? await preflight(deps, target, req.name, size, req.signal) : undefined;
  if (size >= deps.sessionThresholdBytes) return sessionUpload(deps, target, req);
  const url = acceleratedUrl(deps, pre, target) ?? defaultUploadUrl(deps, target);
  return simpleUpload(deps, target, req, url);
}

/** The preflight's upload_url, when it is one for this kind of upload (a new-file URL cannot take a version). */
function acceleratedUrl(deps: UploadDeps, pre: WirePreflight | undefined, target: UploadTarget): string | undefined {
  if (!pre?.upload_url || typeof pre.upload_url !== 'string') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(pre.upload_url);
  } catch {
    return undefined;
  }
  // The bearer token goes only to hosts we trust: an upload_url elsewhere is ignored, the configured one is used.
  if (!deps.http.trusts(parsed)) {
    deps.logger.child({ component: 'box-upload' }).warn({ host: parsed.host }, 'the preflight named an upload host outside the configured and Box hosts; using the configured upload URL instead');
    return undefined;
  }
  const path = parsed.pathname;
  const fits = target.kind === 'new' ? path.endsWith('/files/content') : path.endsWith(`/files/${encodeURIComponent(target.id)}/content`);
  return fits ? pre.upload_url : undefined;
}

function defaultUploadUrl(deps: UploadDeps, target: UploadTarget): string {
  return target.kind === 'new' ? `${deps.uploadUrl}/files/content` : `${deps.uploadUrl}/files/${encodeURIComponent(target.id)}/content`;
}

async function preflight(deps: UploadDeps, target: UploadTarget, name: string, size: number, signal: AbortSignal | undefined): Promise<WirePreflight | undefined> {
  const url = target.kind === 'new' ? `${deps.apiUrl}/files/content` : `${deps.apiUrl}/files/${encodeURIComponent(target.id)}/content`;
  const json = target.kind === 'new' ? { name, size, parent: { id: target.parentId } } : { name, size };
  // The version preflight is documented in Box's guide but not in the spec: where it is missing, go on without it.
  const accept = target.kind === 'new' ? [200] : [200, 404, 405, 501];
  const res = await deps.http.request<WirePreflight>({ method: 'OPTIONS', url, json, accept, ...(signal === undefined ? {} : { signal }) });
  return res.status === 200 ? res.body : undefined;
}

export function attributesFor(target: UploadTarget, req: UploadRequest): Record<string, unknown> {
  const base = { name: req.name, content_modified_at: encodeTime(req.modifiedAtMs) };
  return target.kind === 'new' ? { ...base, parent: { id: target.parentId } } : base;
}

async function simpleUpload(deps: UploadDeps, target: UploadTarget, req: UploadRequest, url: string): Promise<RemoteEntry> {
  const sha1 = req.sha1?.toLowerCase() ?? (await req.source.sha1());
  const boundary = `boxsync-${randomBytes(12).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="attributes"\r\n\r\n${JSON.stringify(attributesFor(target, req))}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${safeFilename(req.name)}"\r\n` +
      `Content-Type: application/octet-stream\r\n\r\n`,
    'utf8',
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`, 'utf8');
  const total = req.source.size;
  const body = (): Readable =>
    Readable.from(
      (async function* () {
        yield head;
        let done = 0;
        // Exactly the announced length: a file that shrinks or grows meanwhile fails the body at once (local_changed).
        for await (const chunk of req.source.stream(1 << 20)) {
          if (deps.bandwidth) await deps.bandwidth.take((chunk as Buffer).length, req.signal, total);
          done += (chunk as Buffer).length;
          req.onProgress?.({ doneBytes: done, totalBytes: total });
          yield chunk as Buffer;
        }
        yield tail;
      })(),
      { objectMode: false },
    );
  const fullUrl = new URL(url);
  if (!fullUrl.searchParams.has('fields')) fullUrl.searchParams.set('fields', ITEM_FIELDS_PARAM);
  const res = await deps.http.request<WireFiles>({
    method: 'POST',
    url: fullUrl.toString(),
    lane: 'uploads',
    body,
    headers: {
      'content-type': `multipart/form-data; boundary=${boundary}`,
      'content-length': String(head.length + total + tail.length),
      'content-md5': sha1,
      ...(target.kind === 'version' && target.ifMatch !== undefined ? { 'if-match': target.ifMatch } : {}),
    },
    ...(req.signal === undefined ? {} : { signal: req.signal }),
  }).catch(async (e: unknown) => {
    // Box found other bytes than the SHA-1 sent: when the file no longer hashes to it, it changed during the
    // upload; the engine looks at it again at once (a retry with backoff would keep the last save off Box).
    if (isSyncError(e) && e.code === 'checksum_mismatch' && (await req.source.sha1().catch(() => null)) !== sha1) throw changedWhileUploading(req, 'Box found other bytes than the SHA-1 sent');
    throw e;
  });
  return firstEntry(res.body, url);
}

function safeFilename(name: string): string {
  return name.replace(/["\r\n\\]/g, '_');
}
