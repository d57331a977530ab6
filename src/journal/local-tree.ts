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

  constructor(db: Database) {
    super(db, { table: 'local_entries', cols: COLS, decode: localFromRow, decodeTuple: localFromTuple });
    this.#byInode = db.prepare(byInodeSql('local_entries', COLS));
    this.#put = db.prepare(
      `INSERT OR REPLACE INTO local_entries (root, ${COLS}) VALUES (@root, @path, @kind, @inode, @size_bytes, @mtime_ms, @sha1)`,
    );
  }

  byInode(root: RootId, inode: number): LocalEntry | undefined {
    const r = this.#byInode.get(root, inode);
    return r === undefined ? undefined : localFromRow(r);
  }

  put(root: RootId, e: LocalEntry): void {
    this.#put.run({ root, ...localToRow(e) });
  }
}
