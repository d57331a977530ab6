/**
 * Box JSON for items, in the three forms of openapi.json: mini (listings, nested objects), standard (default
 * single GET) and full (only through `fields`). `fields` answers hold the base fields (`type`, `id`, and
 * `etag` for files and folders) plus exactly the fields asked for. Times are whole-second RFC 3339.
 */
import type { ItemRec, SharedLinkRec } from './state.js';
import type { Store } from './store.js';

export function isoTime(ms: number | null): string | null {
  if (ms === null) return null;
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', '+00:00');
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
  return pick(fieldGetters(store, item), miniFields[item.type]);
}

export function standardItemJson(store: Store, item: ItemRec): Record<string, unknown> {
  return pick(fieldGetters(store, item), standardFields[item.type]);
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
  const getters = fieldGetters(store, item);
  for (const [k, v] of Object.entries(extra)) getters[k] = () => v;
  if (!fields) return pick(getters, [...(form === 'mini' ? miniFields : standardFields)[item.type], ...Object.keys(extra)]);
  const base = item.type === 'web_link' ? ['type', 'id'] : ['type', 'id', 'etag'];
  return pick(getters, [...base, ...fields]);
}

/** A getter answering this marker leaves its key out (fields the spec does not allow to be null). */
const omit = Symbol('omit');
type Getters = Record<string, () => unknown>;

function pick(getters: Getters, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) {
    if (!Object.hasOwn(getters, k) || Object.hasOwn(out, k)) continue;
    const v = getters[k]!();
    if (v !== omit) out[k] = v;
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

/**
 * Every field this server knows for the item (the "full" form, minus computed collections), as getters, so a
 * listing that asks for a few fields never pays for path collections or folder sizes.
 */
export function fieldGetters(store: Store, item: ItemRec): Getters {
  const seq = String(item.sequenceId);
  const common: Getters = {
    type: () => item.type,
    id: () => item.id,
    etag: () => seq,
    sequence_id: () => seq,
    name: () => item.name,
    description: () => item.description,
    path_collection: () => pathCollection(store, item),
    created_at: () => isoTime(item.createdAtMs),
    modified_at: () => isoTime(item.modifiedAtMs),
    trashed_at: () => (item.status === 'trashed' ? isoTime(item.trashedAtMs) : null),
    purged_at: () => (item.status === 'trashed' && item.trashedAtMs !== null ? isoTime(item.trashedAtMs + 30 * 86_400_000) : null),
    content_created_at: () => isoTime(item.contentCreatedAtMs),
    content_modified_at: () => isoTime(item.contentModifiedAtMs),
    created_by: () => userMini(store, item.createdBy),
    modified_by: () => userMini(store, item.modifiedBy),
    owned_by: () => userMini(store, item.ownedBy),
    // File and WebLink shared_link are not nullable in the spec (Folder's is): leave the key out without a link.
    shared_link: () => sharedLinkJson(store, item, item.sharedLink) ?? (item.type === 'folder' ? null : omit),
    parent: () => (item.parentId === null ? null : folderMiniOf(store, item.parentId)),
    item_status: () => item.status,
    tags: () => item.tags,
    has_collaborations: () => false,
    is_externally_owned: () => false,
    is_accessible_via_shared_link: () => item.sharedLink !== null,
    allowed_invitee_roles: () => ['editor', 'viewer'],
  };
  switch (item.type) {
    case 'file': {
      const v = store.currentVersion(item);
      const dot = item.name.lastIndexOf('.');
      return {
        ...common,
        sha1: () => v?.sha1 ?? '',
        file_version: () => (v ? { type: 'file_version', id: v.id, sha1: v.sha1 } : null),
        size: () => v?.sizeBytes ?? 0,
        version_number: () => String(item.versions.filter((x) => x.trashedAtMs === null).length),
        comment_count: () => 0,
        permissions: filePermissions,
        lock: () => lockJson(store, item),
        extension: () => (dot > 0 ? item.name.slice(dot + 1) : ''),
        is_package: () => false,
        expires_at: () => null,
        uploader_display_name: () => store.state.users[v?.modifiedBy ?? item.createdBy]?.name ?? '',
        shared_link_permission_options: () => ['can_preview', 'can_download', 'can_edit'],
        is_associated_with_app_item: () => false,
      };
    }
    case 'folder':
      return {
        ...common,
        size: () => folderSize(store, item),
        folder_upload_email: () => null,
        sync_state: () => item.syncState,
        permissions: folderPermissions,
        can_non_owners_invite: () => true,
        can_non_owners_view_collaborators: () => true,
        is_collaboration_restricted_to_enterprise: () => false,
        allowed_shared_link_access_levels: () => ['open', 'company', 'collaborators'],
        is_associated_with_app_item: () => false,
      };
    case 'web_link':
      return { ...common, url: () => item.url ?? '' };
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
