/**
 * Reading the tree: account, item get (with If-None-Match against the last etag seen), marker-paged folder
 * listings with an explicit `fields` list, and the path of ancestor ids.
 */
import { asRemoteId, type RemoteEntry, type RemoteId, type RemoteKind } from '../../core/model.js';
import type { AccountInfo, ListingPage } from '../../ports/remote-store.js';
import { collectionOf, decodeItem, decodeSize, idString, ITEM_FIELDS_PARAM, kindOfWire } from './decode.js';
import type { BoxHttp } from './http.js';
import type { WireItem, WireItems, WireUser } from './wire-types.js';

const CACHE_LIMIT = 10_000;

export class TreeReader {
  /** Last entry seen per id, so that a get can ask "changed since this etag?" and accept a 304. */
  private readonly seen = new Map<RemoteId, RemoteEntry>();

  constructor(
    private readonly http: BoxHttp,
    private readonly apiUrl: string,
    private readonly pageSize: number,
  ) {}

  async account(): Promise<AccountInfo> {
    const res = await this.http.request<WireUser>({
      method: 'GET',
      url: `${this.apiUrl}/users/me`,
      searchParams: { fields: 'id,login,name,space_amount,space_used,max_upload_size' },
    });
    const u = res.body;
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
    return wire ? this.remember(decodeItem(wire)) : null;
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

  async *listFolder(id: RemoteId): AsyncIterable<ListingPage> {
    let marker: string | undefined;
    for (;;) {
      const res = await this.http.request<WireItems>({
        method: 'GET',
        url: `${this.apiUrl}/folders/${encodeURIComponent(id)}/items`,
        searchParams: {
          fields: ITEM_FIELDS_PARAM,
          usemarker: 'true',
          limit: this.pageSize,
          ...(marker === undefined ? {} : { marker }),
        },
      });
      const entries = (res.body.entries ?? [])
        .filter((w) => kindOfWire(w.type) !== null && (w.item_status ?? 'active') === 'active')
        .map((w) => {
          const e = decodeItem(w);
          // A listing's entries are children of the folder even when Box omits `parent`.
          return this.remember(e.parentId === null ? { ...e, parentId: id } : e);
        });
      yield { entries, rejected: [] };
      const next = res.body.next_marker;
      if (!next) return;
      marker = next;
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
