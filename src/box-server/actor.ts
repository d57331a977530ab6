/**
 * ServerActor: act as a user directly, without HTTP ("someone on the web"). Each action goes through the same
 * operation functions as the HTTP routes, so it records the same events, and flushes state when persisted.
 */
import { BoxError } from './box-error.js';
import { addVersion, createFile, lockFile, parseTime, unlockFile } from './file-ops.js';
import { createFolder, createWebLink, renameOrMove, setSyncState } from './item-ops.js';
import { nameKey } from './names.js';
import { itemJson, miniJson } from './serialize.js';
import { rootFolderId, type Store } from './store.js';
import { purgeItem, restoreItem, trashedItem, trashItem } from './trash-ops.js';
import type { ServerActor } from './types.js';

export function makeActor(store: Store, userId: string): ServerActor {
  store.user(userId);
  const ctx = { userId, sessionId: `web-${userId}` };
  const done = <T>(v: T): T => {
    store.flush();
    return v;
  };
  const bytes = (c: Buffer | string): Buffer => (typeof c === 'string' ? Buffer.from(c, 'utf8') : c);
  return {
    createFolder(parentId, name) {
      const f = createFolder(store, ctx, parentId, name);
      return done({ id: f.id, etag: String(f.sequenceId) });
    },
    uploadFile(parentId, name, content, opts) {
      const blob = store.blobs.writeBufferSync(bytes(content));
      try {
        const f = createFile(store, ctx, parentId, name, blob, { contentModifiedAtMs: parseTime(opts?.contentModifiedAt, 'contentModifiedAt') });
        return done({ id: f.id, etag: String(f.sequenceId), sha1: blob.sha1, versionId: f.currentVersionId ?? '' });
      } catch (e) {
        store.blobs.remove(blob.blobId);
        throw e;
      }
    },
    uploadVersion(fileId, content) {
      const file = store.active('file', fileId);
      const blob = store.blobs.writeBufferSync(bytes(content));
      try {
        addVersion(store, ctx, file, blob);
        return done({ etag: String(file.sequenceId), sha1: blob.sha1, versionId: file.currentVersionId ?? '' });
      } catch (e) {
        store.blobs.remove(blob.blobId);
        throw e;
      }
    },
    rename(kind, id, name) {
      renameOrMove(store, ctx, store.active(kind, id), name, undefined);
      done(undefined);
    },
    move(kind, id, parentId, name) {
      renameOrMove(store, ctx, store.active(kind, id), name, parentId);
      done(undefined);
    },
    trash(kind, id) {
      trashItem(store, ctx, store.active(kind, id), true);
      done(undefined);
    },
    restore(kind, id, opts) {
      restoreItem(store, ctx, trashedItem(store, kind, id), { ...(opts?.parentId ? { parentId: opts.parentId } : {}), name: opts?.name });
      done(undefined);
    },
    purge(kind, id) {
      purgeItem(store, trashedItem(store, kind, id));
      done(undefined);
    },
    lock(fileId, opts) {
      lockFile(store, ctx, store.active('file', fileId), {
        preventDownload: opts?.preventDownload ?? false,
        expiresAtMs: parseTime(opts?.expiresAt, 'expiresAt') ?? null,
      });
      done(undefined);
    },
    unlock(fileId) {
      unlockFile(store, ctx, store.active('file', fileId));
      done(undefined);
    },
    createWebLink(parentId, name, url) {
      return done({ id: createWebLink(store, ctx, parentId, name, url).id });
    },
    updateWebLink(id, url) {
      if (!/^https?:\/\//.test(url)) throw new BoxError(400, 'bad_request', "'url' must start with http:// or https://");
      const w = store.active('web_link', id);
      w.url = url;
      store.touch(w, userId);
      store.recordEvent('ITEM_MODIFY', userId, w, ctx.sessionId);
      done(undefined);
    },
    setSyncState(folderId, state) {
      setSyncState(store, ctx, store.active('folder', folderId), state);
      done(undefined);
    },
    getItem(kind, id) {
      const it = store.item(id);
      if (!it || it.type !== kind || it.status === 'deleted') return null;
      return itemJson(store, it, null, 'standard');
    },
    listFolder(folderId) {
      return store.children(folderId).map((c) => {
        const m = miniJson(store, c);
        const entry: { type: string; id: string; name: string; etag: string; sha1?: string } = { type: c.type, id: c.id, name: c.name, etag: String(m['etag']) };
        if (c.type === 'file') entry.sha1 = String(m['sha1']);
        return entry;
      });
    },
    readFile(fileId) {
      const v = store.currentVersion(store.active('file', fileId));
      if (!v) throw new BoxError(404, 'not_found', `File ${fileId} has no content`);
      return store.blobs.readAllSync(v.blobId);
    },
    findByPath(path) {
      let current = store.item(rootFolderId);
      for (const part of path.split('/').filter((p) => p !== '')) {
        if (!current || current.type !== 'folder') return null;
        const key = nameKey(part);
        current = store.children(current.id).find((c) => nameKey(c.name) === key);
      }
      return current ? { type: current.type, id: current.id } : null;
    },
  };
}
