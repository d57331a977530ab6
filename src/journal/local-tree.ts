/**
 * The local tree table: statements prepared once per connection; subtree moves and deletes are single indexed
 * range statements.
 */
import type { Database, Statement } from 'better-sqlite3';
import type { LocalEntry, RelPath, RootId } from '../core/model.js';
import { localFromRow, localToRow, type LocalRow } from './rows.js';
import { assertMovable, descendantsRange, PAGE_ROWS, type SubtreeParams } from './subtree.js';

const COLS = 'path, kind, inode, size_bytes, mtime_ms, sha1';

/**
 * The subtree statements, exported so a test can check that SQLite runs them as indexed range scans. The path
 * itself and the range below it are separate statements: SQLite does not use the index for `path = ? OR range`.
 */
export const LOCAL_TREE_SQL = {
  pageUnder: `SELECT ${COLS} FROM local_entries WHERE root = ? AND path > ? AND path < ? ORDER BY path LIMIT ?`,
  deleteBelow: `DELETE FROM local_entries WHERE root = @root AND path >= @lower AND path < @upper`,
  moveOne: `UPDATE local_entries SET path = @to WHERE root = @root AND path = @path`,
  moveBelow: `UPDATE local_entries SET path = @to || substr(path, length(@path) + 1) WHERE root = @root AND path >= @lower AND path < @upper`,
} as const;

export class LocalTree {
  readonly #get: Statement<[string, string], LocalRow>;
  readonly #byInode: Statement<[string, number], LocalRow>;
  readonly #pageAll: Statement<[string, string, number], LocalRow>;
  readonly #pageUnder: Statement<[string, string, string, number], LocalRow>;
  readonly #put: Statement<[Record<string, unknown>]>;
  readonly #delete: Statement<[string, string]>;
  readonly #deleteBelow: Statement<[SubtreeParams]>;
  readonly #moveOne: Statement<[SubtreeParams & { readonly to: string }]>;
  readonly #moveBelow: Statement<[SubtreeParams & { readonly to: string }]>;
  readonly #tx: (fn: () => void) => void;

  constructor(db: Database) {
    this.#get = db.prepare(`SELECT ${COLS} FROM local_entries WHERE root = ? AND path = ?`);
    this.#byInode = db.prepare(`SELECT ${COLS} FROM local_entries WHERE root = ? AND inode = ? ORDER BY path LIMIT 1`);
    this.#pageAll = db.prepare(`SELECT ${COLS} FROM local_entries WHERE root = ? AND path > ? ORDER BY path LIMIT ?`);
    this.#pageUnder = db.prepare(LOCAL_TREE_SQL.pageUnder);
    this.#put = db.prepare(
      `INSERT OR REPLACE INTO local_entries (root, ${COLS}) VALUES (@root, @path, @kind, @inode, @size_bytes, @mtime_ms, @sha1)`,
    );
    this.#delete = db.prepare(`DELETE FROM local_entries WHERE root = ? AND path = ?`);
    this.#deleteBelow = db.prepare(LOCAL_TREE_SQL.deleteBelow);
    this.#moveOne = db.prepare(LOCAL_TREE_SQL.moveOne);
    this.#moveBelow = db.prepare(LOCAL_TREE_SQL.moveBelow);
    this.#tx = (fn) => db.transaction(fn)();
  }

  get(root: RootId, path: RelPath): LocalEntry | undefined {
    const r = this.#get.get(root, path);
    return r === undefined ? undefined : localFromRow(r);
  }

  byInode(root: RootId, inode: number): LocalEntry | undefined {
    const r = this.#byInode.get(root, inode);
    return r === undefined ? undefined : localFromRow(r);
  }

  /** Keyset pages: bounded memory, and the caller may write to the journal between items. */
  *under(root: RootId, path: RelPath | ''): Generator<LocalEntry> {
    const range = path === '' ? undefined : descendantsRange(path);
    let after = range === undefined ? '' : range.lower;
    for (;;) {
      const page = range === undefined ? this.#pageAll.all(root, after, PAGE_ROWS) : this.#pageUnder.all(root, after, range.upper, PAGE_ROWS);
      for (const r of page) yield localFromRow(r);
      const last = page[page.length - 1];
      if (last === undefined || page.length < PAGE_ROWS) return;
      after = last.path;
    }
  }

  put(root: RootId, e: LocalEntry): void {
    this.#put.run({ root, ...localToRow(e) });
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

  /** Rows already at `to` (stale observations) are replaced by the moved ones. */
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
}
