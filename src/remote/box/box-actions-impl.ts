/** BoxActions over HTTP (see box-actions.ts for the contract). */
import { asRemoteId, type RemoteEntry, type RemoteId } from '../../core/model.js';
import type { BoxActions, TrashedItemInfo, FileVersionInfo, ItemInfo, ItemLock, SharedLinkAccess, SharedLinkInfo } from './box-actions.js';
import { decodeItem, decodeSize, decodeTime, encodeTime, idString } from './decode.js';
import { remoteError } from './error-codes.js';
import type { BoxHttp } from './http.js';
import type { Mutations } from './mutations.js';
import type { TreeReader } from './tree.js';
import type { z } from 'zod';
import { escapeText } from '../../core/escape.js';
import { lockSchema, trashPageSchema, parseFrame, pathCollectionSchema, sharedLinkSchema, versionSchema, versionsPageSchema } from './schemas.js';

export function createBoxActions(deps: { http: BoxHttp; apiUrl: string; tree: TreeReader; mutations: Mutations }): BoxActions {
  const { http, apiUrl, tree, mutations } = deps;
  const fileUrl = (id: RemoteId): string => `${apiUrl}/files/${encodeURIComponent(id)}`;

  return {
    async itemInfo(id, kind) {
      const extra = ['path_collection', 'shared_link', ...(kind === 'file' ? ['lock'] : []), ...(kind === 'folder' ? ['sync_state'] : [])];
      const w = await tree.getWire(id, kind, extra);
      if (!w) return null;
      const endpoint = `GET /${kind === 'weblink' ? 'web_links' : `${kind}s`}/${id}`;
      const path = w.path_collection === undefined || w.path_collection === null ? [] : (parseFrame(pathCollectionSchema, w.path_collection, endpoint).entries ?? []);
      const info: ItemInfo = {
        entry: decodeItem(w, endpoint),
        pathIds: path.map((p) => asRemoteId(idString(p.id))),
        pathNames: path.map((p) => escapeText(p.name ?? '')),
        lock: decodeLock(w.lock, endpoint),
        sharedLink: decodeSharedLink(w.shared_link, endpoint),
        syncState: typeof w.sync_state === 'string' ? w.sync_state : null,
      };
      return info;
    },

    async lock(id, opts = {}) {
      // The spec names the key `access` but requires `type`; SDKs differ, so send both.
      const lock: Record<string, unknown> = { access: 'lock', type: 'lock' };
      if (opts.expiresAtMs !== undefined) lock.expires_at = encodeTime(opts.expiresAtMs);
      if (opts.preventDownload !== undefined) lock.is_download_prevented = opts.preventDownload;
      const w = await mutations.updateWire('file', id, { lock }, 'lock');
      return decodeLock(w.lock, `PUT /files/${id}`);
    },

    async unlock(id) {
      await mutations.updateWire('file', id, { lock: null }, 'lock');
    },

    async createSharedLink(id, kind, opts = {}) {
      const link: Record<string, unknown> = {};
      if (opts.access !== undefined) link.access = opts.access satisfies SharedLinkAccess;
      if (opts.password !== undefined) link.password = opts.password;
      if (opts.unsharedAtMs !== undefined) link.unshared_at = encodeTime(opts.unsharedAtMs);
      if (opts.canDownload !== undefined) link.permissions = { can_download: opts.canDownload };
      const w = await mutations.updateWire(kind, id, { shared_link: link }, 'shared_link');
      const decoded = decodeSharedLink(w.shared_link, `PUT /${kind}s/${id}`);
      if (!decoded) throw remoteError('server_error', `Box answered without a shared link for ${kind} ${id}`);
      return decoded;
    },

    async removeSharedLink(id, kind) {
      await mutations.updateWire(kind, id, { shared_link: null }, 'shared_link');
    },

    async listVersions(fileId) {
      const out: FileVersionInfo[] = [];
      for (let offset = 0; ; ) {
        const res = await http.request<unknown>({
          method: 'GET',
          url: `${fileUrl(fileId)}/versions`,
          searchParams: { fields: 'id,sha1,name,size,created_at,modified_at,trashed_at,modified_by', offset, limit: 1000 },
        });
        const page = parseFrame(versionsPageSchema, res.body, `GET /files/${fileId}/versions`);
        const entries = page.entries ?? [];
        out.push(...entries.map(decodeVersion));
        offset += entries.length;
        if (entries.length === 0 || offset >= (page.total_count ?? 0) || offset >= MAX_VERSIONS) return out;
      }
    },

    async promoteVersion(fileId, versionId) {
      const res = await http.request<unknown>({
        method: 'POST',
        url: `${fileUrl(fileId)}/versions/current`,
        json: { type: 'file_version', id: versionId },
      });
      tree.forget(fileId);
      return decodeVersion(parseFrame(versionSchema, res.body, `POST /files/${fileId}/versions/current`));
    },

    async deleteVersion(fileId, versionId, ifMatch) {
      await http.request({
        method: 'DELETE',
        url: `${fileUrl(fileId)}/versions/${encodeURIComponent(versionId)}`,
        ...(ifMatch === undefined ? {} : { headers: { 'if-match': ifMatch } }),
      });
    },

    async listTrash() {
      const out: TrashedItemInfo[] = [];
      for (let offset = 0; ; ) {
        const res = await http.request<unknown>({
          method: 'GET',
          url: `${apiUrl}/folders/trash/items`,
          searchParams: { fields: 'type,id,name,parent,trashed_at,size', offset, limit: 1000 },
        });
        const page = parseFrame(trashPageSchema, res.body, 'GET /folders/trash/items');
        const entries = page.entries ?? [];
        for (const e of entries) {
          out.push({
            id: asRemoteId(idString(e.id)),
            kind: e.type === 'web_link' ? 'weblink' : e.type,
            name: e.name ?? '',
            parentId: e.parent?.id === undefined ? null : asRemoteId(idString(e.parent.id)),
            trashedAtMs: decodeTime(e.trashed_at),
            sizeBytes: decodeSize(e.size as number | null | undefined),
          });
        }
        offset += entries.length;
        if (entries.length === 0 || offset >= (page.total_count ?? 0) || offset >= MAX_VERSIONS) return out;
      }
    },

    copy: (id, kind, parentId, name): Promise<RemoteEntry> => mutations.copy(id, kind, parentId, name),

    restoreFromTrash: (id, kind, opts = {}) =>
      mutations.restore({ id, kind, ...(opts.name === undefined ? {} : { name: opts.name }), ...(opts.parentId === undefined ? {} : { parentId: opts.parentId }) }),
  };
}

