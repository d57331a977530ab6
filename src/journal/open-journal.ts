/**
 * openJournal: the one way to get a Journal.
 *
 * Creates the directory (0700, when it does not exist) and the file (0600; WAL side files inherit it), turns on
 * WAL, runs `PRAGMA quick_check` (when due, see below) and the migrations. A file that is not a SQLite database, fails the integrity
 * check, or carries a schema from a newer boxsync is never repaired in place and never deleted: it is renamed
 * `<name>.corrupt-<UTC timestamp>` (with its -wal and -shm files) and a fresh journal is created. The result then
 * says `rebuilt: true` with the reason, and the engine must do a fresh scan and listing (the journal holds only
 * observations; user files are untouched). Errors that a new file would not cure (no permission on the
 * directory, disk full) throw SyncError code `journal_unusable` (fatal).
 *
 * The clean mark. quick_check reads every page: about 0.45 s at 100,000 files and seconds at a million, at every
 * `sync --once`. So a clean close writes `<name>.clean` (0600) with the time of the last check and the size and
 * mtime the file was left with, and the next open takes the mark away and checks only when one of these holds:
 * there is no mark (the last run crashed, or never closed), a -wal file is left (another connection, or a
 * crash), the file's size or mtime differ from the mark's (something else wrote it), or the last check is older
 * than INTEGRITY_CHECK_EVERY_MS. `maintain()` checks too (the daemon's journal schedule: `maintainOffThread()`, the
 * same check in a process of its own, check-process.ts), so a daemon that runs
 * for months is still checked. Damage that shows up later, as SQLITE_CORRUPT on a query, is caught by
 * damage-watch.ts: the run stops with a fatal error that says what happens next, the mark is not written, and
 * `<name>.damaged` is: the next open sets the file aside without asking quick_check, which does not see every
 * damage (rows out of their index's order, journal/path-table.ts, pass it).
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, renameSync, chmodSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import type { Database } from 'better-sqlite3';
import type { Logger } from 'pino';
import { SyncError } from '../core/errors.js';
import type { Journal } from '../ports/journal.js';
import { quickCheckInProcess } from './check-process.js';
import { damageCode, journalDamaged, watchDamage } from './damage-watch.js';
import { migrate, UnusableJournalError } from './migrations.js';
import { SqliteJournal } from './sqlite-journal.js';
import { journalNotes } from './notes.js';
import { withSqliteAddon } from './sqlite-addon.js';

export interface OpenJournalOptions {
  readonly logger?: Logger;
  /**
   * SQLite's page cache for this connection, in KiB (`PRAGMA cache_size = -N`); default better-sqlite3's 16,000.
   * The daemon asks for less: the pages a pass reads stay in the process's memory for good (SQLite gives them back
   * to malloc, which keeps them), and an idle daemon is measured by its resident memory.
   */
  readonly cacheKiB?: number;
  /**
   * Set by openJournalCheckedApart: the check was done elsewhere (or could not be), so the open does not check;
   * `lastCheckedAtMs` is the time of the last check the file passed (written into the clean mark at close;
   * undefined: none that counts, so the next open checks it again).
   */
  readonly skipCheck?: { readonly lastCheckedAtMs: number | undefined };
}

export type OpenJournalResult =
  | { readonly journal: Journal; readonly rebuilt: false; readonly checkUnfinished?: string }
  | { readonly journal: Journal; readonly rebuilt: true; readonly reason: string; readonly movedTo: string };

const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');
/** A journal left with a clean mark is checked again at open once its last check is this old. */
export const INTEGRITY_CHECK_EVERY_MS = 24 * 60 * 60 * 1000;

export function openJournal(path: string, opts: OpenJournalOptions = {}): OpenJournalResult {
  return openOrRebuild(path, opts, undefined);
}

