/**
 * File content operations shared by uploads, upload sessions and the test actor: preflight checks (name rules,
 * conflicts, size caps, quota, locks), new files, new versions, promoting and deleting versions, and locks.
 * Blobs are written by the caller (streamed); these functions only attach them.
 */
import { randomBytes } from 'node:crypto';
import type { ActorContext } from './actor-context.js';
import { BoxError, notFound } from './box-error.js';
import type { StoredBlob } from './blob-store.js';
import { activeFolder, assertNoConflict } from './item-ops.js';
import { validateName } from './names.js';
import type { ItemRec, VersionRec } from './state.js';
import { blankItem, type Store } from './store.js';

export function checkSize(store: Store, userId: string, sizeBytes: number | null): void {
  if (sizeBytes === null) return;
  const u = store.user(userId);
  if (sizeBytes > u.maxUploadSizeBytes) {
    throw new BoxError(403, 'file_size_limit_exceeded', `File size ${sizeBytes} exceeds the user's maximum upload size ${u.maxUploadSizeBytes}; nothing was stored`);
  }
  if (store.overQuota(userId, sizeBytes)) {
    throw new BoxError(403, 'storage_limit_exceeded', 'Account storage limit reached; nothing was stored');
  }
}

/** What a new-file upload must pass before any byte is stored. Returns the validated name. */
export function preflightNewFile(store: Store, userId: string, parentId: unknown, rawName: unknown, sizeBytes: number | null): string {
  if (typeof parentId !== 'string' || parentId === '') throw new BoxError(400, 'bad_request', "'parent.id' is required");
  const name = validateName(rawName);
  activeFolder(store, parentId);
  assertNoConflict(store, parentId, name, 'file');
  checkSize(store, userId, sizeBytes);
  return name;
}

export function preflightNewVersion(store: Store, userId: string, file: ItemRec, rawName: unknown, sizeBytes: number | null): string {
  store.assertNotLockedByOther(file, userId);
  const name = rawName === undefined || rawName === null || rawName === '' ? file.name : validateName(rawName);
  if (name !== file.name && file.parentId !== null) assertNoConflict(store, file.parentId, name, 'file', file.id);
  checkSize(store, userId, sizeBytes);
  return name;
}

function versionOf(store: Store, ctx: ActorContext, blob: StoredBlob, name: string): VersionRec {
  return {
    id: store.newVersionId(),
    sha1: blob.sha1,
    sizeBytes: blob.sizeBytes,
    blobId: blob.blobId,
    name,
    createdAtMs: store.now(),
    modifiedBy: ctx.userId,
    trashedAtMs: null,
    trashedBy: null,
    restoredAtMs: null,
    restoredBy: null,
  };
}

export interface ContentTimes {
  readonly contentCreatedAtMs?: number | undefined;
  readonly contentModifiedAtMs?: number | undefined;
}

export function createFile(store: Store, ctx: ActorContext, parentId: string, rawName: unknown, blob: StoredBlob, times: ContentTimes = {}): ItemRec {
  // Checked again after the bytes arrived: the tree may have changed meanwhile.
  const name = preflightNewFile(store, ctx.userId, parentId, rawName, null);
  const now = store.now();
  const f = blankItem('file', store.newId(), name, parentId, ctx.userId, now);
  const v = versionOf(store, ctx, blob, name);
  store.attachCurrentVersion(f, v);
  f.contentCreatedAtMs = times.contentCreatedAtMs ?? now;
  f.contentModifiedAtMs = times.contentModifiedAtMs ?? now;
  store.insert(f);
  store.recordEvent('ITEM_UPLOAD', ctx.userId, f, ctx.sessionId);
  return f;
}

