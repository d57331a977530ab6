/**
 * The domain model: what boxsync knows about the two sides and the merge base.
 *
 * PURE: no node:*, no npm, no clock, no I/O. Everything here is plain data.
 *
 * Three trees (the journal keeps all three):
 * - remote: the last observed Box state, keyed by Box id. A folder rename remotely is one row update.
 * - local:  the last observed disk state, keyed by path relative to a sync root, with inode for move detection.
 * - synced: the merge base, what both sides agreed on after the last successful operation, keyed by path
 *           and also indexed by Box id.
 *
 * Paths are relative to a sync root, '/'-separated, no leading or trailing slash, and never '' for an item
 * (the root itself is not an entry). They are stored exactly as the local file system spells them (bytes
 * decoded as UTF-8); comparisons that must be normalization- or case-insensitive go through core/paths.ts.
 */

declare const brand: unique symbol;
type Brand<T, B extends string> = T & { readonly [brand]: B };

/** A Box item id, opaque. The root folder is "0". */
export type RemoteId = Brand<string, 'RemoteId'>;
/** A path relative to a sync root, '/'-separated. */
export type RelPath = Brand<string, 'RelPath'>;
/** Identifies one configured folder pair (a "root"). Stable across restarts: derived from config. */
export type RootId = Brand<string, 'RootId'>;

export const asRemoteId = (s: string): RemoteId => s as RemoteId;
export const asRelPath = (s: string): RelPath => s as RelPath;
export const asRootId = (s: string): RootId => s as RootId;

export type EntryKind = 'file' | 'folder';
/** Box items that can appear remotely. Web links are download-only shortcuts. */
export type RemoteKind = EntryKind | 'weblink';

export type SyncDirection = 'two-way' | 'download-only' | 'upload-only';

/** One Box item as last observed. Decoded from Box JSON at the adapter edge: nothing Box-shaped leaks past it. */
export interface RemoteEntry {
  readonly id: RemoteId;
  readonly kind: RemoteKind;
  /** Parent folder id; null only for the account root "0" or an item whose parent we cannot see. */
  readonly parentId: RemoteId | null;
  readonly name: string;
  readonly etag: string;
  /** Box sequence_id, a decimal string; compared numerically (core/sequence.ts). */
  readonly sequenceId: string;
  /** Lower-case hex SHA-1 of the current version (files only). */
  readonly sha1: string | null;
  readonly sizeBytes: number;
  /** content_modified_at (falling back to modified_at), epoch milliseconds. */
  readonly modifiedAtMs: number;
  /** Current file_version id (files only). */
  readonly versionId: string | null;
  /** Target URL (web links only). */
  readonly url: string | null;
  /** 'active' for everything a listing returns; events may show 'trashed' or 'deleted'. */
  readonly status: 'active' | 'trashed' | 'deleted';
}

export type LocalKind = EntryKind | 'symlink' | 'other';

/** One local file system entry as last observed. */
export interface LocalEntry {
  readonly path: RelPath;
  readonly kind: LocalKind;
  readonly inode: number;
  readonly sizeBytes: number;
  readonly mtimeMs: number;
  /** Lower-case hex SHA-1, or null when not hashed yet (folders, or a file whose stat matches the synced row). */
  readonly sha1: string | null;
}

/** The merge base for one item: what both sides agreed on after the last successful operation. */
export interface SyncedEntry {
  readonly path: RelPath;
  readonly remoteId: RemoteId;
  readonly kind: RemoteKind;
  /** Remote state agreed on. */
  readonly etag: string;
  readonly sha1: string | null;
  readonly versionId: string | null;
  readonly sizeBytes: number;
  /** Local state agreed on (for cheap change detection without hashing). */
  readonly inode: number;
  readonly mtimeMs: number;
  /** Web link target agreed on (web links only). */
  readonly url: string | null;
}

/** One configured folder pair. */
export interface SyncRoot {
  readonly id: RootId;
  readonly remoteId: RemoteId;
  /** Absolute local path. */
  readonly localPath: string;
  readonly direction: SyncDirection;
  /** gitignore-syntax patterns, relative to the root. */
  readonly exclude: readonly string[];
  /** Selective sync: folders (relative to the root, no leading or trailing slash) not kept on this disk. */
  readonly unselected?: readonly string[];
  /** Selective sync: a new top-level folder on Box is synced, or skipped (left unselected). Default 'sync'. */
  readonly newFolders?: 'sync' | 'skip';
}

/**
 * The three trees of one root, as the planner sees them. The engine may hand the planner the whole root
 * (first run, full rescan) or only the part touched by hints plus the ancestors needed to resolve paths;
 * the planner must give correct operations for whatever it is given and never plan deletions for entries
 * it was not given.
 */
export interface Snapshot {
  readonly root: SyncRoot;
  /** Remote entries by id, including every ancestor needed to resolve a path up to root.remoteId. */
  readonly remote: ReadonlyMap<RemoteId, RemoteEntry>;
  /** Local entries by path. */
  readonly local: ReadonlyMap<RelPath, LocalEntry>;
  /** Merge base by path. */
  readonly synced: ReadonlyMap<RelPath, SyncedEntry>;
  /**
   * Remote ids known to be trashed on Box (observed via events or a failed get), so that an edit against a
   * trashed item restores it instead of creating a new file.
   */
  readonly remoteTrashed: ReadonlySet<RemoteId>;
  /** Paths the failures table says to leave alone for now (backoff not yet elapsed). */
  readonly deferred: ReadonlySet<RelPath>;
}