/** openJournal; `damage` set: a check elsewhere found the file damaged, so it is set aside without opening it. */
function openOrRebuild(path: string, opts: OpenJournalOptions, damage: string | undefined): OpenJournalResult {
  let reason: string;
  try {
    prepareFiles(path);
  } catch (e) {
    throw unusable(path, e);
  }
  if (damage !== undefined) reason = damage;
  else {
    try {
      return { journal: openChecked(path, opts.cacheKiB, opts.skipCheck), rebuilt: false };
    } catch (e) {
      const why = damageReason(e);
      if (why === undefined) throw unusable(path, e);
      reason = why;
    }
  }
  const movedTo = moveAside(path);
  opts.logger?.warn({ path, movedTo, reason }, 'journal unusable; moved aside and starting a fresh one (a full rescan and listing follow)');
  try {
    prepareFiles(path);
    return { journal: openChecked(path, opts.cacheKiB, undefined), rebuilt: true, reason, movedTo };
  } catch (e) {
    throw unusable(path, e);
  }
}

/**
 * openJournal for the daemon: a due check (see the clean mark above) runs in a process of its own first
 * (check-process.ts), so that the daemon's event loop stays free for it (seconds at a million rows: `status` answers,
 * SIGTERM is heard). What the process answers is acted on; the check is never run again on this thread:
 * - sound: the file is opened without checking it again, and counts as checked now;
 * - damaged (problems reported, or SQLITE_CORRUPT/NOTADB met): it is set aside and a fresh journal made, as
 *   openJournal does (the reason says the check ran in its own process);
 * - not finished within `checkTimeoutMs` (CHECK_TIMEOUT_MS): the journal is opened and used as it is, unchecked
 *   (`checkUnfinished` says why, the caller logs it). Damage met later is still caught as SQLITE_CORRUPT on a
 *   query (damage-watch.ts); the close writes no fresh check time, so the next open checks again, and so does the
 *   daemon's journal maintenance;
 * - stopped by `signal` (SIGTERM during the start): rejects with an AbortError; the file is not opened;
 * - the process could not run at all (it could not start): openJournal's own path, which checks on this thread.
 */
export async function openJournalCheckedApart(
  path: string,
  opts: OpenJournalOptions & { readonly signal?: AbortSignal; readonly repeat?: number; readonly checkTimeoutMs?: number } = {},
): Promise<OpenJournalResult> {
  const { signal, repeat, checkTimeoutMs, ...rest } = opts;
  let due = false;
  try {
    due = existsSync(path) && checkNotDue(path, readCleanMark(path), Date.now()) === undefined;
  } catch {
    due = false;
  }
  if (!due) return openJournal(path, rest);
  opts.logger?.info({ path }, 'checking the journal (PRAGMA quick_check) in a process of its own');
  const checkedAtMs = Date.now();
  const r = await quickCheckInProcess(path, { ...(signal ? { signal } : {}), ...(repeat ? { repeat } : {}), ...(checkTimeoutMs ? { timeoutMs: checkTimeoutMs } : {}) });
  if (r.ok && r.problems.length === 0) return openJournal(path, { ...rest, skipCheck: { lastCheckedAtMs: checkedAtMs } });
  if (r.ok) return openOrRebuild(path, rest, `integrity check failed (in its own process): ${r.problems.slice(0, 3).join('; ')}`);
  if (r.error.code === 'ABORT_ERR' || signal?.aborted) throw Object.assign(new Error(`the journal check was stopped before the journal was opened (${r.error.message})`), { name: 'AbortError', code: 'ABORT_ERR' });
  const code = damageCode(r.error);
  if (code !== undefined) return openOrRebuild(path, rest, `the database is damaged (${code}, found in its own process: ${r.error.message})`);
  if (r.error.code === 'CHECK_TIMEOUT') {
    // The file passed no check now: no check time counts, so the close writes no clean mark and the next open checks.
    const opened = openJournal(path, { ...rest, skipCheck: { lastCheckedAtMs: undefined } });
    const why = `${r.error.message}; the journal is used as it is, and checked again at the next start and by the journal maintenance`;
    opts.logger?.warn({ path }, `journal integrity check: ${why}`);
    return opened.rebuilt ? opened : { ...opened, checkUnfinished: why };
  }
  return openJournal(path, rest);
}

