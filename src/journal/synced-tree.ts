/**
 * The synced tree (merge base) table: statements prepared once; subtree moves and deletes are single indexed
 * range statements.
 */
import type { Database, Statement } from 'better-sqlite3';
import type { RelPath, RemoteId, RootId, SyncedEntry } from '../core/model.js';
import { syncedFromRow, syncedToRow, type SyncedRow } from './rows.js';
import { assertMovable, descendantsRange, PAGE_ROWS, type SubtreeParams } from './subtree.js';

const COLS = 'path, remote_id, kind, etag, sha1, version_id, size_bytes, inode, mtime_ms, url';

/**
 * The subtree statements, exported so a test can check that SQLite runs them as indexed range scans. The path
 * itself and the range below it are separate statements: SQLite does not use the index for `path = ? OR range`.
 */
export const SYNCED_TREE_SQL = {
  pageUnder: `SELECT ${COLS} FROM synced_entries WHERE root = ? AND path > ? AND path < ? ORDER BY path LIMIT ?`,
  deleteBelow: `DELETE FROM synced_entries WHERE root = @root AND path >= @lower AND path < @upper`,
  moveOne: `UPDATE synced_entries SET path = @to WHERE root = @root AND path = @path`,
  moveBelow: `UPDATE synced_entries SET path = @to || substr(path, length(@path) + 1) WHERE root = @root AND path >= @lower AND path < @upper`,
} as const;

interface CountRow {
  readonly files: number;
  readonly folders: number;
  readonly bytes: number;
}

export class SyncedTree {
  readonly #get: Statement<[string, string], SyncedRow>;
  readonly #byRemoteId: Statement<[string, string], SyncedRow>;
  readonly #pageAll: Statement<[string, string, number], SyncedRow>;
  readonly #pageUnder: Statement<[string, string, string, number], SyncedRow>;
  readonly #put: Statement<[Record<string, unknown>]>;
  readonly #delete: Statement<[string, string]>;
  readonly #deleteBelow: Statement<[SubtreeParams]>;
  readonly #moveOne: Statement<[SubtreeParams & { readonly to: string }]>;
  readonly #moveBelow: Statement<[SubtreeParams & { readonly to: string }]>;
  readonly #count: Statement<[string], CountRow>;
  readonly #tx: (fn: () => void) => void;

  constructor(db: Database) {
    this.#get = db.prepare(`SELECT ${COLS} FROM synced_entries WHERE root = ? AND path = ?`);
    this.#byRemoteId = db.prepare(`SELECT ${COLS} FROM synced_entries WHERE root = ? AND remote_id = ?`);
    this.#pageAll = db.prepare(`SELECT ${COLS} FROM synced_entries WHERE root = ? AND path > ? ORDER BY path LIMIT ?`);
    this.#pageUnder = db.prepare(SYNCED_TREE_SQL.pageUnder);
    // OR REPLACE also drops the row the same Box item had at another path (unique (root, remote_id)).
    this.#put = db.prepare(
      `INSERT OR REPLACE INTO synced_entries (root, ${COLS})
       VALUES (@root, @path, @remote_id, @kind, @etag, @sha1, @version_id, @size_bytes, @inode, @mtime_ms, @url)`,
    );
    this.#delete = db.prepare(`DELETE FROM synced_entries WHERE root = ? AND path = ?`);
    this.#deleteBelow = db.prepare(SYNCED_TREE_SQL.deleteBelow);
    this.#moveOne = db.prepare(SYNCED_TREE_SQL.moveOne);
    this.#moveBelow = db.prepare(SYNCED_TREE_SQL.moveBelow);
    this.#count = db.prepare(
      `SELECT coalesce(sum(kind <> 'folder'), 0) AS files, coalesce(sum(kind = 'folder'), 0) AS folders,
              coalesce(sum(CASE WHEN kind = 'folder' THEN 0 ELSE size_bytes END), 0) AS bytes
       FROM synced_entries WHERE root = ?`,
    );
    this.#tx = (fn) => db.transaction(fn)();
  }

  get(root: RootId, path: RelPath): SyncedEntry | undefined {
    const r = this.#get.get(root, path);
    return r === undefined ? undefined : syncedFromRow(r);
  }

  byRemoteId(root: RootId, id: RemoteId): SyncedEntry | undefined {
    const r = this.#byRemoteId.get(root, id);
    return r === undefined ? undefined : syncedFromRow(r);
  }

  /** Keyset pages: bounded memory, and the caller may write to the journal between items. */
  *under(root: RootId, path: RelPath | ''): Generator<SyncedEntry> {
    const range = path === '' ? undefined : descendantsRange(path);
    let after = range === undefined ? '' : range.lower;
    for (;;) {
      const page = range === undefined ? this.#pageAll.all(root, after, PAGE_ROWS) : this.#pageUnder.all(root, after, range.upper, PAGE_ROWS);
      for (const r of page) yield syncedFromRow(r);
      const last = page[page.length - 1];
      if (last === undefined || page.length < PAGE_ROWS) return;
      after = last.path;
    }
  }

  put(root: RootId, e: SyncedEntry): void {
    this.#put.run({ root, ...syncedToRow(e) });
  }

  delete(root: RootId, path: RelPath): void {
    this.#delete.run(root, path);
  }

  deleteSubtree(root: RootId, path: RelPath): void {
    const { lower, upper } = descendantsRange(path);
    this.#tx(() => {
      this.#delete.run(root, path);
      this.#deleteBelow.run({ root, path, lower, upper });
    });
  }

  moveSubtree(root: RootId, from: RelPath, to: RelPath): void {
    if (from === to) return;
    assertMovable(from, to);
    const src = descendantsRange(from);
    this.#tx(() => {
      this.deleteSubtree(root, to);
      const params = { root, path: from, lower: src.lower, upper: src.upper, to };
      this.#moveOne.run(params);
      this.#moveBelow.run(params);
    });
  }

  count(root: RootId): CountRow {
    const r = this.#count.get(root);
    return r ?? { files: 0, folders: 0, bytes: 0 };
  }
}
