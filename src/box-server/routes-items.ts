/**
 * Item metadata routes: GET/PUT/DELETE on files, folders and web links, folder creation, copies and folder
 * listings. PUT carries rename, move, description, sync_state, shared_link, lock, tags and content_modified_at.
 */
import { BoxError } from './box-error.js';
import { fieldsOf, objField, query, param, readJson, sendEmpty, sendJson, type Ctx } from './http-context.js';
import { copyItem, createFolder, createWebLink, renameOrMove, setDescription, setSyncState } from './item-ops.js';
import { lockFile, parseTime, unlockFile } from './file-ops.js';
import { orderOf, page, pageRequest, sortItems } from './paging.js';
import { actorOf, api, checkIfMatch, notModified, type Route } from './route.js';
import { itemJson } from './serialize.js';
import { setSharedLink } from './shared-link-ops.js';
import type { ItemRec, ItemType } from './state.js';
import { rootFolderId } from './store.js';
import { trashItem } from './trash-ops.js';
import { parentIdOf, visibleTo } from './visibility.js';

function sizeOf(ctx: Ctx): (i: ItemRec) => number {
  return (i) => (i.type === 'file' ? ctx.core.store.currentVersion(i)?.sizeBytes ?? 0 : 0);
}

function listing(ctx: Ctx, folder: ItemRec): Record<string, unknown> {
  const store = ctx.core.store;
  const sort = query(ctx, 'sort');
  const direction = query(ctx, 'direction');
  const req = pageRequest(ctx, 100, 1000, true);
  if (req.marker && sort !== null && folder.id === rootFolderId) {
    throw new BoxError(400, 'invalid_parameter', "'sort' is not supported with marker paging on the root folder");
  }
  const visible = store.children(folder.id).filter((c) => visibleTo(store, ctx.userId, c, ctx.sharedRoot));
  const sorted = sortItems(visible, sort, direction, sizeOf(ctx));
  const { entries, meta } = page(sorted, req, orderOf(sort, direction));
  const fields = fieldsOf(ctx);
  return { ...meta, entries: entries.map((i) => itemJson(store, i, fields, 'mini')) };
}

function getItem(type: ItemType) {
  return (ctx: Ctx): void => {
    const store = ctx.core.store;
    // A trashed file or web link reads as 200 with item_status "trashed", as on Box (a trashed folder stays 404).
    const item = store.readable(type, param(ctx, 0));
    // No 304 for an item in the trash: a file trashed with its folder keeps its etag, and a client that cached it
    // while active must still learn it is gone (a full 200 is never a wrong answer to If-None-Match).
    if (item.status === 'active' && notModified(ctx, item)) return sendEmpty(ctx, 304, { ETag: String(item.sequenceId) });
    const fields = fieldsOf(ctx);
    const extra = type === 'folder' && (fields === null || fields.includes('item_collection')) ? { item_collection: listing(ctx, item) } : {};
    sendJson(ctx, 200, itemJson(store, item, fields, 'standard', extra), { ETag: String(item.sequenceId) });
  };
}

