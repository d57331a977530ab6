/**
 * Changing the tree: create folder, move/rename, trash, restore, sync_state. Etag-conditional (If-Match)
 * wherever Box honours it; note that Box does not let If-Match stop a move (it always moves the current item),
 * only renames and other changes.
 */
import { isSyncError } from '../../core/errors.js';
import type { RemoteEntry, RemoteId, RemoteKind } from '../../core/model.js';
import type { MoveRequest, RestoreRequest } from '../../ports/remote-store.js';
import { collectionOf, decodeItem, ITEM_FIELDS_PARAM } from './decode.js';
import type { BoxHttp } from './http.js';
import type { WireItem } from './wire-types.js';

export class Mutations {
  constructor(
    private readonly http: BoxHttp,
    private readonly apiUrl: string,
  ) {}

  itemUrl(kind: RemoteKind, id: RemoteId): string {
    return `${this.apiUrl}/${collectionOf(kind)}/${encodeURIComponent(id)}`;
  }

  async createFolder(parentId: RemoteId, name: string): Promise<RemoteEntry> {
    const res = await this.http.request<WireItem>({
      method: 'POST',
      url: `${this.apiUrl}/folders`,
      searchParams: { fields: ITEM_FIELDS_PARAM },
      json: { name, parent: { id: parentId } },
    });
    return decodeItem(res.body);
  }

  async move(req: MoveRequest): Promise<RemoteEntry> {
    const json: Record<string, unknown> = {};
    if (req.name !== undefined) json.name = req.name;
    if (req.parentId !== undefined) json.parent = { id: req.parentId };
    try {
      return await this.update(req.kind, req.id, json, req.ifMatch);
    } catch (e) {
      // Box may refuse a move that carries other fields (403 operation_limit_exceeded): move, then rename.
      if (!(isSyncError(e) && e.details.boxCode === 'operation_limit_exceeded' && req.name !== undefined && req.parentId !== undefined)) throw e;
      const moved = await this.update(req.kind, req.id, { parent: { id: req.parentId } }, req.ifMatch);
      return this.update(req.kind, req.id, { name: req.name }, moved.etag === '' ? undefined : moved.etag);
    }
  }

  /** PUT /{files|folders|web_links}/{id} with If-Match, answering the updated item. */
  async update(kind: RemoteKind, id: RemoteId, json: Record<string, unknown>, ifMatch?: string, extraFields: readonly string[] = []): Promise<RemoteEntry> {
    const res = await this.http.request<WireItem>({
      method: 'PUT',
      url: this.itemUrl(kind, id),
      searchParams: { fields: [ITEM_FIELDS_PARAM, ...extraFields].join(',') },
      json,
      ...(ifMatch === undefined ? {} : { headers: { 'if-match': ifMatch } }),
    });
    return decodeItem(res.body);
  }

  /** Raw PUT for BoxActions (lock, shared links) that need Box fields beyond RemoteEntry. */
  async updateWire(kind: RemoteKind, id: RemoteId, json: Record<string, unknown>, fields: string, ifMatch?: string): Promise<WireItem> {
    const res = await this.http.request<WireItem>({
      method: 'PUT',
      url: this.itemUrl(kind, id),
      searchParams: { fields },
      json,
      ...(ifMatch === undefined ? {} : { headers: { 'if-match': ifMatch } }),
    });
    return res.body;
  }

  async trash(id: RemoteId, kind: RemoteKind, ifMatch?: string): Promise<void> {
    await this.http.request({
      method: 'DELETE',
      url: this.itemUrl(kind, id),
      ...(kind === 'folder' ? { searchParams: { recursive: 'true' } } : {}),
      ...(ifMatch === undefined ? {} : { headers: { 'if-match': ifMatch } }),
    });
  }

  async restore(req: RestoreRequest): Promise<RemoteEntry> {
    const json: Record<string, unknown> = {};
    if (req.name !== undefined) json.name = req.name;
    if (req.parentId !== undefined) json.parent = { id: req.parentId };
    const res = await this.http.request<WireItem>({
      method: 'POST',
      url: this.itemUrl(req.kind, req.id),
      searchParams: { fields: ITEM_FIELDS_PARAM },
      json,
    });
    return decodeItem(res.body);
  }

  async setSyncState(folderId: RemoteId, state: 'synced' | 'not_synced' | 'partially_synced'): Promise<void> {
    await this.http.request({
      method: 'PUT',
      url: this.itemUrl('folder', folderId),
      searchParams: { fields: 'sync_state' },
      json: { sync_state: state },
    });
  }

  async copy(id: RemoteId, kind: 'file' | 'folder', parentId: RemoteId, name?: string): Promise<RemoteEntry> {
    const res = await this.http.request<WireItem>({
      method: 'POST',
      url: `${this.itemUrl(kind, id)}/copy`,
      searchParams: { fields: ITEM_FIELDS_PARAM },
      json: { parent: { id: parentId }, ...(name === undefined ? {} : { name }) },
    });
    return decodeItem(res.body);
  }
}
