/**
 * Reading the tree: account, item get (with If-None-Match against the last etag seen), marker-paged folder
 * listings with an explicit `fields` list, and the path of ancestor ids.
 */
import { asRemoteId, type RemoteEntry, type RemoteId, type RemoteKind } from '../../core/model.js';
import { isSyncError, type SyncError } from '../../core/errors.js';
import { escapeText } from '../../core/escape.js';
import { malformedPageRetry } from '../../core/retry.js';
import type { AccountInfo, ListingPage, RejectedItem } from '../../ports/remote-store.js';
import { wrongApiUrl } from './api-url.js';
import { collectionOf, decodeItem, decodeSize, idString, ITEM_FIELDS_PARAM, kindOfWire } from './decode.js';
import { remoteError } from './error-codes.js';
import type { BoxHttp } from './http.js';
import { checkItem, itemsPageSchema, malformed, parseFrame, userSchema } from './schemas.js';
import type { WireItem } from './wire-types.js';

const CACHE_LIMIT = 10_000;
/** A page whose frame is malformed is asked for this many times in all. */
/**
 * Pages in a row that bring no entry this listing has not seen (empty, or repeating earlier pages) end it as
 * incomplete, whatever the paging markers say: two, so that one empty page in a long listing is not an error.
 */
const STALE_PAGES = 2;

export interface ListingLimits {
  /** A folder listing that takes longer than this ends as incomplete. */
  readonly listingDeadlineMs: number;
  /** Pages per folder listing (at 1000 entries a page, 10 million children). */
  readonly maxPages: number;
}

export const defaultListingLimits: ListingLimits = { listingDeadlineMs: 15 * 60_000, maxPages: 10_000 };

export class TreeReader {
  /** Last entry seen per id, so that a get can ask "changed since this etag?" and accept a 304. */
  private readonly seen = new Map<RemoteId, RemoteEntry>();

  constructor(
    private readonly http: BoxHttp,
    private readonly apiUrl: string,
    private readonly pageSize: number,
    private readonly limits: ListingLimits = defaultListingLimits,
  ) {}

  async account(): Promise<AccountInfo> {
    const res = await this.http
      .request<unknown>({
        method: 'GET',
        url: `${this.apiUrl}/users/me`,
        searchParams: { fields: 'id,login,name,space_amount,space_used,max_upload_size' },
      })
      .catch((e: unknown) => {
        // The user asking always exists: a 404 here means the API URL is wrong, not that an item is gone.
        throw isSyncError(e) && e.code === 'not_found' ? wrongApiUrl(this.apiUrl, e) : e;
      });
    const u = parseFrame(userSchema, res.body, 'GET /users/me');
    return {
      userId: idString(u.id),
      login: u.login ?? '',
      name: u.name ?? '',
      spaceAmountBytes: decodeSize(u.space_amount),
      spaceUsedBytes: decodeSize(u.space_used),
      maxUploadSizeBytes: decodeSize(u.max_upload_size),
    };
  }

  async getItem(id: RemoteId, kind: RemoteKind, extraFields: readonly string[] = []): Promise<RemoteEntry | null> {
    const wire = await this.getWire(id, kind, extraFields);
    return wire ? this.remember(decodeItem(wire, `GET /${collectionOf(kind)}/${id}`)) : null;
  }

  /** The raw item (for BoxActions' item info); null when gone or trashed. */
  async getWire(id: RemoteId, kind: RemoteKind, extraFields: readonly string[] = []): Promise<WireItem | null> {
    const cached = extraFields.length === 0 ? this.seen.get(id) : undefined;
    try {
      const res = await this.http.request<WireItem>({
        method: 'GET',
        url: `${this.apiUrl}/${collectionOf(kind)}/${encodeURIComponent(id)}`,
        searchParams: { fields: [ITEM_FIELDS_PARAM, ...extraFields].join(',') },
        ...(cached && cached.etag && cached.kind === kind ? { headers: { 'if-none-match': cached.etag } } : {}),
      });
      if (res.status === 304 && cached) return toWire(cached);
      const w = res.body;
      if (w === null || typeof w !== 'object' || Array.isArray(w)) throw malformed(`GET /${collectionOf(kind)}/${id}`, '(body)', 'the answer is not a JSON object');
      if (kindOfWire(w.type) !== kind) return null;
      if (w.item_status === 'trashed' || w.item_status === 'deleted') {
        this.seen.delete(id);
        return null;
      }
      return w;
    } catch (e) {
      if ((e as { code?: string }).code === 'not_found') {
        this.seen.delete(id);
        return null;
      }
      throw e;
    }
  }

