/**
 * Upload-session routes: create (new file, new version), upload part, list parts, status, commit (Digest,
 * parts, attributes, If-Match; 202 + Retry-After while `commitAccepted` says so) and abort. Every answer's
 * `session_endpoints` are absolute URLs on this server.
 */
import { BoxError } from './box-error.js';
import { addVersion, createFile, parseTime, preflightNewFile, preflightNewVersion } from './file-ops.js';
import { fieldsOf, param, readJson, sendEmpty, sendJson, type Ctx } from './http-context.js';
import { page, pageRequest } from './paging.js';
import { actorOf, api, checkIfMatch, type Route } from './route.js';
import { isoTime, itemJson } from './serialize.js';
import { checkPartsList, digestHex, dropSession, liveSession, minSessionFileBytes, openSession, wholeFileSha1, writePart } from './session-ops.js';
import type { SessionRec } from './state.js';
import { visibleTargetId } from './visibility.js';
import type { Store } from './store.js';

function sessionJson(store: Store, s: SessionRec): Record<string, unknown> {
  const base = `${store.baseUrl('upload')}/api/2.0/files/upload_sessions/${s.id}`;
  return {
    id: s.id,
    type: 'upload_session',
    session_expires_at: isoTime(s.expiresAtMs),
    part_size: s.partSizeBytes,
    total_parts: s.totalParts,
    num_parts_processed: s.parts.length,
    session_endpoints: { upload_part: base, commit: `${base}/commit`, abort: base, list_parts: `${base}/parts`, status: base, log_event: `${base}/log` },
  };
}

function fileSize(body: Record<string, unknown>): number {
  const size = body['file_size'];
  if (size === undefined || size === null) throw new BoxError(400, 'missing_file_size', "'file_size' is required");
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) throw new BoxError(400, 'invalid_file_size', "'file_size' must be a non-negative integer");
  if (size < minSessionFileBytes) {
    throw new BoxError(400, 'file_size_too_small', `Upload sessions need files of at least ${minSessionFileBytes} bytes; upload smaller files directly`);
  }
  return size;
}

async function createForNewFile(ctx: Ctx): Promise<void> {
  const store = ctx.core.store;
  const body = await readJson(ctx);
  const folderId = body['folder_id'];
  if (folderId === undefined || folderId === null || folderId === '') throw new BoxError(400, 'missing_destination', "'folder_id' is required");
  if (typeof folderId !== 'string') throw new BoxError(400, 'invalid_folder_id', "'folder_id' must be a string id");
  if (body['file_name'] === undefined || body['file_name'] === '') throw new BoxError(400, 'missing_file_name', "'file_name' is required");
  const size = fileSize(body);
  const folder = store.item(visibleTargetId(ctx, folderId) ?? folderId);
  if (!folder || folder.type !== 'folder' || folder.status !== 'active') throw new BoxError(404, 'invalid_parameter', `The folder ${folderId} does not exist`);
  const name = preflightNewFile(store, ctx.userId, folderId, body['file_name'], size);
  const s = openSession(store, { userId: ctx.userId, folderId, fileId: null, fileName: name, fileSizeBytes: size, partSizeBytes: ctx.core.chunkedPartSizeBytes });
  sendJson(ctx, 201, sessionJson(store, s));
}

async function createForVersion(ctx: Ctx): Promise<void> {
  const store = ctx.core.store;
  const body = await readJson(ctx);
  const file = store.active('file', param(ctx, 0));
  const size = fileSize(body);
  const name = preflightNewVersion(store, ctx.userId, file, body['file_name'], size);
  const s = openSession(store, { userId: ctx.userId, folderId: null, fileId: file.id, fileName: name, fileSizeBytes: size, partSizeBytes: ctx.core.chunkedPartSizeBytes });
  sendJson(ctx, 201, sessionJson(store, s));
}

async function uploadPart(ctx: Ctx): Promise<void> {
  const store = ctx.core.store;
  const s = liveSession(store, param(ctx, 0), ctx.userId);
  const part = await writePart(store, s, ctx.req, ctx.req.headers['content-range'], ctx.req.headers['digest']);
  sendJson(ctx, 200, { part: { part_id: part.partId, offset: part.offset, size: part.sizeBytes, sha1: part.sha1 } });
}

function status(ctx: Ctx): void {
  const store = ctx.core.store;
  sendJson(ctx, 200, sessionJson(store, liveSession(store, param(ctx, 0), ctx.userId)));
}

function listParts(ctx: Ctx): void {
  const store = ctx.core.store;
  const s = liveSession(store, param(ctx, 0), ctx.userId);
  const { entries, meta } = page(s.parts, pageRequest(ctx, 100, 1000, false, 10_000));
  sendJson(ctx, 200, { ...meta, entries: entries.map((p) => ({ part_id: p.partId, offset: p.offset, size: p.sizeBytes, sha1: p.sha1 })) });
}