/** `skip`: the open does not check (openJournalCheckedApart did, or tried); else it checks when due (the clean mark). */
function openChecked(path: string, cacheKiB: number | undefined, skip: OpenJournalOptions['skipCheck']): Journal {
  const header = readHeader(path);
  if (header.length > 0 && !header.equals(SQLITE_HEADER.subarray(0, header.length))) {
    throw new UnusableJournalError('the file is not a SQLite database');
  }
  const seen = takeDamageMark(path);
  if (seen !== undefined) throw new UnusableJournalError(`damage was seen while it was in use (${seen})`);
  // Taken away before the file is opened: from here on, only a clean close marks it clean again.
  const mark = takeCleanMark(path);
  const { checkNow, lastCheckMs } = checkAtOpen(path, mark, skip, Date.now());
  let db: Database | undefined;
  try {
    db = new BetterSqlite3(path, withSqliteAddon({}));
    db.pragma('busy_timeout = 5000');
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    if (cacheKiB !== undefined) db.pragma(`cache_size = -${Math.max(1, Math.floor(cacheKiB))}`);
    if (checkNow) quickCheck(db);
    migrate(db);
    return guarded(path, db, lastCheckMs);
  } catch (e) {
    db?.close();
    throw e;
  }
}

/**
 * The open's three ways into the check, and the time of the last check that counts once the file is open (written
 * into the clean mark at close; undefined: none, so the next open checks): `skip` (openJournalCheckedApart checked,
 * or tried): no check here, the caller's time; not due (the clean mark): no check, the mark's time; due: a check now.
 */
function checkAtOpen(
  path: string,
  mark: CleanMark | undefined,
  skip: OpenJournalOptions['skipCheck'],
  nowMs: number,
): { readonly checkNow: boolean; readonly lastCheckMs: number | undefined } {
  if (skip !== undefined) return { checkNow: false, lastCheckMs: skip.lastCheckedAtMs };
  const notDue = checkNotDue(path, mark, nowMs);
  return notDue === undefined ? { checkNow: true, lastCheckMs: nowMs } : { checkNow: false, lastCheckMs: notDue.checkedAtMs };
}

/**
 * quick_check: every page and record is read and checked, as integrity_check does, but not that each index
 * matches its table (the O(n log n) part: seconds per run on a journal of a million rows).
 */
function quickCheck(db: Database): void {
  const check = db.pragma('quick_check') as { quick_check: string }[];
  const problems = check.map((r) => r.quick_check).filter((s) => s !== 'ok');
  if (problems.length > 0) throw new UnusableJournalError(`integrity check failed: ${problems.slice(0, 3).join('; ')}`);
}

/** The journal as the rest of boxsync sees it: damage watched, the clean mark written at close, checks in maintain(). */
function guarded(path: string, db: Database, checkedAtMs: number | undefined): Journal {
  const inner = new SqliteJournal(db);
  let damaged = false;
  // undefined: no check that counts (the one at open did not finish): no clean mark at close, the next open checks.
  let lastCheckMs = checkedAtMs;
  const journal = watchDamage<Journal>(inner, path, (e) => {
    damaged = true;
    writeDamageMark(path, e);
  });
  const notes = journalNotes(path);
  return Object.assign(journal, {
    setNote: notes.set,
    getNote: notes.get,
    maintain: (): void => {
      try {
        quickCheck(db);
      } catch (e) {
        damaged = true;
        throw journalDamaged(path, `failed its integrity check (${e instanceof Error ? e.message : String(e)})`, e);
      }
      lastCheckMs = Date.now();
      inner.maintain();
    },
    maintainOffThread: async (o: { signal?: AbortSignal; repeat?: number; timeoutMs?: number; beforeUpkeep?: () => Promise<void> } = {}) => {
      const startedMs = Date.now();
      const t0 = performance.now();
      const r = await quickCheckInProcess(path, { ...o, upkeep: true });
      const checkMs = performance.now() - t0;
      if (!r.ok) {
        if (r.error.code === 'CHECK_TIMEOUT') throw new Error(`${r.error.message}; the journal is used as it is and the next maintenance checks it again`);
        if (damageCode(r.error) === undefined) throw r.error;
        damaged = true;
        throw journalDamaged(path, `is damaged (${damageCode(r.error)}: ${r.error.message})`, r.error);
      }
      if (r.problems.length > 0) {
        damaged = true;
        const e = new UnusableJournalError(`integrity check failed: ${r.problems.slice(0, 3).join('; ')}`);
        throw journalDamaged(path, `failed its integrity check (${e.message})`, e);
      }
      lastCheckMs = startedMs;
      await o.beforeUpkeep?.();
      if (!db.open) throw new Error('the journal was closed during its maintenance');
      const t1 = performance.now();
      // The check process ran PRAGMA optimize and a PASSIVE checkpoint: what is left here is small.
      inner.afterUpkeepApart();
      return { checkMs, upkeepMs: performance.now() - t1 };
    },
    close: (): void => {
      const wasOpen = db.open;
      inner.close();
      if (wasOpen && !damaged && lastCheckMs !== undefined) writeCleanMark(path, lastCheckMs);
    },
  });
}