  /**
   * Marker paging (offset paging too, when a server answers that way), with every entry validated: a malformed
   * or hostile entry, a duplicate id, or the folder itself is yielded as rejected, never as an entry. The walk
   * is bounded: a marker or offset that repeats or does not advance, a page that stays malformed after its
   * retries, fewer entries than `total_count`, STALE_PAGES pages in a row with no entry not seen before (a
   * marker that changes while the pages repeat), more than `maxPages` pages, or the listing deadline all end it
   * with `listing_incomplete` after the pages already yielded.
   */
  async *listFolder(id: RemoteId, signal?: AbortSignal): AsyncIterable<ListingPage> {
    const endpoint = `GET /folders/${id}/items`;
    const deadline = this.http.clock.now() + this.limits.listingDeadlineMs;
    const markers = new Set<string>();
    const ids = new Set<string>();
    /** Every raw id this listing has seen (valid or not): a page that adds none is stale. */
    const rawIds = new Set<string>();
    let stale = 0;
    let marker: string | undefined;
    let offset: number | undefined;
    let rawCount = 0;
    let totalCount: number | undefined;
    const incomplete = (why: string): SyncError =>
      remoteError('listing_incomplete', `the listing of Box folder ${id} is incomplete (${why}); nothing in it is taken as deleted`, {
        details: { folderId: id, endpoint },
      });
    for (let page = 0; ; page++) {
      if (page >= this.limits.maxPages) throw incomplete(`more than ${this.limits.maxPages} pages`);
      if (this.http.clock.now() > deadline) throw incomplete(`it took longer than ${Math.round(this.limits.listingDeadlineMs / 1000)} s`);
      const body = await this.listingPage(id, endpoint, marker, offset, signal).catch((e: unknown) => {
        if (isSyncError(e) && e.code === 'malformed_response' && page > 0) throw incomplete(e.message);
        throw e;
      });
      const fresh = newRawIds(body.entries, rawIds);
      stale = fresh === 0 && page > 0 ? stale + 1 : 0;
      if (stale >= STALE_PAGES) throw incomplete(`${stale} pages in a row brought no entry not already listed`);
      const entries: RemoteEntry[] = [];
      const rejected: RejectedItem[] = [];
      // A page that repeats earlier ones adds nothing (its entries would only read as duplicates): skipped.
      for (const raw of stale > 0 ? [] : body.entries) {
        rawCount += 1;
        const c = checkItem(raw, { requireName: true, listedIn: id });
        if (!c.ok) {
          if (!c.unknownType) rejected.push({ id: c.id === null ? null : asRemoteId(c.id), name: c.name, kind: c.kind, parentId: id, endpoint, field: c.field, reason: c.reason });
          continue;
        }
        const e = c.entry;
        if (e.status !== 'active') continue;
        if (ids.has(e.id)) {
          rejected.push({ id: e.id, name: escapeText(e.name), kind: e.kind, parentId: id, endpoint, field: 'id', reason: 'Box listed this id twice in one folder; the second entry was ignored' });
          continue;
        }
        ids.add(e.id);
        entries.push(this.remember(e));
      }
      yield { entries, rejected };
      if (body.total_count !== undefined) totalCount = body.total_count;
      const next = body.next_marker;
      if (next) {
        if (markers.has(next)) throw incomplete('Box repeated a paging marker');
        markers.add(next);
        marker = next;
        continue;
      }
      // Offset paging: advance by the answer's limit (Box may answer with a smaller one than asked), stop at total_count.
      if (body.next_marker === undefined && body.total_count !== undefined && body.offset !== undefined) {
        const step = body.limit !== undefined && body.limit > 0 ? body.limit : body.entries.length;
        const nextOffset = body.offset + step;
        if (nextOffset < body.total_count) {
          if (step <= 0 || (offset !== undefined && nextOffset <= offset) || body.entries.length === 0) throw incomplete('the paging offset does not advance');
          offset = nextOffset;
          continue;
        }
      }
      if (totalCount !== undefined && rawCount < totalCount) throw incomplete(`Box announced ${totalCount} entries and sent ${rawCount}`);
      return;
    }
  }

  /** One page's frame, validated; a malformed frame is asked for again a bounded number of times. */
  private async listingPage(id: RemoteId, endpoint: string, marker: string | undefined, offset: number | undefined, signal?: AbortSignal) {
    for (let attempt = 1; ; attempt++) {
      const res = await this.http.request<unknown>({
        method: 'GET',
        url: `${this.apiUrl}/folders/${encodeURIComponent(id)}/items`,
        searchParams: {
          fields: ITEM_FIELDS_PARAM,
          limit: this.pageSize,
          ...(offset === undefined ? { usemarker: 'true' } : { offset }),
          ...(marker === undefined ? {} : { marker }),
        },
        ...(signal === undefined ? {} : { signal }),
      });
      try {
        return parseFrame(itemsPageSchema, res.body, endpoint);
      } catch (e) {
        if (attempt > malformedPageRetry.retries) throw e;
        await this.http.backoff(malformedPageRetry, attempt, undefined, signal);
      }
    }
  }

  async pathIds(id: RemoteId): Promise<readonly RemoteId[]> {
    for (const kind of ['folder', 'file', 'weblink'] as const) {
      const w = await this.getWire(id, kind, ['path_collection']);
      if (w) return (w.path_collection?.entries ?? []).map((p) => asRemoteId(idString(p.id)));
    }
    return [];
  }

  remember(e: RemoteEntry): RemoteEntry {
    if (this.seen.size >= CACHE_LIMIT) this.seen.delete(this.seen.keys().next().value as RemoteId);
    this.seen.set(e.id, e);
    return e;
  }

  forget(id: RemoteId): void {
    this.seen.delete(id);
  }
}

/** How many entries of a page carry an id not in `seen` (added to it). Entries without a usable id add none. */
function newRawIds(entries: readonly unknown[], seen: Set<string>): number {
  let fresh = 0;
  for (const raw of entries) {
    const id = raw !== null && typeof raw === 'object' ? (raw as { id?: unknown }).id : undefined;
    if (typeof id !== 'string' && typeof id !== 'number') continue;
    const key = String(id);
    if (seen.has(key)) continue;
    seen.add(key);
    fresh += 1;
  }
  return fresh;
}

/** The cached entry back in wire shape, so a 304 answer flows through the same decoder. */
function toWire(e: RemoteEntry): WireItem {
  return {
    type: e.kind === 'weblink' ? 'web_link' : e.kind,
    id: e.id,
    etag: e.etag,
    sequence_id: e.sequenceId,
    name: e.name,
    sha1: e.sha1,
    size: e.sizeBytes,
    content_modified_at: new Date(e.modifiedAtMs).toISOString(),
    parent: e.parentId === null ? null : { id: e.parentId },
    file_version: e.versionId === null ? null : { id: e.versionId },
    url: e.url,
    item_status: e.status,
  };
}
