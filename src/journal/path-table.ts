/**
 * What the two path-keyed tree tables (local_entries and synced_entries) have in common: rows keyed by
 * (root, path), read in keyset pages, and subtrees deleted or moved with indexed range statements (see
 * subtree.ts). Each tree adds its own lookups and its own INSERT on top.
 */
import type { Database, Statement } from 'better-sqlite3';
import type { RelPath, RootId } from '../core/model.js';
import { followsInPathOrder } from '../core/path-order.js';
import { assertMovable, descendantsRange, PAGE_ROWS, type SubtreeParams } from './subtree.js';

/**
 * The subtree statements of a table, exported by each tree so a test can check that SQLite runs them as indexed
 * range scans. The path itself and the range below it are separate statements: SQLite does not use the index for
 * `path = ? OR range`.
 */
export function subtreeSql(table: string, cols: string) {
  return {
    pageUnder: `SELECT ${cols} FROM ${table} WHERE root = ? AND path > ? AND path < ? ORDER BY path LIMIT ?`,
    deleteBelow: `DELETE FROM ${table} WHERE root = @root AND path >= @lower AND path < @upper`,
    moveOne: `UPDATE ${table} SET path = @to WHERE root = @root AND path = @path`,
    moveBelow: `UPDATE ${table} SET path = @to || substr(path, length(@path) + 1) WHERE root = @root AND path >= @lower AND path < @upper`,
  } as const;
}

/**
 * The row of a tree with this inode (the lowest path when several share it). `INDEXED BY`: without statistics
 * SQLite satisfies the ORDER BY with the primary key and reads every row of the root (12 ms a lookup at 100,000
 * rows, and a hinted pass makes one per new file), where the inode index answers in microseconds.
 */
export function byInodeSql(table: 'local_entries' | 'synced_entries', cols: string): string {
  return `SELECT ${cols} FROM ${table} INDEXED BY ${table}_inode WHERE root = ? AND inode = ? ORDER BY path LIMIT 1`;
}

type MoveParams = SubtreeParams & { readonly to: string };

export class PathTable<Row, Entry, Tuple extends readonly unknown[] = readonly unknown[]> {
  readonly #get: Statement<[string, string], Row>;
  readonly #pageAll: Statement<[string, string, number], Tuple>;
  readonly #pageUnder: Statement<[string, string, string, number], Tuple>;
  readonly #delete: Statement<[string, string]>;
  readonly #deleteBelow: Statement<[SubtreeParams]>;
  readonly #moveOne: Statement<[MoveParams]>;
  readonly #moveBelow: Statement<[MoveParams]>;
  readonly #childrenAll: Statement<[string], Tuple>;
  readonly #childrenUnder: Statement<[string, string, string, string], Tuple>;
  readonly #childrenPageAll: Statement<[string, string, number], Tuple>;
  readonly #childrenPageUnder: Statement<[string, string, string, string, number], Tuple>;
  readonly #countAll: Statement<[string, number], { n: number }>;
  readonly #countUnder: Statement<[string, string, string, number], { n: number }>;
  readonly #decode: (row: Row) => Entry;
  readonly #decodeTuple: (tuple: Tuple) => Entry;
  readonly #tx: (fn: () => void) => void;
  readonly #table: string;

  /**
   * `decode` turns a row object into an entry; `decodeTuple` the same row read as an array (columns in `cols`
   * order), which the statements that return many rows (pages, children) use.
   */
  constructor(
    db: Database,
    opts: { readonly table: string; readonly cols: string; readonly decode: (row: Row) => Entry; readonly decodeTuple: (tuple: Tuple) => Entry },
  ) {
    const sql = subtreeSql(opts.table, opts.cols);
    this.#get = db.prepare(`SELECT ${opts.cols} FROM ${opts.table} WHERE root = ? AND path = ?`);
    this.#pageAll = db.prepare<[string, string, number], Tuple>(`SELECT ${opts.cols} FROM ${opts.table} WHERE root = ? AND path > ? ORDER BY path LIMIT ?`).raw(true);
    this.#pageUnder = db.prepare<[string, string, string, number], Tuple>(sql.pageUnder).raw(true);
    this.#delete = db.prepare(`DELETE FROM ${opts.table} WHERE root = ? AND path = ?`);
    this.#deleteBelow = db.prepare(sql.deleteBelow);
    this.#moveOne = db.prepare(sql.moveOne);
    this.#moveBelow = db.prepare(sql.moveBelow);
    // Direct children: one range scan of the subtree (in SQLite, not in JS), keeping the rows without a further '/'.
    this.#childrenAll = db.prepare<[string], Tuple>(`SELECT ${opts.cols} FROM ${opts.table} WHERE root = ? AND instr(path, '/') = 0 ORDER BY path`).raw(true);
    this.#childrenUnder = db
      .prepare<[string, string, string, string], Tuple>(
        `SELECT ${opts.cols} FROM ${opts.table} WHERE root = ? AND path > ? AND path < ? AND instr(substr(path, length(?) + 1), '/') = 0 ORDER BY path`,
      )
      .raw(true);
    // The same children in keyset pages (childrenPages).
    this.#childrenPageAll = db
      .prepare<[string, string, number], Tuple>(`SELECT ${opts.cols} FROM ${opts.table} WHERE root = ? AND path > ? AND instr(path, '/') = 0 ORDER BY path LIMIT ?`)
      .raw(true);
    this.#childrenPageUnder = db
      .prepare<[string, string, string, string, number], Tuple>(
        `SELECT ${opts.cols} FROM ${opts.table} WHERE root = ? AND path > ? AND path < ? AND instr(substr(path, length(?) + 1), '/') = 0 ORDER BY path LIMIT ?`,
      )
      .raw(true);
    // Bounded counts: the caller only needs to know whether a subtree holds more than `limit` rows.
    this.#countAll = db.prepare(`SELECT count(*) AS n FROM (SELECT 1 FROM ${opts.table} WHERE root = ? LIMIT ?)`);
    this.#countUnder = db.prepare(`SELECT count(*) AS n FROM (SELECT 1 FROM ${opts.table} WHERE root = ? AND path > ? AND path < ? LIMIT ?)`);
    this.#decode = opts.decode;
    this.#decodeTuple = opts.decodeTuple;
    this.#tx = (fn) => db.transaction(fn)();
    this.#table = opts.table;
  }

