/**
 * Box JSON for items, in the three forms Box's API reference documents: mini (listings, nested objects), standard (default
 * single GET) and full (only through `fields`). `fields` answers hold the base fields (`type`, `id`, and
 * `etag` for files and folders) plus exactly the fields asked for. Times are whole-second RFC 3339.
 */
import type { ItemRec, LockRec, ServerState, SharedLinkRec, VersionRec } from './state.js';

/**
 * What the serializers read of the store (store.ts): written out here, not imported, because the store serializes
 * the items of its own events with standardItemJson.
 */
export interface Store {
  readonly state: ServerState;
  now(): number;
  item(id: string): ItemRec | undefined;
  ancestors(item: ItemRec): ItemRec[];
  descendants(folderId: string, pred?: (i: ItemRec) => boolean): ItemRec[];
  currentVersion(file: ItemRec): VersionRec | null;
  activeLock(item: ItemRec): LockRec | null;
}

/** The last second isoTime formatted (a listing's items mostly share their times' seconds). */
let isoSecond = Number.NaN;
let isoText = '';

export function isoTime(ms: number | null): string | null {
  if (ms === null) return null;
  const second = Math.floor(ms / 1000);
  if (second !== isoSecond) {
    isoText = new Date(second * 1000).toISOString().replace('.000Z', '+00:00');
    isoSecond = second;
  }
  return isoText;
}

export function userMini(store: Store, userId: string): Record<string, unknown> {
  const u = store.state.users[userId];
  return { type: 'user', id: userId, name: u?.name ?? 'Unknown', login: u?.login ?? '' };
}

const miniFields: Readonly<Record<ItemRec['type'], readonly string[]>> = {
  file: ['type', 'id', 'etag', 'sequence_id', 'name', 'sha1', 'file_version'],
  folder: ['type', 'id', 'etag', 'sequence_id', 'name'],
  web_link: ['type', 'id', 'etag', 'url', 'sequence_id', 'name'],
};

const standardFields: Readonly<Record<ItemRec['type'], readonly string[]>> = {
  file: [
    ...miniFields.file,
    'description', 'size', 'path_collection', 'created_at', 'modified_at', 'trashed_at', 'purged_at',
    'content_created_at', 'content_modified_at', 'created_by', 'modified_by', 'owned_by', 'shared_link', 'parent',
    'item_status',
  ],
  folder: [
    ...miniFields.folder,
    'created_at', 'modified_at', 'description', 'size', 'path_collection', 'created_by', 'modified_by', 'trashed_at',
    'purged_at', 'content_created_at', 'content_modified_at', 'owned_by', 'shared_link', 'folder_upload_email',
    'parent', 'item_status',
  ],
  web_link: [
    ...miniFields.web_link,
    'parent', 'description', 'path_collection', 'created_at', 'modified_at', 'trashed_at', 'purged_at', 'created_by',
    'modified_by', 'owned_by', 'shared_link', 'item_status',
  ],
};

export function miniJson(store: Store, item: ItemRec): Record<string, unknown> {
  return pick(store, item, miniFields[item.type], {});
}

export function standardItemJson(store: Store, item: ItemRec): Record<string, unknown> {
  return pick(store, item, standardFields[item.type], {});
}

/** Parse the `fields` query parameter; null when absent. */
export function parseFields(raw: string | null): string[] | null {
  if (raw === null || raw.trim() === '') return null;
  return raw.split(',').map((f) => f.trim()).filter((f) => f.length > 0);
}

/** The standard form, or base fields plus the requested ones. `extra` supplies computed fields (item_collection). */
export function itemJson(
  store: Store,
  item: ItemRec,
  fields: readonly string[] | null,
  form: 'mini' | 'standard' = 'standard',
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  if (!fields) return pick(store, item, [...(form === 'mini' ? miniFields : standardFields)[item.type], ...Object.keys(extra)], extra);
  const base = item.type === 'web_link' ? ['type', 'id'] : ['type', 'id', 'etag'];
  return pick(store, item, [...base, ...fields], extra);
}

/** Field values answering this marker leave their key out (fields the spec does not allow to be null). */
const omit = Symbol('omit');
/** The item has no such field: unknown `fields` entries are ignored, as Box does. */
const absent = Symbol('absent');

function pick(store: Store, item: ItemRec, keys: readonly string[], extra: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) {
    if (Object.hasOwn(out, k)) continue;
    const v = Object.hasOwn(extra, k) ? extra[k] : fieldValue(store, item, k);
    if (v !== omit && v !== absent) out[k] = v;
  }
  return out;
}

function folderMiniOf(store: Store, id: string): Record<string, unknown> | null {
  const f = store.item(id);
  if (!f) return null;
  return { type: 'folder', id: f.id, sequence_id: String(f.sequenceId), etag: String(f.sequenceId), name: f.name };
}

export function pathCollection(store: Store, item: ItemRec): Record<string, unknown> {
  if (item.status !== 'active') {
    const entries = [{ type: 'folder', id: '1', sequence_id: null, etag: null, name: 'Trash' }];
    return { total_count: entries.length, entries };
  }
  const entries = store.ancestors(item).map((a) => folderMiniOf(store, a.id));
  return { total_count: entries.length, entries };
}

