/**
 * The Journal port over one better-sqlite3 connection. Each table lives in its own small class with its
 * statements prepared once; this class only routes. Construct it through openJournal, which migrates and
 * integrity-checks the file first.
 */
import { FirstWrite } from './first-write.js';
import type { Database } from 'better-sqlite3';
import type { LocalEntry, RelPath, RemoteEntry, RemoteId, RootId, SyncedEntry } from '../core/model.js';
import type { Steps } from '../core/slices.js';
import type { FailureRecord, Journal, OperationQuery, OperationRecord, UnsyncedRecord } from '../ports/journal.js';
import type { UploadSessionStore } from '../ports/remote-store.js';
import { FailuresTable } from './failures-table.js';
import { KvTables } from './kv-tables.js';
import { LocalTree } from './local-tree.js';
import { OperationsTable } from './operations-table.js';
import { RemoteTree } from './remote-tree.js';
import { SyncedTree } from './synced-tree.js';
import { UploadSessionTable } from './upload-session-table.js';
import { UnsyncedTable } from './unsynced-table.js';

export class SqliteJournal implements Journal {
  readonly #db: Database;
  readonly #remote: RemoteTree;
  readonly #local: LocalTree;
  readonly #synced: SyncedTree;
  readonly #failures: FailuresTable;
  readonly #kv: KvTables;
  readonly #operations: OperationsTable;
  readonly #unsynced: UnsyncedTable;
  readonly uploadSessions: UploadSessionStore;

  /** Bumped by every write of the remote tree (Journal.remoteGeneration). */
  #remoteGeneration = 0;

  /** The gate every write passes first (first-write.ts). */
  readonly #writes = new FirstWrite();

