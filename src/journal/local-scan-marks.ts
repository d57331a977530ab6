/**
 * Mark-and-sweep support for local scans: the paths one scan saw, kept in a TEMP table of the connection (never
 * in the journal file, never in the caller's memory), so finding the rows a scan did not see costs one indexed
 * anti-join instead of a JS Set of every path of the tree. Each scan gets its own id, so scans of different
 * subtrees that overlap in time (re-observation after failures) never see each other's marks.
 */
import type { Database, Statement } from 'better-sqlite3';
import type { LocalEntry, RelPath, RootId } from '../core/model.js';
import { localFromRow, type LocalRow } from './rows.js';
import { descendantsRange, PAGE_ROWS } from './subtree.js';

const COLS = 'path, kind, inode, size_bytes, mtime_ms, sha1';
const NOT_SEEN = `NOT EXISTS (SELECT 1 FROM temp.local_scan_seen s WHERE s.scan = ? AND s.path = local_entries.path)`;

export class LocalScanMarks {
  readonly #mark: Statement<[number, string]>;
  readonly #end: Statement<[number]>;
  readonly #pageAll: Statement<[string, string, number, number], LocalRow>;
  readonly #pageUnder: Statement<[string, string, string, number, number], LocalRow>;
  #nextScan = 1;

  constructor(db: Database) {
    db.exec(`CREATE TEMP TABLE IF NOT EXISTS local_scan_seen (scan INTEGER NOT NULL, path TEXT NOT NULL, PRIMARY KEY (scan, path)) STRICT, WITHOUT ROWID`);
    this.#mark = db.prepare(`INSERT OR IGNORE INTO temp.local_scan_seen (scan, path) VALUES (?, ?)`);
    this.#end = db.prepare(`DELETE FROM temp.local_scan_seen WHERE scan = ?`);
    this.#pageAll = db.prepare(`SELECT ${COLS} FROM local_entries WHERE root = ? AND path > ? AND ${NOT_SEEN} ORDER BY path LIMIT ?`);
    this.#pageUnder = db.prepare(`SELECT ${COLS} FROM local_entries WHERE root = ? AND path > ? AND path < ? AND ${NOT_SEEN} ORDER BY path LIMIT ?`);
  }

  begin(): number {
    return this.#nextScan++;
  }

  mark(scan: number, paths: readonly RelPath[]): void {
    for (const p of paths) this.#mark.run(scan, p);
  }

  /** Keyset pages of the rows strictly below `under` ('' for the whole root) that scan did not mark. */
  *unseen(scan: number, root: RootId, under: RelPath | ''): Generator<LocalEntry> {
    const range = under === '' ? undefined : descendantsRange(under);
    let after = range === undefined ? '' : range.lower;
    for (;;) {
      const page =
        range === undefined ? this.#pageAll.all(root, after, scan, PAGE_ROWS) : this.#pageUnder.all(root, after, range.upper, scan, PAGE_ROWS);
      for (const r of page) yield localFromRow(r);
      const last = page[page.length - 1];
      if (last === undefined || page.length < PAGE_ROWS) return;
      after = last.path;
    }
  }

  end(scan: number): void {
    this.#end.run(scan);
  }
}
