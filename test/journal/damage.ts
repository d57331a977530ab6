/**
 * Damage a real journal file the way a bad disk sector does: pages overwritten with garbage (0xa5), the clean mark
 * (open-journal.ts) made to match the file as it is now, so that the next open trusts it and does not check.
 */
import { closeSync, openSync, readFileSync, statSync, writeFileSync, writeSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';

const PAGE = 4096;

/** `pages` pages from `offset` (a multiple of the page size) overwritten; the file's mtime moves unless `keepMtime`. */
export function overwritePages(dbPath: string, offset: number, pages: number, keepMtime: boolean): void {
  const fd = openSync(dbPath, 'r+');
  try {
    writeSync(fd, Buffer.alloc(PAGE * pages, 0xa5), 0, PAGE * pages, offset);
  } finally {
    closeSync(fd);
  }
  // Another program's write moves the mtime (a second on, whatever the file system's clock tick). A bad sector
  // does not: the clean mark is made to match the file as it is now.
  if (keepMtime) {
    const mark = JSON.parse(readFileSync(`${dbPath}.clean`, 'utf8')) as Record<string, number>;
    writeFileSync(`${dbPath}.clean`, JSON.stringify({ ...mark, mtimeMs: statSync(dbPath).mtimeMs }), { mode: 0o600 });
  }
}

/**
 * One leaf page in the middle of `table`'s b-tree (SQLite's dbstat): a page no lookup by key near either end reads
 * (the operation history: the newest rows go in at its right end, the oldest go from its left).
 */
export function middleLeafPage(dbPath: string, table: string): number {
  // Not readonly: the last connection's close removes the -wal and -shm files (a -wal left makes the next open check).
  const db = new BetterSqlite3(dbPath);
  try {
    const leaves = db.prepare("SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY path").all(table) as { pageno: number }[];
    if (leaves.length < 3) throw new Error(`${table} has ${leaves.length} leaf pages: too few to damage one in the middle`);
    return leaves[Math.floor(leaves.length / 2)]!.pageno;
  } finally {
    db.close();
  }
}

/** Page `pageno` (1-based, as dbstat numbers them) overwritten. */
export function damagePage(dbPath: string, pageno: number, keepMtime: boolean): void {
  overwritePages(dbPath, (pageno - 1) * PAGE, 1, keepMtime);
}
