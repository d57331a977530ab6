/**
 * Box Drive-style actions beyond the RemoteStore port, for the CLI: item info, lock/unlock, shared links,
 * versions (list, promote, delete), copy and trash restore with a new name or parent. Domain types only.
 */
import type { RemoteEntry, RemoteId } from '../../core/model.js';

export interface ItemLock {
  readonly id: string | null;
  readonly createdAtMs: number | null;
  /** null: no expiry. */
  readonly expiresAtMs: number | null;
  readonly isDownloadPrevented: boolean;
  readonly createdByUserId: string | null;
}

export interface SharedLinkInfo {
  readonly url: string;
  readonly downloadUrl: string | null;
  readonly access: string | null;
  readonly isPasswordEnabled: boolean;
  readonly unsharedAtMs: number | null;
}

export interface ItemInfo {
  readonly entry: RemoteEntry;
  /** Ancestor folder ids from the account root down. */
  readonly pathIds: readonly RemoteId[];
  /** Ancestor folder names from the account root down (matches pathIds). */
  readonly pathNames: readonly string[];
  readonly lock: ItemLock | null;
  readonly sharedLink: SharedLinkInfo | null;
  /** Folders only. */
  readonly syncState: string | null;
}

export interface FileVersionInfo {
  readonly id: string;
  readonly sha1: string | null;
  readonly name: string;
  readonly sizeBytes: number;
  readonly createdAtMs: number | null;
  readonly modifiedAtMs: number | null;
  readonly trashedAtMs: number | null;
  /** Who uploaded this version (name and login escaped for printing), when Box says. */
  readonly modifiedBy: { readonly id: string | null; readonly name: string | null; readonly login: string | null } | null;
}

/** An item in the Box trash (trashed itself, not with its folder). `name` is Box's, raw: escape it to print. */
export interface TrashedItemInfo {
  readonly id: RemoteId;
  readonly kind: 'file' | 'folder' | 'weblink';
  readonly name: string;
  /** The folder it was in; null when Box does not say. */
  readonly parentId: RemoteId | null;
  readonly trashedAtMs: number | null;
  readonly sizeBytes: number;
}

export type SharedLinkAccess = 'open' | 'company' | 'collaborators';

export interface BoxActions {
  /** null when the item is gone or trashed. */
  itemInfo(id: RemoteId, kind: 'file' | 'folder' | 'weblink'): Promise<ItemInfo | null>;
  lock(id: RemoteId, opts?: { readonly expiresAtMs?: number; readonly preventDownload?: boolean }): Promise<ItemLock | null>;
  unlock(id: RemoteId): Promise<void>;
  createSharedLink(
    id: RemoteId,
    kind: 'file' | 'folder',
    opts?: { readonly access?: SharedLinkAccess; readonly password?: string; readonly unsharedAtMs?: number; readonly canDownload?: boolean },
  ): Promise<SharedLinkInfo>;
  removeSharedLink(id: RemoteId, kind: 'file' | 'folder'): Promise<void>;
  /** Past versions (Box lists only past ones; the current one is the item's versionId). */
  listVersions(fileId: RemoteId): Promise<readonly FileVersionInfo[]>;
  /** Make an old version current (Box copies it to the top of the history). */
  promoteVersion(fileId: RemoteId, versionId: string): Promise<FileVersionInfo>;
  deleteVersion(fileId: RemoteId, versionId: string, ifMatch?: string): Promise<void>;
  copy(id: RemoteId, kind: 'file' | 'folder', parentId: RemoteId, name?: string): Promise<RemoteEntry>;
  /** Everything in the Box trash (paged through; bounded). */
  listTrash(): Promise<readonly TrashedItemInfo[]>;
  /** Restore from the trash, optionally under a new name or into another folder. */
  restoreFromTrash(id: RemoteId, kind: 'file' | 'folder', opts?: { readonly name?: string; readonly parentId?: RemoteId }): Promise<RemoteEntry>;
}