function abort(ctx: Ctx): void {
  const store = ctx.core.store;
  dropSession(store, liveSession(store, param(ctx, 0), ctx.userId));
  sendEmpty(ctx, 204);
}

/** The SHA-1 of the assembled parts, or null while it is still being computed (a 10 GB file takes a while). */
async function assembledSha1(ctx: Ctx, s: SessionRec): Promise<string | null> {
  const hashJobs = ctx.core.sessionHashes;
  let job = hashJobs.get(s.id);
  if (!job) {
    job = wholeFileSha1(ctx.core.store, s);
    hashJobs.set(s.id, job);
    job.catch(() => hashJobs.delete(s.id));
  }
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), ctx.core.sessionCommitWaitMs)));
  try {
    return await Promise.race([job, waited]);
  } finally {
    clearTimeout(timer);
  }
}

async function commit(ctx: Ctx): Promise<void> {
  const store = ctx.core.store;
  const body = await readJson(ctx);
  const s = liveSession(store, param(ctx, 0), ctx.userId);
  if (s.committedFileId) {
    const done = store.active('file', s.committedFileId);
    return sendJson(ctx, 201, { total_count: 1, entries: [itemJson(store, done, fieldsOf(ctx), 'standard')] });
  }
  const wantedSha1 = digestHex(ctx.req.headers['digest'], 'A commit');
  checkPartsList(s, body['parts']);
  const target = s.fileId ? store.item(s.fileId) : undefined;
  if (s.fileId) checkIfMatch(ctx, target);
  if (ctx.core.commitAccepted.remaining > 0) {
    ctx.core.commitAccepted.remaining -= 1;
    return sendEmpty(ctx, 202, { 'Retry-After': String(ctx.core.commitAccepted.retryAfterSec) });
  }
  const sha1 = await assembledSha1(ctx, s);
  if (sha1 === null) return sendEmpty(ctx, 202, { 'Retry-After': '1' });
  // Another commit of the same session, or an abort, may have finished while this one waited.
  if (s.committedFileId) return sendJson(ctx, 201, { total_count: 1, entries: [itemJson(store, store.active('file', s.committedFileId), fieldsOf(ctx), 'standard')] });
  liveSession(store, s.id, ctx.userId);
  if (sha1 !== wantedSha1) {
    ctx.core.sessionHashes.delete(s.id);
    throw new BoxError(400, 'bad_digest', 'The commit Digest does not match the SHA-1 of the uploaded parts; nothing was committed');
  }
  const attrs = (body['attributes'] ?? {}) as Record<string, unknown>;
  const times = {
    contentCreatedAtMs: parseTime(attrs['content_created_at'], 'attributes.content_created_at'),
    contentModifiedAtMs: parseTime(attrs['content_modified_at'], 'attributes.content_modified_at'),
  };
  const actor = actorOf(ctx);
  // Checked before adopting the bytes, so a conflict leaves the session intact for a retry.
  if (s.fileId) preflightNewVersion(store, ctx.userId, store.active('file', s.fileId), s.fileName, null);
  else preflightNewFile(store, ctx.userId, s.folderId, s.fileName, null);
  const blob = { blobId: store.blobs.adopt(store.blobs.sessionPath(s.id)), sha1, sizeBytes: s.fileSizeBytes };
  const file = s.fileId ? addVersion(store, actor, store.active('file', s.fileId), blob, s.fileName, times) : createFile(store, actor, s.folderId ?? '', s.fileName, blob, times);
  if (typeof attrs['description'] === 'string') file.description = attrs['description'];
  ctx.core.sessionHashes.delete(s.id);
  s.committedFileId = file.id;
  store.changed(file.id);
  sendJson(ctx, 201, { total_count: 1, entries: [itemJson(store, file, fieldsOf(ctx), 'standard')] });
}

export const sessionRoutes: readonly Route[] = [
  api('POST', /^\/files\/upload_sessions$/, createForNewFile),
  api('POST', /^\/files\/([^/]+)\/upload_sessions$/, createForVersion),
  api('PUT', /^\/files\/upload_sessions\/([^/]+)$/, uploadPart),
  api('GET', /^\/files\/upload_sessions\/([^/]+)$/, status),
  api('DELETE', /^\/files\/upload_sessions\/([^/]+)$/, abort),
  api('GET', /^\/files\/upload_sessions\/([^/]+)\/parts$/, listParts),
  api('POST', /^\/files\/upload_sessions\/([^/]+)\/commit$/, commit),
];
