/**
 * Journal: the single source of truth on disk. Implemented by src/journal (better-sqlite3, WAL, STRICT tables;
 * the schema, with a prose comment per table, is the steps of src/journal/migrations.ts).
 *
 * It stores the three trees per root (remote by Box id, local by path, synced by path), the event stream
 * cursor, resumable upload sessions and the per-path failures table. All methods are synchronous (SQLite is
 * local and fast); `transaction(fn)` runs fn atomically, so the reconciler commits each outcome, and the
 * stream position with the observations it led to, in one transaction.
 *
 * Rows of all roots live in one database; every tree method takes the RootId. Remote rows are shared across
 * roots (keyed by Box id alone) because two roots can never contain the same Box item.
 */
import type { ParkClass } from '../core/park-class.js';
import type { LocalEntry, RelPath, RemoteEntry, RemoteId, RootId, SyncedEntry } from '../core/model.js';
import type { Steps } from '../core/slices.js';
import type { UploadSessionStore } from './remote-store.js';

export interface FailureRecord {
  readonly root: RootId;
  readonly path: RelPath;
  readonly code: string;
  readonly message: string;
  readonly attempts: number;
  /** When the item may be tried again (epoch ms). */
  readonly nextRetryAtMs: number;
  /** 'skip' failures wait for the item to change; 'retry' ones back off. */
  readonly disposition: 'retry' | 'skip' | 'replan';
  /** What a park waits for (core/park-class.ts); stored as parkClassOf(code) when not given. */
  readonly parkClass?: ParkClass;
  /**
   * For a park on a local condition: what the item and its folder looked like when it was parked (engine/park-recheck.ts),
   * so a re-check clears it when either changed (a chmod, a chown, a rename). Null when there is nothing local to look at.
   */
  readonly probe?: string | null;
  /** The Box id of the item the failure is about, when it names one (a refused item parked by its name). */
  readonly remoteId?: RemoteId | null;
  /**
   * Since when the item has been failing (epoch ms): set by the first failure, kept when the same item fails again,
   * gone when its failure clears. Null for a failure recorded before the journal kept it (until its next attempt).
   * When recording, it is the time to store for a new failure (now when not given); an existing row keeps its own.
   */
  readonly firstFailedAtMs?: number | null;
}

/** One finished (or failed) operation of the engine, as the operation history keeps it. */
export interface OperationRecord {
  /** Increasing with every record; the order of the history. */
  readonly seq: number;
  readonly root: RootId;
  readonly path: RelPath;
  readonly kind: string;
  readonly reason: string;
  readonly ok: boolean;
  readonly error: string | null;
  readonly atMs: number;
}

export interface OperationQuery {
  readonly root?: RootId;
  /** With `under` (default true), the path and everything below it. */
  readonly path?: RelPath;
  readonly under?: boolean;
  readonly sinceMs?: number;
  /** Default 1000. */
  readonly limit?: number;
}

/**
 * Why a path of a root is not synced. Written when a path that was in the merge base leaves the synced
 * scope (its synced rows are forgotten in the same transaction); dropped when it is included again.
 * 'not-selected' is reserved for selective sync.
 */
export interface UnsyncedRecord {
  readonly root: RootId;
  readonly path: RelPath;
  readonly reason: 'config-exclude' | 'ignore-file' | 'built-in' | 'not-selected';
  readonly kind: 'file' | 'folder' | 'weblink';
  readonly sinceMs: number;
}

export interface Journal {
  transaction<T>(fn: () => T): T;
  /**
   * A group commit: every write in one transaction. A write that throws is rolled back alone and its error is
   * returned at its index (undefined: written); the others are written. When the transaction as a whole fails
   * (the commit, or an error after which SQLite rolled everything back) nothing is written and that error is
   * thrown. A write may run twice (see the implementation): it must only write to the journal.
   */
  transactionEach(writes: readonly (() => void)[]): (unknown | undefined)[];