interface CleanMark {
  readonly checkedAtMs: number;
  readonly sizeBytes: number;
  readonly mtimeMs: number;
}

const cleanMarkPath = (path: string): string => `${path}.clean`;
const damageMarkPath = (path: string): string => `${path}.damaged`;

/** Best effort: without the mark the next open still runs quick_check (the clean mark is not written). */
function writeDamageMark(path: string, e: unknown): void {
  try {
    writeFileSync(damageMarkPath(path), `${damageCode(e) ?? 'damaged'}: ${e instanceof Error ? e.message : String(e)}\n`, { mode: 0o600 });
  } catch {
    // ignored on purpose, see above
  }
}

/** Read and remove the damage mark: what was seen, or undefined (none, or it cannot be removed: not trusted then). */
function takeDamageMark(path: string): string | undefined {
  const markPath = damageMarkPath(path);
  let text: string;
  try {
    text = readFileSync(markPath, 'utf8');
    unlinkSync(markPath);
  } catch {
    return undefined;
  }
  return text.trim().slice(0, 500) || 'damaged';
}

/** Read and remove the mark; undefined when there is none or it is unreadable (then the file is checked). */
function takeCleanMark(path: string): CleanMark | undefined {
  const markPath = cleanMarkPath(path);
  const mark = readCleanMark(path);
  // If it cannot be removed, it must not be trusted either (a crash would leave it behind).
  try {
    unlinkSync(markPath);
  } catch {
    return undefined;
  }
  return mark;
}

/** The mark, left in place; undefined when there is none or it is unreadable. */
function readCleanMark(path: string): CleanMark | undefined {
  let text: string;
  try {
    text = readFileSync(cleanMarkPath(path), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const m = JSON.parse(text) as Partial<CleanMark>;
    const ok = [m.checkedAtMs, m.sizeBytes, m.mtimeMs].every((v) => typeof v === 'number' && Number.isFinite(v));
    return ok ? (m as CleanMark) : undefined;
  } catch {
    return undefined;
  }
}

/** The mark when the check may be skipped, undefined when it is due. */
function checkNotDue(path: string, mark: CleanMark | undefined, nowMs: number): CleanMark | undefined {
  if (mark === undefined) return undefined;
  if (nowMs < mark.checkedAtMs || nowMs - mark.checkedAtMs >= INTEGRITY_CHECK_EVERY_MS) return undefined;
  if (existsSync(`${path}-wal`)) return undefined;
  const st = statSync(path);
  return st.size === mark.sizeBytes && st.mtimeMs === mark.mtimeMs ? mark : undefined;
}

/** Best effort: a mark that cannot be written only costs a check at the next open. */
function writeCleanMark(path: string, checkedAtMs: number): void {
  try {
    if (existsSync(`${path}-wal`)) return;
    const st = statSync(path);
    const mark: CleanMark = { checkedAtMs, sizeBytes: st.size, mtimeMs: st.mtimeMs };
    writeFileSync(cleanMarkPath(path), `${JSON.stringify(mark)}\n`, { mode: 0o600 });
  } catch {
    // ignored on purpose, see above
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
  const code = damageCode(e);
  return code === undefined ? undefined : `the database is damaged (${code}: ${(e as Error).message})`;
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