  get(root: RootId, path: RelPath): Entry | undefined {
    const r = this.#get.get(root, path);
    return r === undefined ? undefined : this.#decode(r);
  }

  /**
   * Keyset pages: bounded memory, and the caller may write to the journal between items. In path order
   * (core/path-order.ts), which is checked: rows out of it are a damaged index, thrown as SQLITE_CORRUPT_INDEX
   * (the journal's damage watch reports it: damage-watch.ts).
   */
  *under(root: RootId, path: RelPath | ''): Generator<Entry> {
    const range = path === '' ? undefined : descendantsRange(path);
    let after = range === undefined ? '' : range.lower;
    let prev: string | null = null;
    for (;;) {
      const page = range === undefined ? this.#pageAll.all(root, after, PAGE_ROWS) : this.#pageUnder.all(root, after, range.upper, PAGE_ROWS);
      for (const r of page) {
        const at = r[0] as string;
        if (prev !== null && !followsInPathOrder(prev, at)) throw outOfOrder(this.#table);
        prev = at;
        yield this.#decodeTuple(r);
      }
      const last = page[page.length - 1];
      if (last === undefined || page.length < PAGE_ROWS) return;
      // `path` is the first column of every tree's COLS.
      after = last[0] as string;
    }
  }

  /** The rows directly below a path ('' for the root's top level), in path order. */
  children(root: RootId, path: RelPath | ''): Entry[] {
    if (path === '') return this.#childrenAll.all(root).map(this.#decodeTuple);
    const { lower, upper } = descendantsRange(path);
    return this.#childrenUnder.all(root, lower, upper, lower).map(this.#decodeTuple);
  }

  /**
   * children() in keyset pages of PAGE_ROWS rows (in path order, as under()): one folder of 20,000 children read in
   * one statement held the event loop 17-61 ms of CPU per tree (test/bench/journal-stalls.ts), a page of 1,000 takes
   * 2 ms; a caller that works in slices pauses between two pages (core/slices.ts).
   */
  *childrenPages(root: RootId, path: RelPath | ''): Generator<Entry[]> {
    const range = path === '' ? undefined : descendantsRange(path);
    let after = range === undefined ? '' : range.lower;
    for (;;) {
      const page = range === undefined ? this.#childrenPageAll.all(root, after, PAGE_ROWS) : this.#childrenPageUnder.all(root, after, range.upper, range.lower, PAGE_ROWS);
      if (page.length > 0) yield page.map(this.#decodeTuple);
      const last = page[page.length - 1];
      if (last === undefined || page.length < PAGE_ROWS) return;
      // `path` is the first column of every tree's COLS.
      after = last[0] as string;
    }
  }

  /** How many rows are below a path ('' for the whole root), counting at most `limit`. */
  countUnder(root: RootId, path: RelPath | '', limit: number): number {
    if (path === '') return this.#countAll.get(root, limit)?.n ?? 0;
    const { lower, upper } = descendantsRange(path);
    return this.#countUnder.get(root, lower, upper, limit)?.n ?? 0;
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

/** Rows of a tree read out of path order: its primary key index is damaged (integrity_check says so; quick_check does not). */
function outOfOrder(table: string): Error {
  return Object.assign(new Error(`the rows of ${table} came out of path order (its index is damaged)`), { code: 'SQLITE_CORRUPT_INDEX' });
}