  // remote tree (by Box id)
  getRemote(id: RemoteId): RemoteEntry | undefined;
  remoteChildren(parentId: RemoteId): readonly RemoteEntry[];
  /** The same children (by name, then id), read in keyset pages: a folder of 100,000 items is not one statement. */
  remoteChildrenPaged(parentId: RemoteId): Iterable<RemoteEntry>;
  /** The child of a folder with exactly this name (the first of `remoteChildren` by that name): one index probe. */
  remoteChildNamed(parentId: RemoteId, name: string): RemoteEntry | undefined;
  /** How many rows are below a folder (recursively), counting at most `limit`: "is this subtree bigger than N?" */
  countRemoteBelow(id: RemoteId, limit: number): number;
  /**
   * A number that changes whenever the remote tree is written (putRemote, deleteRemote, deleteRemoteSubtree), so
   * that rows read earlier are known to be the rows still there while it has not changed (engine/window-rows.ts).
   * Optional: without it nothing is kept.
   */
  remoteGeneration?(): number;
  putRemote(entry: RemoteEntry): void;
  deleteRemote(id: RemoteId): void;
  /** Remove every remote row below a folder (recursively), e.g. before a fresh listing of it. */
  deleteRemoteSubtree(id: RemoteId): void;

  // local tree (by path)
  getLocal(root: RootId, path: RelPath): LocalEntry | undefined;
  /** Direct and indirect children of a path ('' for the whole root). */
  localUnder(root: RootId, path: RelPath | ''): Iterable<LocalEntry>;
  putLocal(root: RootId, entry: LocalEntry): void;
  deleteLocal(root: RootId, path: RelPath): void;
  /** Delete a path and everything below it. */
  deleteLocalSubtree(root: RootId, path: RelPath): void;
  /** Rename a path and everything below it (one local folder move). */
  moveLocalSubtree(root: RootId, from: RelPath, to: RelPath): void;
  localByInode(root: RootId, inode: number): LocalEntry | undefined;
  /** The entries directly below a path ('' for the top level of the root), in path order. */
  localChildren(root: RootId, path: RelPath | ''): readonly LocalEntry[];
  /** The same children in keyset pages (a few milliseconds each): work in slices pauses between two. Optional. */
  localChildrenPages?(root: RootId, path: RelPath | ''): Iterable<readonly LocalEntry[]>;
  /** How many entries are below a path ('' for the whole root), counting at most `limit`. */
  countLocalUnder(root: RootId, path: RelPath | '', limit: number): number;
  /**
   * Listing marks (engine/observe-local.ts, local/scan.ts): `mark` digests a folder's whole listing as a full scan
   * read it when every entry of it equalled its local row, `entries` the entries that scan reported. Any write of a
   * local row of that folder drops its mark, so a mark stands only while those rows are unchanged. Optional: without
   * them every scan compares every folder.
   */
  listingMark?(root: RootId, dir: RelPath | ''): { readonly mark: string; readonly entries: number } | undefined;
  putListingMark?(root: RootId, dir: RelPath | '', mark: string, entries: number): void;
  /** Drops every listing mark of a root (its ignore rules changed: the same listing may now report other entries). */
  clearListingMarks?(root: RootId): void;

  // synced tree (merge base, by path, indexed by remote id)
  getSynced(root: RootId, path: RelPath): SyncedEntry | undefined;
  syncedByRemoteId(root: RootId, id: RemoteId): SyncedEntry | undefined;
  /**
   * syncedByRemoteId for many ids at once: the rows of those that have one, by id (a window's snapshot asks for a
   * few hundred, most of them without a row on a first mirror). Optional: without it, one lookup an id.
   */
  syncedByRemoteIds?(root: RootId, ids: readonly RemoteId[]): ReadonlyMap<RemoteId, SyncedEntry>;
  /** The base row of a local entry before a local move: the row with the same inode (the first by path). */
  syncedByInode(root: RootId, inode: number): SyncedEntry | undefined;
  syncedUnder(root: RootId, path: RelPath | ''): Iterable<SyncedEntry>;
  syncedChildren(root: RootId, path: RelPath | ''): readonly SyncedEntry[];
  /** The same children in keyset pages, as localChildrenPages. Optional. */
  syncedChildrenPages?(root: RootId, path: RelPath | ''): Iterable<readonly SyncedEntry[]>;
  countSyncedUnder(root: RootId, path: RelPath | '', limit: number): number;
  putSynced(root: RootId, entry: SyncedEntry): void;
  deleteSynced(root: RootId, path: RelPath): void;
  deleteSyncedSubtree(root: RootId, path: RelPath): void;
  moveSyncedSubtree(root: RootId, from: RelPath, to: RelPath): void;
  countSynced(root: RootId): { files: number; folders: number; bytes: number };
  /** countSynced as work that may be paused (core/slices.ts): the daemon's status counts in slices during a pass. */
  countSyncedSteps?(root: RootId): Steps<{ files: number; folders: number; bytes: number }>;

