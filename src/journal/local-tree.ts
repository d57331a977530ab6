/**
 * The local tree table: statements prepared once per connection; subtree moves and deletes are single indexed
 * range statements (path-table.ts).
 */
import type { Database, Statement } from 'better-sqlite3';
import type { LocalEntry, RootId } from '../core/model.js';
import { byInodeSql, PathTable, subtreeSql } from './path-table.js';
import { localFromRow, localFromTuple, localToRow, type LocalRow, type LocalTuple } from './rows.js';

const COLS = 'path, kind, inode, size_bytes, mtime_ms, sha1';

export const LOCAL_TREE_SQL = subtreeSql('local_entries', COLS);

export class LocalTree extends PathTable<LocalRow, LocalEntry, LocalTuple> {
  readonly #byInode: Statement<[string, number], LocalRow>;
  readonly #put: Statement<[Record<string, unknown>]>;
  readonly #getMark: Statement<[string, string], { mark: string; entries: number }>;
  readonly #putMark: Statement<[string, string, string, number]>;
  readonly #clearMarks: Statement<[string]>;

  constructor(db: Database) {
    super(db, { table: 'local_entries', cols: COLS, decode: localFromRow, decodeTuple: localFromTuple });
    this.#byInode = db.prepare(byInodeSql('local_entries', COLS));
    this.#put = db.prepare(
      `INSERT OR REPLACE INTO local_entries (root, ${COLS}) VALUES (@root, @path, @kind, @inode, @size_bytes, @mtime_ms, @sha1)`,
    );
    this.#getMark = db.prepare(`SELECT mark, entries FROM local_listing_marks WHERE root = ? AND dir = ?`);
    this.#putMark = db.prepare(`INSERT OR REPLACE INTO local_listing_marks (root, dir, mark, entries) VALUES (?, ?, ?, ?)`);
    this.#clearMarks = db.prepare(`DELETE FROM local_listing_marks WHERE root = ?`);
  }

  /** A folder's listing mark (migrations.ts, step 9), if one stands. */
  listingMark(root: RootId, dir: string): { readonly mark: string; readonly entries: number } | undefined {
    return this.#getMark.get(root, dir);
  }

  putListingMark(root: RootId, dir: string, mark: string, entries: number): void {
    this.#putMark.run(root, dir, mark, entries);
  }

  clearListingMarks(root: RootId): void {
    this.#clearMarks.run(root);
  }

  byInode(root: RootId, inode: number): LocalEntry | undefined {
    const r = this.#byInode.get(root, inode);
    return r === undefined ? undefined : localFromRow(r);
  }

  put(root: RootId, e: LocalEntry): void {
    this.#put.run({ root, ...localToRow(e) });
  }
}