/** Bound on a version listing (Box keeps at most a few hundred per file). */
const MAX_VERSIONS = 100_000;

function decodeLock(raw: unknown, endpoint: string): ItemLock | null {
  if (raw === null || raw === undefined) return null;
  const l = parseFrame(lockSchema, raw, endpoint);
  const expiresAtMs = decodeTime(l.expired_at ?? l.expires_at);
  // Box may report "no lock" as a lock whose expiry has passed.
  if (expiresAtMs !== null && expiresAtMs <= Date.now()) return null;
  return {
    id: l.id === undefined ? null : String(l.id),
    createdAtMs: decodeTime(l.created_at),
    expiresAtMs,
    isDownloadPrevented: l.is_download_prevented === true,
    createdByUserId: l.created_by?.id === undefined ? null : String(l.created_by.id),
  };
}

function decodeSharedLink(raw: unknown, endpoint: string): SharedLinkInfo | null {
  if (raw === null || raw === undefined || (typeof raw === 'object' && !(raw as { url?: unknown }).url)) return null;
  const s = parseFrame(sharedLinkSchema, raw, endpoint);
  return {
    url: s.url,
    downloadUrl: s.download_url ?? null,
    access: s.effective_access ?? s.access ?? null,
    isPasswordEnabled: s.is_password_enabled === true,
    unsharedAtMs: decodeTime(s.unshared_at),
  };
}

function decodeVersion(v: z.infer<typeof versionSchema>): FileVersionInfo {
  return {
    id: idString(v.id),
    sha1: v.sha1 ? v.sha1.toLowerCase() : null,
    name: escapeText(v.name ?? ''),
    sizeBytes: decodeSize(v.size as number | null | undefined),
    createdAtMs: decodeTime(v.created_at),
    modifiedAtMs: decodeTime(v.modified_at),
    trashedAtMs: decodeTime(v.trashed_at),
    modifiedBy: v.modified_by
      ? {
          id: v.modified_by.id === undefined ? null : idString(v.modified_by.id),
          name: typeof v.modified_by.name === 'string' ? escapeText(v.modified_by.name) : null,
          login: typeof v.modified_by.login === 'string' ? escapeText(v.modified_by.login) : null,
        }
      : null,
  };
}