  // the event stream cursor (per stream type), a lossless string
  getCursor(name: string): string | undefined;
  setCursor(name: string, position: string): void;

  // remote ids observed in the trash (so an edit against them restores instead of re-creating)
  markTrashed(id: RemoteId, trashed: boolean): void;
  isTrashed(id: RemoteId): boolean;

  // per-path failures with backoff
  recordFailure(f: FailureRecord): void;
  clearFailure(root: RootId, path: RelPath): void;
  getFailure(root: RootId, path: RelPath): FailureRecord | undefined;
  failures(root?: RootId): readonly FailureRecord[];
  /** The failures recorded with this Box id (FailureRecord.remoteId), in every root. */
  failuresOfRemoteId(id: RemoteId): readonly FailureRecord[];
  /** The failures that wait for their item to change ('skip') and those of this code, in every root (one query). */
  parkedFailures(code: string): readonly FailureRecord[];

  // the operation history (bounded; newest first), for `boxsync history` and `boxsync info`
  recordOperation(op: Omit<OperationRecord, 'seq'>): void;
  operations(q: OperationQuery): readonly OperationRecord[];
  lastOperation(root: RootId, path: RelPath): OperationRecord | undefined;

  // paths deliberately not synced, and why (a change of scope is never a delete: engine/scope-change.ts)
  putUnsynced(u: UnsyncedRecord): void;
  deleteUnsynced(root: RootId, path: RelPath): void;
  unsyncedPaths(root?: RootId): readonly UnsyncedRecord[];
  /** The roots that have merge-base rows (one index seek each). */
  syncedRoots(): readonly RootId[];
  /** Forget a root: its merge base, local rows, failures and unsynced rows (a folder pair left the config). */
  forgetRoot(root: RootId): void;

  // key/value metadata (schema facts, last successful sync, account id, ...)
  getMeta(key: string): string | undefined;
  /** Setting the value a key already has writes nothing (nor does setCursor's). */
  setMeta(key: string, value: string): void;

  /**
   * Runs `action` right before this journal's next write (inside that write's transaction, if any), once; null
   * drops the pending one (journal/first-write.ts). Optional: without it, run the action at once.
   */
  beforeNextWrite?(action: (() => void) | null): void;
  /**
   * A small fact kept beside the journal, not in it: written with no transaction, WAL write or fsync, best effort
   * (after a power cut an older value may come back, or none). For what is only shown (the last successful
   * sync's time) when nothing else is written. Optional: without them, use setMeta.
   */
  setNote?(key: string, value: string): void;
  getNote?(key: string): string | undefined;

  readonly uploadSessions: UploadSessionStore;

  /**
   * Periodic upkeep, called by the daemon's journal-maintenance schedule while no pass runs: checkpoint and
   * truncate the WAL (`PRAGMA wal_checkpoint(TRUNCATE)`) and let SQLite refresh its statistics
   * (`PRAGMA optimize`). Optional: a journal without it simply skips the schedule.
   */
  maintain?(): void;

  /**
   * The same upkeep with its integrity check, `PRAGMA optimize` and most of the checkpoint in a process of its own
   * (journal/check-process.ts), so that the caller's event loop stays free while the whole file is read; `beforeUpkeep` is awaited between the check and the
   * checkpoint (the daemon waits there for the running pass). Rejects with the fatal SyncError `journal_damaged`
   * when the check finds damage, with another error when it could not run (the next maintenance tries again), or
   * when `signal` stopped it. `repeat` runs the check that many times (a test's knob).
   */
  maintainOffThread?(opts?: {
    readonly signal?: AbortSignal;
    readonly repeat?: number;
    /** The check's time limit (check-process.ts CHECK_TIMEOUT_MS by default): past it, rejects; the next maintenance checks again. */
    readonly timeoutMs?: number;
    readonly beforeUpkeep?: () => Promise<void>;
  }): Promise<{ readonly checkMs: number; readonly upkeepMs: number }>;

  close(): void;
}
