/**
 * Content routes: direct multipart upload (new file, new version with If-Match), upload preflight
 * (OPTIONS /files/content), download (302 to a signed URL; `version` query), and file versions (list, get,
 * promote, delete, restore a deleted one).
 */
import { randomBytes } from 'node:crypto';
import { BoxError } from './box-error.js';
import { downloadUrl } from './download.js';
import { addVersion, checkSize, createFile, deleteVersion, parseTime, preflightNewFile, preflightNewVersion, promoteVersion, restoreVersion } from './file-ops.js';
import { fieldsOf, idOf, objField, param, query, readJson, sendEmpty, sendJson, type Ctx } from './http-context.js';
import { receiveMultipart } from './multipart.js';
import { parentIdOf, visibleTargetId } from './visibility.js';
import { page, pageRequest } from './paging.js';
import { actorOf, api, checkIfMatch, type Route } from './route.js';
import { isoTime, itemJson, userMini } from './serialize.js';
import type { ItemRec, VersionRec } from './state.js';
import type { Store } from './store.js';

function checkContentMd5(ctx: Ctx, sha1: string): void {
  const h = ctx.req.headers['content-md5'];
  if (typeof h === 'string' && h.trim().toLowerCase() !== sha1) {
    throw new BoxError(400, 'bad_digest', 'The Content-MD5 header (the SHA-1 of the content) does not match the uploaded bytes; nothing was stored');
  }
}

async function uploadNew(ctx: Ctx): Promise<void> {
  const store = ctx.core.store;
  const user = store.user(ctx.userId);
  const { attributes, blob } = await receiveMultipart(
    ctx,
    (a) => {
      const parent = objField(a, 'parent');
      preflightNewFile(store, ctx.userId, visibleTargetId(ctx, idOf(parent, 'parent')), a['name'], typeof a['size'] === 'number' ? a['size'] : null);
    },
    user.maxUploadSizeBytes,
  );
  try {
    checkContentMd5(ctx, blob.sha1);
    // The attributes need not announce a size: the bytes received must fit the quota (Box answers 403 too).
    checkSize(store, ctx.userId, blob.sizeBytes);
    const file = createFile(store, actorOf(ctx), idOf(objField(attributes, 'parent'), 'parent') ?? '', attributes['name'], blob, {
      contentCreatedAtMs: parseTime(attributes['content_created_at'], 'content_created_at'),
      contentModifiedAtMs: parseTime(attributes['content_modified_at'], 'content_modified_at'),
    });
    sendJson(ctx, 201, { total_count: 1, entries: [itemJson(store, file, fieldsOf(ctx), 'standard')] });
  } catch (e) {
    store.blobs.remove(blob.blobId);
    throw e;
  }
}

async function uploadVersion(ctx: Ctx): Promise<void> {
  const store = ctx.core.store;
  const id = param(ctx, 0);
  checkIfMatch(ctx, store.item(id)?.type === 'file' ? store.item(id) : undefined);
  const file = store.active('file', id);
  store.assertNotLockedByOther(file, ctx.userId);
  const { attributes, blob } = await receiveMultipart(
    ctx,
    (a) => void preflightNewVersion(store, ctx.userId, file, a['name'], null),
    store.user(ctx.userId).maxUploadSizeBytes,
    // Box accepts a new version with only the file part (box-node-sdk 3.x sends no attributes): the name stays.
    { attributesOptional: true },
  );
  try {
    checkContentMd5(ctx, blob.sha1);
    checkSize(store, ctx.userId, blob.sizeBytes);
    // The file may have changed while the bytes streamed in.
    checkIfMatch(ctx, file);
    addVersion(store, actorOf(ctx), file, blob, attributes['name'], {
      contentModifiedAtMs: parseTime(attributes['content_modified_at'], 'content_modified_at'),
    });
    sendJson(ctx, 200, { total_count: 1, entries: [itemJson(store, file, fieldsOf(ctx), 'standard')] });
  } catch (e) {
    store.blobs.remove(blob.blobId);
    throw e;
  }
}

async function preflight(ctx: Ctx): Promise<void> {
  const store = ctx.core.store;
  const body = await readJson(ctx);
  const size = sizeOf(body['size']);
  const fileId = ctx.params[0];
  if (fileId !== undefined) preflightNewVersion(store, ctx.userId, store.active('file', param(ctx, 0)), body['name'], size);
  else preflightNewFile(store, ctx.userId, parentIdOf(ctx, body), body['name'], size);
  const target = fileId !== undefined ? `files/${encodeURIComponent(param(ctx, 0))}/content` : 'files/content';
  sendJson(ctx, 200, { upload_url: `${store.baseUrl('upload')}/api/2.0/${target}`, upload_token: randomBytes(12).toString('base64url') });
}

function download(ctx: Ctx): void {
  const store = ctx.core.store;
  const file = store.active('file', param(ctx, 0));
  const lock = store.activeLock(file);
  if (lock && lock.isDownloadPrevented && lock.createdBy !== ctx.userId) {
    throw new BoxError(403, 'access_denied_item_locked', 'The file is locked by another user with downloads prevented');
  }
  const vid = query(ctx, 'version');
  const version = vid ? file.versions.find((v) => v.id === vid && v.trashedAtMs === null) : store.currentVersion(file);
  if (!version) throw new BoxError(404, 'not_found', `No version ${vid ?? ''} of file ${file.id}`);
  // A HEAD asks whether the download would be served; only a GET is a download.
  if (ctx.req.method !== 'HEAD') store.recordEvent('ITEM_DOWNLOAD', ctx.userId, file, ctx.requestId);
  sendEmpty(ctx, 302, { Location: downloadUrl(store, version) });
}

