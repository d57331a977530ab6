/**
 * Box's two pagination modes. Offset mode answers `total_count, offset, limit, order`; marker mode
 * (`usemarker=true`) answers `limit, next_marker, prev_marker` and no total. Markers are opaque here (base64url
 * of the offset) and stable enough for a listing that is not changing underneath.
 */
import { BoxError } from './box-error.js';
import { intQuery, query, type Ctx } from './http-context.js';
import type { ItemRec } from './state.js';
import { nameKey } from './names.js';

export interface PageRequest {
  readonly marker: boolean;
  readonly offset: number;
  readonly limit: number;
}

/** `maxOffset`: trash, versions and upload parts refuse offsets above 10000 with 400, as on Box. */
export function pageRequest(ctx: Ctx, dfltLimit: number, maxLimit: number, allowMarker: boolean, maxOffset = Number.MAX_SAFE_INTEGER): PageRequest {
  const limit = intQuery(ctx, 'limit', dfltLimit, 0, maxLimit);
  const useMarker = allowMarker && query(ctx, 'usemarker') === 'true';
  if (useMarker) {
    const m = query(ctx, 'marker');
    let offset = 0;
    if (m) {
      offset = Number(Buffer.from(m, 'base64url').toString('utf8').replace(/^o:/, ''));
      if (!Number.isInteger(offset) || offset < 0) throw new BoxError(400, 'invalid_parameter', "'marker' is not a marker this server issued");
    }
    return { marker: true, offset, limit };
  }
  const offset = intQuery(ctx, 'offset', 0, 0, Number.MAX_SAFE_INTEGER);
  if (offset > maxOffset) throw new BoxError(400, 'invalid_parameter', `'offset' may not exceed ${maxOffset}`);
  return { marker: false, offset, limit };
}

export function page<T>(all: readonly T[], req: PageRequest, order: unknown[] = []): { entries: T[]; meta: Record<string, unknown> } {
  const entries = all.slice(req.offset, req.offset + req.limit);
  if (req.marker) {
    const next = req.offset + req.limit;
    return {
      entries,
      meta: {
        limit: req.limit,
        next_marker: next < all.length ? Buffer.from(`o:${next}`).toString('base64url') : null,
        prev_marker: req.offset > 0 ? Buffer.from(`o:${Math.max(0, req.offset - req.limit)}`).toString('base64url') : null,
      },
    };
  }
  return { entries, meta: { total_count: all.length, offset: req.offset, limit: req.limit, order } };
}

const typeRank: Readonly<Record<ItemRec['type'], number>> = { folder: 0, file: 1, web_link: 2 };

/** Folders, then files, then web links; `sort` is the second key, `direction` applies to it. */
export function sortItems(items: ItemRec[], sort: string | null, direction: string | null, sizeOf: (i: ItemRec) => number): ItemRec[] {
  const dir = (direction ?? 'ASC').toUpperCase();
  if (dir !== 'ASC' && dir !== 'DESC') throw new BoxError(400, 'invalid_parameter', "'direction' must be ASC or DESC");
  const by = sort ?? 'id';
  if (!['id', 'name', 'date', 'size'].includes(by)) throw new BoxError(400, 'invalid_parameter', "'sort' must be id, name, date or size");
  const sign = dir === 'ASC' ? 1 : -1;
  const key = (a: ItemRec, b: ItemRec): number => {
    switch (by) {
      case 'name':
        return nameKey(a.name) < nameKey(b.name) ? -1 : nameKey(a.name) > nameKey(b.name) ? 1 : 0;
      case 'date':
        return a.modifiedAtMs - b.modifiedAtMs;
      case 'size':
        return sizeOf(a) - sizeOf(b);
      default:
        return Number(a.id) - Number(b.id);
    }
  };
  return [...items].sort((a, b) => typeRank[a.type] - typeRank[b.type] || sign * key(a, b) || Number(a.id) - Number(b.id));
}

export function orderOf(sort: string | null, direction: string | null): unknown[] {
  return [{ by: sort ?? 'type', direction: (direction ?? 'ASC').toUpperCase() }];
}
