/**
 * Trash routes: list the trash (items trashed themselves; offset or marker paging, sort name|date|size),
 * inspect one trashed item, restore (optional name and parent; 409 on a clash), and purge.
 */
import { BoxError } from './box-error.js';
import { fieldsOf, param, query, readJson, sendEmpty, sendJson, type Ctx } from './http-context.js';
import { orderOf, page, pageRequest, sortItems } from './paging.js';
import { actorOf, api, type Route } from './route.js';
import { itemJson } from './serialize.js';
import type { ItemType } from './state.js';
import { purgeItem, restoreItem, trashedItem } from './trash-ops.js';
import { parentIdOf, visibleTo } from './visibility.js';

function listTrash(ctx: Ctx): void {
  const store = ctx.core.store;
  const sort = query(ctx, 'sort');
  const direction = query(ctx, 'direction');
  const req = pageRequest(ctx, 100, 1000, true, 10_000);
  if (req.marker && (sort !== null || direction !== null || query(ctx, 'offset') !== null)) {
    throw new BoxError(400, 'invalid_parameter', "Marker paging cannot be combined with 'sort', 'direction' or 'offset'");
  }
  if (sort !== null && !['name', 'date', 'size'].includes(sort)) throw new BoxError(400, 'invalid_parameter', "'sort' must be name, date or size");
  const trashed = Object.values(store.state.items).filter((i) => i.status === 'trashed' && i.trashedSelf && visibleTo(store, ctx.userId, i, null));
  const sorted = sortItems(trashed, sort, direction, (i) => (i.type === 'file' ? store.currentVersion(i)?.sizeBytes ?? 0 : 0));
  const { entries, meta } = page(sorted, req, orderOf(sort, direction));
  const fields = fieldsOf(ctx);
  sendJson(ctx, 200, { ...meta, entries: entries.map((i) => itemJson(store, i, fields, 'mini')) });
}

function getTrashed(type: ItemType) {
  return (ctx: Ctx): void => {
    const store = ctx.core.store;
    sendJson(ctx, 200, itemJson(store, trashedItem(store, type, param(ctx, 0)), fieldsOf(ctx), 'standard'));
  };
}

function restore(type: ItemType) {
  return async (ctx: Ctx): Promise<void> => {
    const store = ctx.core.store;
    const body = await readJson(ctx);
    const item = trashedItem(store, type, param(ctx, 0));
    const parentId = parentIdOf(ctx, body);
    restoreItem(store, actorOf(ctx), item, { ...(parentId !== undefined ? { parentId } : {}), name: body['name'] });
    sendJson(ctx, 201, itemJson(store, item, fieldsOf(ctx), 'standard'));
  };
}

function purge(type: ItemType) {
  return (ctx: Ctx): void => {
    const store = ctx.core.store;
    purgeItem(store, trashedItem(store, type, param(ctx, 0)));
    sendEmpty(ctx, 204);
  };
}

export const trashRoutes: readonly Route[] = [
  api('GET', /^\/folders\/trash\/items$/, listTrash),
  ...(['file', 'folder', 'web_link'] as const).flatMap((type) => {
    const seg = type === 'web_link' ? 'web_links' : `${type}s`;
    return [
      api('GET', new RegExp(`^/${seg}/([^/]+)/trash$`), getTrashed(type)),
      api('DELETE', new RegExp(`^/${seg}/([^/]+)/trash$`), purge(type)),
      api('POST', new RegExp(`^/${seg}/([^/]+)$`), restore(type)),
    ];
  }),
];
