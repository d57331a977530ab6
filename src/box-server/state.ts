/**
 * The whole server state as plain, JSON-serialisable records. Everything a restart must keep lives here
 * (blob bytes live in the blob store, named by `blobId`). All users share one tree rooted at folder '0', as if
 * every user collaborated on everything: that is what lets a test act as "someone else on the web" on the
 * folders a sync client watches. Times are epoch milliseconds; the wire format is produced in serialize.ts.
 */
export type ItemType = 'file' | 'folder' | 'web_link';
export type ItemStatus = 'active' | 'trashed' | 'deleted';
export type SyncState = 'synced' | 'not_synced' | 'partially_synced';
export type SharedLinkAccess = 'open' | 'company' | 'collaborators';

export interface UserRec {
  readonly id: string;
  name: string;
  login: string;
  spaceAmountBytes: number;
  maxUploadSizeBytes: number;
  enterpriseAdmin: boolean;
  /** Items this user owns are hidden from other users unless reached through a shared link (see visibility.ts). */
  isolated?: boolean;
  readonly createdAtMs: number;
}

export interface VersionRec {
  readonly id: string;
  readonly sha1: string;
  readonly sizeBytes: number;
  readonly blobId: string;
  readonly name: string;
  readonly createdAtMs: number;
  readonly modifiedBy: string;
  trashedAtMs: number | null;
  trashedBy: string | null;
  restoredAtMs: number | null;
  restoredBy: string | null;
}

export interface LockRec {
  readonly id: string;
  readonly createdBy: string;
  readonly createdAtMs: number;
  readonly expiresAtMs: number | null;
  readonly isDownloadPrevented: boolean;
}

/** A folder lock (POST /folder_locks): Box only locks move and delete together, as a `freeze`. */
export interface FolderLockRec {
  readonly id: string;
  readonly createdBy: string;
  readonly createdAtMs: number;
  readonly move: boolean;
  readonly delete: boolean;
}

export interface SharedLinkRec {
  readonly token: string;
  access: SharedLinkAccess;
  password: string | null;
  unsharedAtMs: number | null;
  canDownload: boolean;
  canPreview: boolean;
  canEdit: boolean;
  vanityName: string | null;
  readonly createdAtMs: number;
}

export interface ItemRec {
  readonly type: ItemType;
  readonly id: string;
  name: string;
  parentId: string | null;
  sequenceId: number;
  readonly createdAtMs: number;
  modifiedAtMs: number;
  contentCreatedAtMs: number;
  contentModifiedAtMs: number;
  readonly createdBy: string;
  modifiedBy: string;
  ownedBy: string;
  description: string;
  status: ItemStatus;
  trashedAtMs: number | null;
  /** True when this item itself was trashed (it shows in the trash); false when it went with an ancestor. */
  trashedSelf: boolean;
  /** Parent at trash time, so a restore can go back there. */
  trashedFromParentId: string | null;
  syncState: SyncState;
  /** Files: every version, oldest first; the last one not trashed is current. */
  versions: VersionRec[];
  currentVersionId: string | null;
  lock: LockRec | null;
  /** Folders: folder locks on this folder (absent when it never had one). */
  folderLocks?: FolderLockRec[];
  sharedLink: SharedLinkRec | null;
  url: string | null;
  tags: string[];
}

export interface AccessTokenRec {
  readonly userId: string;
  readonly kind: 'developer' | 'oauth';
  expiresAtMs: number | null;
  revoked: boolean;
}

export interface RefreshTokenRec {
  readonly userId: string;
  readonly clientId: string;
  used: boolean;
  readonly expiresAtMs: number;
}

export interface AuthCodeRec {
  readonly userId: string;
  readonly clientId: string;
  readonly redirectUri: string | null;
  readonly expiresAtMs: number;
  used: boolean;
}

export interface OAuthClientRec {
  readonly clientId: string;
  readonly clientSecret: string;
  readonly redirectUris: readonly string[];
  readonly userId: string;
}

export interface EventRec {
  /** Stream position of this event: positions are dense, starting at 1. */
  readonly position: number;
  readonly eventId: string;
  readonly eventType: string;
  readonly createdAtMs: number;
  readonly createdBy: string;
  readonly sessionId: string;
  readonly itemType: ItemType | null;
  readonly itemId: string | null;
  /** The Box JSON of the source item at the time of the event (a standard File/Folder/WebLink), or null. */
  readonly source: Record<string, unknown> | null;
  /** Folder ids from the root down to the item's parent when the event happened (for the `sync` stream). */
  readonly ancestorIds: readonly string[];
  /** True when the item or an ancestor had sync_state 'synced' when the event happened. */
  readonly inSynced: boolean;
}

export interface PartRec {
  readonly partId: string;
  readonly offset: number;
  readonly sizeBytes: number;
  readonly sha1: string;
}

export interface SessionRec {
  readonly id: string;
  readonly userId: string;
  readonly folderId: string | null;
  readonly fileId: string | null;
  readonly fileName: string;
  readonly fileSizeBytes: number;
  readonly partSizeBytes: number;
  readonly totalParts: number;
  expiresAtMs: number;
  parts: PartRec[];
  committedFileId: string | null;
}

export interface ServerState {
  nextId: number;
  nextVersionId: number;
  nextUserId: number;
  nextPosition: number;
  readonly secret: string;
  users: Record<string, UserRec>;
  items: Record<string, ItemRec>;
  tokens: Record<string, AccessTokenRec>;
  refreshTokens: Record<string, RefreshTokenRec>;
  authCodes: Record<string, AuthCodeRec>;
  clients: Record<string, OAuthClientRec>;
  events: EventRec[];
  sessions: Record<string, SessionRec>;
}