  constructor(db: Database) {
    this.#db = db;
    this.#remote = new RemoteTree(db);
    this.#local = new LocalTree(db);
    this.#synced = new SyncedTree(db);
    this.#failures = new FailuresTable(db);
    this.#kv = new KvTables(db);
    this.#operations = new OperationsTable(db);
    this.#unsynced = new UnsyncedTable(db);
    // Its writes pass the journal's gate too.
    this.uploadSessions = new UploadSessionTable(db, () => this.#writes.before());
  }

  /** Nested calls become savepoints; an exception rolls back the innermost and propagates. */
  transaction<T>(fn: () => T): T {
    return this.#writes.undoable(this.#db.transaction(fn));
  }

  transactionEach(writes: readonly (() => void)[]): (unknown | undefined)[] {
    // All in one plain transaction first: a savepoint per write cost as much as the write itself. Only when one
    // throws is everything rolled back and the batch written again with a savepoint per write, so that only the
    // failing one is left out (the writes are journal writes alone: running one again changes nothing else).
    try {
      this.#writes.undoable(this.#db.transaction(() => {
        for (const write of writes) {
          write();
          // An error a write caught may have made SQLite roll back everything: the rest must not go on outside a transaction.
          if (!this.#db.inTransaction) throw new Error('SQLite rolled back the transaction');
        }
      }));
      return writes.map(() => undefined);
    } catch {
      return this.#eachInSavepoint(writes);
    }
  }

  #eachInSavepoint(writes: readonly (() => void)[]): (unknown | undefined)[] {
    return this.#writes.undoable(this.#db.transaction(() => {
      const errors: (unknown | undefined)[] = [];
      for (const write of writes) {
        try {
          this.#writes.undoable(this.#db.transaction(write));
          errors.push(undefined);
        } catch (e) {
          // Some errors (a full disk, I/O) make SQLite roll back the whole transaction, not just the savepoint:
          // going on would write the rest outside any transaction.
          if (!this.#db.inTransaction) throw e;
          errors.push(e);
        }
      }
      return errors;
    }));
  }

  getRemote(id: RemoteId): RemoteEntry | undefined {
    return this.#remote.get(id);
  }
  remoteChildren(parentId: RemoteId): readonly RemoteEntry[] {
    return this.#remote.children(parentId);
  }
  remoteChildrenPaged(parentId: RemoteId): Iterable<RemoteEntry> {
    return this.#remote.childrenPaged(parentId);
  }
  remoteChildNamed(parentId: RemoteId, name: string): RemoteEntry | undefined {
    return this.#remote.childNamed(parentId, name);
  }
  countRemoteBelow(id: RemoteId, limit: number): number {
    return this.#remote.countBelow(id, limit);
  }
  putRemote(entry: RemoteEntry): void {
    this.#writes.before();
    this.#remoteGeneration += 1;
    this.#remote.put(entry);
  }
  deleteRemote(id: RemoteId): void {
    this.#writes.before();
    this.#remoteGeneration += 1;
    this.#remote.delete(id);
  }
  deleteRemoteSubtree(id: RemoteId): void {
    this.#writes.before();
    this.#remoteGeneration += 1;
    this.#remote.deleteSubtree(id);
  }
  remoteGeneration(): number {
    return this.#remoteGeneration;
  }

  getLocal(root: RootId, path: RelPath): LocalEntry | undefined {
    return this.#local.get(root, path);
  }
  localUnder(root: RootId, path: RelPath | ''): Iterable<LocalEntry> {
    return this.#local.under(root, path);
  }
  putLocal(root: RootId, entry: LocalEntry): void {
    this.#writes.before();
    this.#local.put(root, entry);
  }
  deleteLocal(root: RootId, path: RelPath): void {
    this.#writes.before();
    this.#local.delete(root, path);
  }
  deleteLocalSubtree(root: RootId, path: RelPath): void {
    this.#writes.before();
    this.#local.deleteSubtree(root, path);
  }
  moveLocalSubtree(root: RootId, from: RelPath, to: RelPath): void {
    this.#writes.before();
    this.#local.moveSubtree(root, from, to);
  }
  localByInode(root: RootId, inode: number): LocalEntry | undefined {
    return this.#local.byInode(root, inode);
  }
  localChildren(root: RootId, path: RelPath | ''): readonly LocalEntry[] {
    return this.#local.children(root, path);
  }
  localChildrenPages(root: RootId, path: RelPath | ''): Iterable<readonly LocalEntry[]> {
    return this.#local.childrenPages(root, path);
  }
  countLocalUnder(root: RootId, path: RelPath | '', limit: number): number {
    return this.#local.countUnder(root, path, limit);
  }
  listingMark(root: RootId, dir: RelPath | ''): { readonly mark: string; readonly entries: number } | undefined {
    return this.#local.listingMark(root, dir);
  }
  putListingMark(root: RootId, dir: RelPath | '', mark: string, entries: number): void {
    this.#writes.before();
    this.#local.putListingMark(root, dir, mark, entries);
  }
  clearListingMarks(root: RootId): void {
    this.#writes.before();
    this.#local.clearListingMarks(root);
  }

  getSynced(root: RootId, path: RelPath): SyncedEntry | undefined {
    return this.#synced.get(root, path);
  }
  syncedByRemoteId(root: RootId, id: RemoteId): SyncedEntry | undefined {
    return this.#synced.byRemoteId(root, id);
  }
  syncedByRemoteIds(root: RootId, ids: readonly RemoteId[]): ReadonlyMap<RemoteId, SyncedEntry> {
    return this.#synced.byRemoteIds(root, ids);
  }
  syncedByInode(root: RootId, inode: number): SyncedEntry | undefined {
    return this.#synced.byInode(root, inode);
  }
  syncedUnder(root: RootId, path: RelPath | ''): Iterable<SyncedEntry> {
    return this.#synced.under(root, path);
  }
  syncedChildren(root: RootId, path: RelPath | ''): readonly SyncedEntry[] {
    return this.#synced.children(root, path);
  }
  syncedChildrenPages(root: RootId, path: RelPath | ''): Iterable<readonly SyncedEntry[]> {
    return this.#synced.childrenPages(root, path);
  }
  countSyncedUnder(root: RootId, path: RelPath | '', limit: number): number {
    return this.#synced.countUnder(root, path, limit);
  }
  putSynced(root: RootId, entry: SyncedEntry): void {
    this.#writes.before();
    this.#synced.put(root, entry);
  }
  deleteSynced(root: RootId, path: RelPath): void {
    this.#writes.before();
    this.#synced.delete(root, path);
  }
  deleteSyncedSubtree(root: RootId, path: RelPath): void {
    this.#writes.before();
    this.#synced.deleteSubtree(root, path);
  }
  moveSyncedSubtree(root: RootId, from: RelPath, to: RelPath): void {
    this.#writes.before();
    this.#synced.moveSubtree(root, from, to);
  }
  countSynced(root: RootId): { files: number; folders: number; bytes: number } {
    return this.#synced.count(root);
  }
  countSyncedSteps(root: RootId): Steps<{ files: number; folders: number; bytes: number }> {
    return this.#synced.countSteps(root);
  }

  getCursor(name: string): string | undefined {
    return this.#kv.getCursor(name);
  }
  setCursor(name: string, position: string): void {
    // The same value again is no write (a run with no news writes nothing: first-write.ts).
    if (this.#kv.getCursor(name) === position) return;
    this.#writes.before();
    this.#kv.setCursor(name, position);
  }
  markTrashed(id: RemoteId, trashed: boolean): void {
    this.#writes.before();
    this.#kv.markTrashed(id, trashed);
  }
  isTrashed(id: RemoteId): boolean {
    return this.#kv.isTrashed(id);
  }
  getMeta(key: string): string | undefined {
    return this.#kv.getMeta(key);
  }
  setMeta(key: string, value: string): void {
    if (this.#kv.getMeta(key) === value) return;
    this.#writes.before();
    this.#kv.setMeta(key, value);
  }

  recordFailure(f: FailureRecord): void {
    this.#writes.before();
    this.#failures.record(f);
  }
  clearFailure(root: RootId, path: RelPath): void {
    this.#writes.before();
    this.#failures.clear(root, path);
  }
  getFailure(root: RootId, path: RelPath): FailureRecord | undefined {
    return this.#failures.get(root, path);
  }
  failures(root?: RootId): readonly FailureRecord[] {
    return this.#failures.list(root);
  }
  failuresOfRemoteId(id: RemoteId): readonly FailureRecord[] {
    return this.#failures.ofRemoteId(id);
  }
  parkedFailures(code: string): readonly FailureRecord[] {
    return this.#failures.parked(code);
  }
  recordOperation(op: Omit<OperationRecord, 'seq'>): void {
    this.#writes.before();
    this.#operations.record(op);
  }
  operations(q: OperationQuery): readonly OperationRecord[] {
    return this.#operations.query(q);
  }
  lastOperation(root: RootId, path: RelPath): OperationRecord | undefined {
    return this.#operations.last(root, path);
  }

  putUnsynced(u: UnsyncedRecord): void {
    this.#writes.before();
    this.#unsynced.put(u);
  }
  deleteUnsynced(root: RootId, path: RelPath): void {
    this.#writes.before();
    this.#unsynced.delete(root, path);
  }
  unsyncedPaths(root?: RootId): readonly UnsyncedRecord[] {
    return this.#unsynced.list(root);
  }
  syncedRoots(): readonly RootId[] {
    return this.#unsynced.syncedRoots();
  }
  forgetRoot(root: RootId): void {
    this.#writes.before();
    this.#unsynced.forgetRoot(root);
  }

  /** optimize first: it may write statistics, which the checkpoint then folds into the main file. */
  maintain(): void {
    this.#db.pragma('optimize');
    this.#db.pragma('wal_checkpoint(TRUNCATE)');
  }

  /**
   * What is left of maintain() on this connection after the check process ran `PRAGMA optimize` and a PASSIVE
   * checkpoint from its own (check-process.ts): read the new statistics (`ANALYZE sqlite_schema` reloads them; a
   * connection reads them only with its schema) and truncate the WAL, which now has little to copy.
   */
  afterUpkeepApart(): void {
    this.#db.exec('ANALYZE sqlite_schema');
    this.#db.pragma('wal_checkpoint(TRUNCATE)');
  }

  beforeNextWrite(action: (() => void) | null): void {
    this.#writes.beforeNextWrite(action);
  }

  close(): void {
    if (this.#db.open) this.#db.close();
  }
}
