/**
 * The journal's integrity check (`PRAGMA quick_check`) in a child process, with its own better-sqlite3 connection
 * to the same file. quick_check reads every page: about 0.4 s at 200,000 files and seconds at a million, in one
 * synchronous call. On the daemon's main thread that call held the event loop the whole time (no `status` answer,
 * no watcher event, no live change, SIGTERM waiting); in its own process it holds nothing.
 *
 * Beside the daemon's connection the check is a reader of the WAL database: it sees one consistent snapshot (the
 * one at its start) while the daemon goes on reading and writing; only the WAL checkpoint waits for it to end.
 *
 * A process, not a worker thread: a thread inside a native call cannot be stopped, and node's exit (process.exit
 * too) waits for every worker thread to stop, so SIGTERM during the check waited for the whole pragma (measured:
 * 9 s on a loaded machine). A child process is killed at once (SIGKILL: it only reads).
 */
import type { ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';

/** What the check found: `problems` empty when the file is sound; `error` when it could not run. */
export type CheckResult =
  | { readonly ok: true; readonly problems: readonly string[] }
  | { readonly ok: false; readonly error: Error & { code?: string } };

export interface CheckOptions {
  /** Run the check this many times (default 1): a test's knob that makes the work last, on a small journal. */
  readonly repeat?: number;
  /**
   * After a check that passed, the journal's upkeep from that connection too, so that the main thread is left with
   * almost nothing (SqliteJournal.afterUpkeepApart: it reloads the statistics and truncates the WAL). First
   * `PRAGMA optimize` over every table (mask 0x10002: the child's connection has run no query of its own to go
   * by), with `analysis_limit` 1000 so that an ANALYZE reads about a thousand rows of each index, not a million:
   * it holds the write lock for milliseconds (the daemon's writes wait meanwhile). Then a PASSIVE checkpoint (it
   * waits for no reader or writer) copies what the WAL holds into the file, so that the TRUNCATE checkpoint left
   * for the main thread has little to copy. On the main thread both took 0.2-1.1 s at a million rows under load.
   */
  readonly upkeep?: boolean;
  /** Aborting kills the process; the promise then resolves with an error (code 'ABORT_ERR'). */
  readonly signal?: AbortSignal;
  /**
   * The check's time limit (default CHECK_TIMEOUT_MS): past it the process is killed and the promise resolves with
   * an error (code 'CHECK_TIMEOUT'): the check did not finish, so it says nothing about the file. The callers then
   * use the journal as it is and check it again later (open-journal.ts says how); they never check it on their own
   * thread instead (as long again, with the event loop held).
   */
  readonly timeoutMs?: number;
}

/**
 * quick_check reads every page once: seconds at a million rows, a minute on a slow disk under load. Ten minutes is
 * far past any sound check; a check still running then is stuck (a hung disk, a file system that does not answer).
 */
export const CHECK_TIMEOUT_MS = 10 * 60 * 1000;

/** Plain CommonJS, run with `node -e`: its own connection, the check, the answer on stdout, the connection closed. */
const CHILD_CODE = `
const job = JSON.parse(process.argv[1]);
let db;
let answer;
try {
  const Database = require(job.sqlite);
  db = new Database(job.path, { fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  const problems = [];
  for (let i = 0; i < job.repeat && problems.length === 0; i++) {
    for (const r of db.pragma('quick_check')) if (r.quick_check !== 'ok') problems.push(r.quick_check);
  }
  if (problems.length === 0 && job.upkeep) {
    db.pragma('analysis_limit = 1000');
    db.pragma('optimize = 0x10002');
    db.pragma('wal_checkpoint(PASSIVE)');
  }
  answer = { problems };
} catch (e) {
  answer = { error: { message: e && e.message ? e.message : String(e), code: e && typeof e.code === 'string' ? e.code : undefined } };
} finally {
  try { if (db) db.close(); } catch {}
}
process.stdout.write(JSON.stringify(answer));
`;

const running = new Set<ChildProcess>();

/** A check process is still running. */
export function checksRunning(): boolean {
  return running.size > 0;
}

const sqlitePath = (): string => createRequire(import.meta.url).resolve('better-sqlite3');

function failure(message: string, code?: string): Error & { code?: string } {
  const e: Error & { code?: string } = new Error(message);
  if (code !== undefined) e.code = code;
  return e;
}

/**
 * node:child_process, loaded by the first check: a `sync --once` that has no check to make (its journal was closed
 * clean) does not load it and the modules it brings (node:dgram among them; 1-2 ms of CPU a run).
 */
const childProcess = (): typeof import('node:child_process') => createRequire(import.meta.url)('node:child_process') as typeof import('node:child_process');

/** Answers from the process's output; never rejects. */
export function quickCheckInProcess(path: string, opts: CheckOptions = {}): Promise<CheckResult> {
  if (opts.signal?.aborted) return Promise.resolve({ ok: false, error: failure('the check was stopped before it started', 'ABORT_ERR') });
  const job = { path, sqlite: sqlitePath(), repeat: Math.max(1, Math.floor(opts.repeat ?? 1)), upkeep: opts.upkeep === true };
  // The user's node options (a heap size, a --require) are not the check's business.
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  let child: ChildProcess;
  try {
    child = childProcess().spawn(process.execPath, ['-e', CHILD_CODE, JSON.stringify(job)], { stdio: ['ignore', 'pipe', 'pipe'], env });
  } catch (e) {
    return Promise.resolve({ ok: false, error: failure(`the check process could not start (${e instanceof Error ? e.message : String(e)})`) });
  }
  running.add(child);
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err = (err + d).slice(-2000)));
  return new Promise<CheckResult>((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const settle = (r: CheckResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      resolve(r);
    };
    const onAbort = (): void => {
      child.kill('SIGKILL');
      settle({ ok: false, error: failure('the check was stopped (the daemon is closing)', 'ABORT_ERR') });
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    const limitMs = Math.max(1, opts.timeoutMs ?? CHECK_TIMEOUT_MS);
    timer = setTimeout(() => {
      child.kill('SIGKILL');
      settle({ ok: false, error: failure(`the check did not finish within ${(limitMs / 1000).toFixed(limitMs < 10_000 ? 1 : 0)} s and was stopped`, 'CHECK_TIMEOUT') });
    }, limitMs);
    // The limit never keeps a process alive on its own.
    timer.unref();
    child.on('error', (e) => {
      running.delete(child);
      settle({ ok: false, error: failure(`the check process failed (${e.message})`) });
    });
    child.on('close', (code, signal) => {
      running.delete(child);
      let m: { problems?: string[]; error?: { message: string; code?: string } } | undefined;
      try {
        m = JSON.parse(out) as typeof m;
      } catch {
        m = undefined;
      }
      if (m?.error) settle({ ok: false, error: failure(m.error.message, m.error.code) });
      else if (m?.problems) settle({ ok: true, problems: m.problems });
      else settle({ ok: false, error: failure(`the check process ended without an answer (${signal ?? `exit code ${code}`}): ${err.trim().slice(-300)}`) });
    });
  });
}
