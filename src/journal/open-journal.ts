/**
 * openJournal: the one way to get a Journal.
 *
 * Creates the directory (0700, when it does not exist) and the file (0600; WAL side files inherit it), turns on
 * WAL, runs `PRAGMA quick_check` and the migrations. A file that is not a SQLite database, fails the integrity
 * check, or carries a schema from a newer boxsync is never repaired in place and never deleted: it is renamed
 * `<name>.corrupt-<UTC timestamp>` (with its -wal and -shm files) and a fresh journal is created. The result then
 * says `rebuilt: true` with the reason, and the engine must do a fresh scan and listing (the journal holds only
 * observations; user files are untouched). Errors that a new file would not cure (no permission on the
 * directory, disk full) throw SyncError code `journal_unusable` (fatal).
 */
import { closeSync, existsSync, mkdirSync, openSync, readSync, renameSync, chmodSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import type { Database } from 'better-sqlite3';
import type { Logger } from 'pino';
import { SyncError } from '../core/errors.js';
import type { Journal } from '../ports/journal.js';
import { migrate, UnusableJournalError } from './migrations.js';
import { SqliteJournal } from './sqlite-journal.js';

export interface OpenJournalOptions {
  readonly logger?: Logger;
}

export type OpenJournalResult =
  | { readonly journal: Journal; readonly rebuilt: false }
  | { readonly journal: Journal; readonly rebuilt: true; readonly reason: string; readonly movedTo: string };

const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');
/** SQLite error codes that mean "this file is damaged or not ours", as opposed to "cannot write here". */
const DAMAGED_CODES = new Set(['SQLITE_CORRUPT', 'SQLITE_NOTADB', 'SQLITE_CORRUPT_VTAB', 'SQLITE_CORRUPT_SEQUENCE', 'SQLITE_CORRUPT_INDEX']);

export function openJournal(path: string, opts: OpenJournalOptions = {}): OpenJournalResult {
  let reason: string;
  try {
    prepareFiles(path);
  } catch (e) {
    throw unusable(path, e);
  }
  try {
    return { journal: openChecked(path), rebuilt: false };
  } catch (e) {
    const why = damageReason(e);
    if (why === undefined) throw unusable(path, e);
    reason = why;
  }
  const movedTo = moveAside(path);
  opts.logger?.warn({ path, movedTo, reason }, 'journal unusable; moved aside and starting a fresh one (a full rescan and listing follow)');
  try {
    prepareFiles(path);
    return { journal: openChecked(path), rebuilt: true, reason, movedTo };
  } catch (e) {
    throw unusable(path, e);
  }
}

function openChecked(path: string): Journal {
  const header = readHeader(path);
  if (header.length > 0 && !header.equals(SQLITE_HEADER.subarray(0, header.length))) {
    throw new UnusableJournalError('the file is not a SQLite database');
  }
  let db: Database | undefined;
  try {
    db = new BetterSqlite3(path);
    db.pragma('busy_timeout = 5000');
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    // quick_check: every page and record is read and checked, as integrity_check does, but not that each index
    // matches its table (the O(n log n) part: seconds per run on a journal of a million rows).
    const check = db.pragma('quick_check') as { quick_check: string }[];
    const problems = check.map((r) => r.quick_check).filter((s) => s !== 'ok');
    if (problems.length > 0) throw new UnusableJournalError(`integrity check failed: ${problems.slice(0, 3).join('; ')}`);
    migrate(db);
    return new SqliteJournal(db);
  } catch (e) {
    db?.close();
    throw e;
  }
}

function prepareFiles(path: string): void {
  const dir = dirname(path);
  if (!existsSync(dir)) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
  }
  closeSync(openSync(path, 'a', 0o600));
  if ((statSync(path).mode & 0o777) !== 0o600) chmodSync(path, 0o600);
}

function readHeader(path: string): Buffer {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(SQLITE_HEADER.length);
    const n = readSync(fd, buf, 0, buf.length, 0);
    return buf.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

function damageReason(e: unknown): string | undefined {
  if (e instanceof UnusableJournalError) return e.message;
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && DAMAGED_CODES.has(code)) return `the database is damaged (${code}: ${(e as Error).message})`;
  return undefined;
}

function moveAside(path: string): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\.(\d+)Z$/, '$1Z');
  let target = `${path}.corrupt-${stamp}`;
  for (let n = 1; existsSync(target); n++) target = `${path}.corrupt-${stamp}-${n}`;
  renameSync(path, target);
  for (const side of ['-wal', '-shm']) {
    if (existsSync(path + side)) renameSync(path + side, target + side);
  }
  return target;
}

function unusable(path: string, e: unknown): SyncError {
  const msg = e instanceof Error ? e.message : String(e);
  return new SyncError({
    code: 'journal_unusable',
    disposition: 'fatal',
    message: `cannot open the journal ${path}: ${msg}; boxsync stops without touching any files (fix the cause and start it again)`,
    details: { path },
    cause: e,
  });
}