/** The preflight's `size`: absent or null, or a whole number of bytes (Box answers 400 to -1, 1.5 or "10"). */
function sizeOf(raw: unknown): number | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== 'number' || !Number.isSafeInteger(raw) || raw < 0) throw new BoxError(400, 'bad_request', "'size' must be a whole number of bytes, 0 or more");
  return raw;
}

/**
 * A file version in the full form, or with `fields` its base fields (`type`, `id`) plus exactly those asked for,
 * as for items (unknown names are ignored).
 */
export function versionJson(store: Store, file: ItemRec, v: VersionRec, fields: readonly string[] | null = null): Record<string, unknown> {
  const full = fullVersionJson(store, file, v);
  if (!fields) return full;
  const out: Record<string, unknown> = { type: full['type'], id: full['id'] };
  for (const f of fields) if (Object.hasOwn(full, f)) out[f] = full[f];
  return out;
}

function fullVersionJson(store: Store, file: ItemRec, v: VersionRec): Record<string, unknown> {
  return {
    type: 'file_version',
    id: v.id,
    sha1: v.sha1,
    name: v.name,
    size: v.sizeBytes,
    created_at: isoTime(v.createdAtMs),
    modified_at: isoTime(v.createdAtMs),
    modified_by: userMini(store, v.modifiedBy),
    trashed_at: isoTime(v.trashedAtMs),
    ...(v.trashedBy ? { trashed_by: userMini(store, v.trashedBy) } : {}),
    restored_at: isoTime(v.restoredAtMs),
    ...(v.restoredBy ? { restored_by: userMini(store, v.restoredBy) } : {}),
    purged_at: null,
    uploader_display_name: store.state.users[v.modifiedBy]?.name ?? '',
    version_number: String(file.versions.indexOf(v) + 1),
  };
}

function listVersions(ctx: Ctx): void {
  const store = ctx.core.store;
  const file = store.active('file', param(ctx, 0));
  const past = file.versions.filter((v) => v.id !== file.currentVersionId).reverse();
  const { entries, meta } = page(past, pageRequest(ctx, 1000, 1000, false, 10_000));
  const fields = fieldsOf(ctx);
  sendJson(ctx, 200, { ...meta, entries: entries.map((v) => versionJson(store, file, v, fields)) });
}

function getVersion(ctx: Ctx): void {
  const store = ctx.core.store;
  const file = store.active('file', param(ctx, 0));
  const v = file.versions.find((x) => x.id === param(ctx, 1));
  if (!v) throw new BoxError(404, 'not_found', `No version ${param(ctx, 1)} of file ${file.id}`);
  sendJson(ctx, 200, versionJson(store, file, v, fieldsOf(ctx)));
}

/** PUT /files/{id}/versions/{version_id} with `{"trashed_at": null}`: restore a deleted version. */
async function putVersion(ctx: Ctx): Promise<void> {
  const store = ctx.core.store;
  const body = await readJson(ctx);
  if (!Object.hasOwn(body, 'trashed_at') || body['trashed_at'] !== null) {
    throw new BoxError(400, 'bad_request', "Only {\"trashed_at\": null} (restore a deleted version) can be sent; nothing was changed");
  }
  const file = store.active('file', param(ctx, 0));
  const v = restoreVersion(store, actorOf(ctx), file, param(ctx, 1));
  sendJson(ctx, 200, versionJson(store, file, v, fieldsOf(ctx)));
}

async function promote(ctx: Ctx): Promise<void> {
  const store = ctx.core.store;
  const body = await readJson(ctx);
  const file = store.active('file', param(ctx, 0));
  const v = promoteVersion(store, actorOf(ctx), file, body['id']);
  sendJson(ctx, 201, versionJson(store, file, v, fieldsOf(ctx)));
}

function removeVersion(ctx: Ctx): void {
  const store = ctx.core.store;
  const id = param(ctx, 0);
  checkIfMatch(ctx, store.item(id)?.type === 'file' ? store.item(id) : undefined);
  deleteVersion(store, actorOf(ctx), store.active('file', id), param(ctx, 1));
  sendEmpty(ctx, 204);
}

export const contentRoutes: readonly Route[] = [
  api('POST', /^\/files\/content$/, uploadNew),
  api('OPTIONS', /^\/files\/content$/, preflight),
  api('OPTIONS', /^\/files\/([^/]+)\/content$/, preflight),
  api('POST', /^\/files\/([^/]+)\/content$/, uploadVersion),
  api('GET', /^\/files\/([^/]+)\/content$/, download),
  api('GET', /^\/files\/([^/]+)\/versions$/, listVersions),
  api('POST', /^\/files\/([^/]+)\/versions\/current$/, promote),
  api('GET', /^\/files\/([^/]+)\/versions\/([^/]+)$/, getVersion),
  api('PUT', /^\/files\/([^/]+)\/versions\/([^/]+)$/, putVersion),
  api('DELETE', /^\/files\/([^/]+)\/versions\/([^/]+)$/, removeVersion),
];