function updateItem(type: ItemType) {
  return async (ctx: Ctx): Promise<void> => {
    const store = ctx.core.store;
    const body = await readJson(ctx);
    const id = param(ctx, 0);
    const existing = store.item(id);
    const parentId = parentIdOf(ctx, body);
    // If-Match never stops a move (Box always moves the latest item).
    if (parentId === undefined || parentId === existing?.parentId) checkIfMatch(ctx, existing?.type === type ? existing : undefined);
    const item = store.active(type, id);
    const actor = actorOf(ctx);
    if (body['name'] !== undefined || parentId !== undefined) renameOrMove(store, actor, item, body['name'], parentId);
    if (body['description'] !== undefined) setDescription(store, actor, item, body['description']);
    if (body['sync_state'] !== undefined) {
      if (type !== 'folder') throw new BoxError(400, 'bad_request', "'sync_state' applies to folders only");
      setSyncState(store, actor, item, body['sync_state']);
    }
    if (Object.hasOwn(body, 'shared_link')) setSharedLink(store, actor, item, objField(body, 'shared_link') ?? null);
    if (Object.hasOwn(body, 'lock')) {
      if (type !== 'file') throw new BoxError(400, 'bad_request', "'lock' applies to files only");
      applyLock(ctx, item, objField(body, 'lock') ?? null);
    }
    if (body['tags'] !== undefined) {
      const tags = body['tags'];
      if (!Array.isArray(tags) || tags.length > 100 || tags.some((t) => typeof t !== 'string')) throw new BoxError(400, 'bad_request', "'tags' must be an array of at most 100 strings");
      item.tags = tags as string[];
      store.touch(item, ctx.userId);
    }
    if (body['content_modified_at'] !== undefined) {
      store.assertNotLockedByOther(item, ctx.userId);
      item.contentModifiedAtMs = parseTime(body['content_modified_at'], 'content_modified_at') ?? item.contentModifiedAtMs;
      store.touch(item, ctx.userId);
    }
    if (type === 'web_link' && body['url'] !== undefined) {
      if (typeof body['url'] !== 'string' || !/^https?:\/\//.test(body['url'])) throw new BoxError(400, 'bad_request', "'url' must start with http:// or https://");
      item.url = body['url'];
      store.touch(item, ctx.userId);
    }
    sendJson(ctx, 200, itemJson(store, item, fieldsOf(ctx), 'standard'));
  };
}

function applyLock(ctx: Ctx, file: ItemRec, lock: Record<string, unknown> | null): void {
  const store = ctx.core.store;
  const actor = actorOf(ctx);
  if (lock === null) return unlockFile(store, actor, file);
  const kind = lock['access'] ?? lock['type'];
  if (kind !== 'lock' && kind !== 'unlock') throw new BoxError(400, 'bad_request', "'lock.access' must be 'lock'");
  if (kind === 'unlock') return unlockFile(store, actor, file);
  const prevent = lock['is_download_prevented'];
  if (prevent !== undefined && typeof prevent !== 'boolean') throw new BoxError(400, 'bad_request', "'lock.is_download_prevented' must be a boolean");
  lockFile(store, actor, file, { preventDownload: prevent ?? false, expiresAtMs: parseTime(lock['expires_at'], 'lock.expires_at') ?? null });
}

function deleteItem(type: ItemType) {
  return (ctx: Ctx): void => {
    const store = ctx.core.store;
    const id = param(ctx, 0);
    checkIfMatch(ctx, store.item(id)?.type === type ? store.item(id) : undefined);
    const item = store.active(type, id);
    trashItem(store, actorOf(ctx), item, type !== 'folder' || query(ctx, 'recursive') === 'true');
    sendEmpty(ctx, 204);
  };
}

function copy(type: ItemType) {
  return async (ctx: Ctx): Promise<void> => {
    const store = ctx.core.store;
    const body = await readJson(ctx);
    const item = store.active(type, param(ctx, 0));
    const parentId = parentIdOf(ctx, body);
    if (parentId === undefined) throw new BoxError(400, 'bad_request', "'parent.id' is required");
    const version = body['version'];
    const c = copyItem(store, actorOf(ctx), item, parentId, body['name'], typeof version === 'string' ? version : undefined);
    sendJson(ctx, 201, itemJson(store, c, fieldsOf(ctx), 'standard'));
  };
}

async function postFolder(ctx: Ctx): Promise<void> {
  const store = ctx.core.store;
  const body = await readJson(ctx);
  const parentId = parentIdOf(ctx, body);
  if (parentId === undefined) throw new BoxError(400, 'bad_request', "'parent.id' is required");
  const sync = body['sync_state'];
  if (sync !== undefined && sync !== 'synced' && sync !== 'not_synced' && sync !== 'partially_synced') {
    throw new BoxError(400, 'bad_request', "'sync_state' must be synced, not_synced or partially_synced");
  }
  const f = createFolder(store, actorOf(ctx), parentId, body['name'], sync);
  sendJson(ctx, 201, itemJson(store, f, fieldsOf(ctx), 'standard', { item_collection: { total_count: 0, entries: [], offset: 0, limit: 100, order: [] } }));
}

async function postWebLink(ctx: Ctx): Promise<void> {
  const store = ctx.core.store;
  const body = await readJson(ctx);
  const parentId = parentIdOf(ctx, body);
  if (parentId === undefined) throw new BoxError(400, 'bad_request', "'parent.id' is required");
  const w = createWebLink(store, actorOf(ctx), parentId, body['name'], body['url']);
  if (typeof body['description'] === 'string') setDescription(store, actorOf(ctx), w, body['description']);
  // The spec answers POST /web_links with 200, not 201.
  sendJson(ctx, 200, itemJson(store, w, fieldsOf(ctx), 'standard'));
}

function folderItems(ctx: Ctx): void {
  const folder = ctx.core.store.active('folder', param(ctx, 0));
  sendJson(ctx, 200, listing(ctx, folder));
}

export const itemRoutes: readonly Route[] = [
  api('POST', /^\/folders$/, postFolder),
  api('GET', /^\/folders\/([^/]+)\/items$/, folderItems),
  api('POST', /^\/folders\/([^/]+)\/copy$/, copy('folder')),
  api('GET', /^\/folders\/([^/]+)$/, getItem('folder')),
  api('PUT', /^\/folders\/([^/]+)$/, updateItem('folder')),
  api('DELETE', /^\/folders\/([^/]+)$/, deleteItem('folder')),
  api('POST', /^\/files\/([^/]+)\/copy$/, copy('file')),
  api('GET', /^\/files\/([^/]+)$/, getItem('file')),
  api('PUT', /^\/files\/([^/]+)$/, updateItem('file')),
  api('DELETE', /^\/files\/([^/]+)$/, deleteItem('file')),
  api('POST', /^\/web_links$/, postWebLink),
  api('GET', /^\/web_links\/([^/]+)$/, getItem('web_link')),
  api('PUT', /^\/web_links\/([^/]+)$/, updateItem('web_link')),
  api('DELETE', /^\/web_links\/([^/]+)$/, deleteItem('web_link')),
];