export function addVersion(store: Store, ctx: ActorContext, file: ItemRec, blob: StoredBlob, rawName?: unknown, times: ContentTimes = {}): ItemRec {
  const name = preflightNewVersion(store, ctx.userId, file, rawName, null);
  const v = versionOf(store, ctx, blob, name);
  store.attachCurrentVersion(file, v);
  if (file.name !== name) {
    file.name = name;
    store.structureChanged();
  }
  file.contentModifiedAtMs = times.contentModifiedAtMs ?? store.now();
  store.touch(file, ctx.userId);
  store.recordEvent('ITEM_UPLOAD', ctx.userId, file, ctx.sessionId);
  return file;
}

export function promoteVersion(store: Store, ctx: ActorContext, file: ItemRec, versionId: unknown): VersionRec {
  store.assertNotLockedByOther(file, ctx.userId);
  const old = file.versions.find((v) => v.id === versionId && v.trashedAtMs === null);
  if (!old) throw notFound(`No version ${String(versionId)} of file ${file.id}`);
  // Box: the file gets "the same hash digest, etag, and name as the original" version (sha1 and size follow
  // the current version). The old name may clash with a sibling added since: 409, nothing changed.
  if (old.name !== file.name && file.parentId !== null) assertNoConflict(store, file.parentId, old.name, 'file', file.id);
  const v: VersionRec = { ...old, id: store.newVersionId(), createdAtMs: store.now(), modifiedBy: ctx.userId, trashedAtMs: null, trashedBy: null, restoredAtMs: null, restoredBy: null };
  store.attachCurrentVersion(file, v);
  if (file.name !== old.name) {
    file.name = old.name;
    store.structureChanged();
  }
  store.touch(file, ctx.userId);
  store.recordEvent('ITEM_MAKE_CURRENT_VERSION', ctx.userId, file, ctx.sessionId);
  return v;
}

export function deleteVersion(store: Store, ctx: ActorContext, file: ItemRec, versionId: string): void {
  store.assertNotLockedByOther(file, ctx.userId);
  const v = file.versions.find((x) => x.id === versionId && x.trashedAtMs === null);
  if (!v) throw notFound(`No version ${versionId} of file ${file.id}`);
  if (v.id === file.currentVersionId) throw new BoxError(400, 'bad_request', 'The current version cannot be deleted; upload or promote another version first');
  v.trashedAtMs = store.now();
  v.trashedBy = ctx.userId;
  store.changed(file.id);
}

/** Bring a deleted (trashed) version back (PUT .../versions/{id} with `trashed_at: null`); a live version is left as is. */
export function restoreVersion(store: Store, ctx: ActorContext, file: ItemRec, versionId: string): VersionRec {
  store.assertNotLockedByOther(file, ctx.userId);
  const v = file.versions.find((x) => x.id === versionId);
  if (!v) throw notFound(`No version ${versionId} of file ${file.id}`);
  if (v.trashedAtMs === null) return v;
  v.trashedAtMs = null;
  v.trashedBy = null;
  v.restoredAtMs = store.now();
  v.restoredBy = ctx.userId;
  store.changed(file.id);
  return v;
}

export function lockFile(store: Store, ctx: ActorContext, file: ItemRec, opts: { preventDownload?: boolean; expiresAtMs?: number | null }): void {
  store.assertNotLockedByOther(file, ctx.userId);
  file.lock = {
    id: randomBytes(6).readUIntBE(0, 6).toString(),
    createdBy: ctx.userId,
    createdAtMs: store.now(),
    expiresAtMs: opts.expiresAtMs ?? null,
    isDownloadPrevented: opts.preventDownload ?? false,
  };
  store.touch(file, ctx.userId);
  store.recordEvent('LOCK_CREATE', ctx.userId, file, ctx.sessionId);
}

export function unlockFile(store: Store, ctx: ActorContext, file: ItemRec): void {
  store.assertNotLockedByOther(file, ctx.userId);
  if (!file.lock) return;
  file.lock = null;
  store.touch(file, ctx.userId);
  store.recordEvent('LOCK_DESTROY', ctx.userId, file, ctx.sessionId);
}

export function parseTime(value: unknown, field: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  const ms = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms)) throw new BoxError(400, 'bad_request', `'${field}' must be an RFC 3339 date-time`);
  return ms;
}