export function sharedLinkJson(store: Store, item: ItemRec, link: SharedLinkRec | null): Record<string, unknown> | null {
  if (!link) return null;
  if (link.unsharedAtMs !== null && link.unsharedAtMs <= store.now()) return null;
  // Shared links are not served by box-server; they look like Box's (the spec's `url` format refuses loopback hosts).
  const host = 'https://app.box.com';
  return {
    url: `${host}/s/${link.token}`,
    download_url: item.type === 'file' ? `${host}/shared/static/${link.token}` : null,
    vanity_url: link.vanityName ? `${host}/v/${link.vanityName}` : null,
    vanity_name: link.vanityName,
    access: link.access,
    // The spec's required list names `accessed` (a typo of `access`); send both so strict clients accept it.
    accessed: link.access,
    effective_access: link.access,
    effective_permission: link.canEdit ? 'can_edit' : link.canDownload ? 'can_download' : 'can_preview',
    unshared_at: isoTime(link.unsharedAtMs),
    is_password_enabled: link.password !== null,
    permissions: { can_download: link.canDownload, can_preview: link.canPreview, can_edit: link.canEdit },
    download_count: 0,
    preview_count: 0,
  };
}

function folderSize(store: Store, item: ItemRec): number {
  let sum = 0;
  for (const d of store.descendants(item.id, (i) => i.status === 'active')) {
    if (d.type === 'file') sum += store.currentVersion(d)?.sizeBytes ?? 0;
  }
  return sum;
}

function fieldValue(store: Store, item: ItemRec, key: string): unknown {
  const common = commonValue(store, item, key);
  if (common !== absent) return common;
  switch (item.type) {
    case 'file':
      return fileValue(store, item, key);
    case 'folder':
      return folderValue(store, item, key);
    case 'web_link':
      return key === 'url' ? item.url ?? '' : absent;
  }
}

function commonValue(store: Store, item: ItemRec, key: string): unknown {
  switch (key) {
    case 'type': return item.type;
    case 'id': return item.id;
    case 'etag':
    case 'sequence_id': return String(item.sequenceId);
    case 'name': return item.name;
    case 'description': return item.description;
    case 'path_collection': return pathCollection(store, item);
    case 'created_at': return isoTime(item.createdAtMs);
    case 'modified_at': return isoTime(item.modifiedAtMs);
    case 'trashed_at': return item.status === 'trashed' ? isoTime(item.trashedAtMs) : null;
    case 'purged_at': return item.status === 'trashed' && item.trashedAtMs !== null ? isoTime(item.trashedAtMs + 30 * 86_400_000) : null;
    case 'content_created_at': return isoTime(item.contentCreatedAtMs);
    case 'content_modified_at': return isoTime(item.contentModifiedAtMs);
    case 'created_by': return userMini(store, item.createdBy);
    case 'modified_by': return userMini(store, item.modifiedBy);
    case 'owned_by': return userMini(store, item.ownedBy);
    // File and WebLink shared_link are not nullable in the spec (Folder's is): leave the key out without a link.
    case 'shared_link': return sharedLinkJson(store, item, item.sharedLink) ?? (item.type === 'folder' ? null : omit);
    case 'parent': return item.parentId === null ? null : folderMiniOf(store, item.parentId);
    case 'item_status': return item.status;
    case 'tags': return item.tags;
    case 'has_collaborations':
    case 'is_externally_owned': return false;
    case 'is_accessible_via_shared_link': return item.sharedLink !== null;
    case 'allowed_invitee_roles': return ['editor', 'viewer'];
    default: return absent;
  }
}

function fileValue(store: Store, item: ItemRec, key: string): unknown {
  const v = store.currentVersion(item);
  switch (key) {
    case 'sha1': return v?.sha1 ?? '';
    case 'file_version': return v ? { type: 'file_version', id: v.id, sha1: v.sha1 } : null;
    case 'size': return v?.sizeBytes ?? 0;
    case 'version_number': return String(item.versions.filter((x) => x.trashedAtMs === null).length);
    case 'comment_count': return 0;
    case 'permissions': return filePermissions();
    case 'lock': return lockJson(store, item);
    case 'extension': {
      const dot = item.name.lastIndexOf('.');
      return dot > 0 ? item.name.slice(dot + 1) : '';
    }
    case 'is_package':
    case 'is_associated_with_app_item': return false;
    case 'expires_at': return null;
    case 'uploader_display_name': return store.state.users[v?.modifiedBy ?? item.createdBy]?.name ?? '';
    case 'shared_link_permission_options': return ['can_preview', 'can_download', 'can_edit'];
    default: return absent;
  }
}

function folderValue(store: Store, item: ItemRec, key: string): unknown {
  switch (key) {
    case 'size': return folderSize(store, item);
    case 'folder_upload_email': return null;
    case 'sync_state': return item.syncState;
    case 'permissions': return folderPermissions();
    case 'can_non_owners_invite':
    case 'can_non_owners_view_collaborators': return true;
    case 'is_collaboration_restricted_to_enterprise':
    case 'is_associated_with_app_item': return false;
    case 'allowed_shared_link_access_levels': return ['open', 'company', 'collaborators'];
    default: return absent;
  }
}

function lockJson(store: Store, item: ItemRec): Record<string, unknown> | null {
  const lock = store.activeLock(item);
  if (!lock) return null;
  return {
    type: 'lock',
    id: lock.id,
    created_by: userMini(store, lock.createdBy),
    created_at: isoTime(lock.createdAtMs),
    ...(lock.expiresAtMs === null ? {} : { expired_at: isoTime(lock.expiresAtMs) }),
    is_download_prevented: lock.isDownloadPrevented,
    app_type: null,
  };
}

function filePermissions(): Record<string, boolean> {
  return {
    can_delete: true, can_download: true, can_invite_collaborator: true, can_rename: true, can_set_share_access: true,
    can_share: true, can_annotate: true, can_comment: true, can_preview: true, can_upload: true,
    can_view_annotations_all: true, can_view_annotations_self: true,
  };
}

function folderPermissions(): Record<string, boolean> {
  return {
    can_delete: true, can_download: true, can_invite_collaborator: true, can_rename: true, can_set_share_access: true,
    can_share: true, can_upload: true,
  };
}
