/**
 * The journal's integrity check (`PRAGMA quick_check`) on a worker thread, with its own better-sqlite3 connection
 * to the same file. quick_check reads every page: about 0.4 s at 200,000 files and seconds at a million, in one
 * synchronous call. On the daemon's main thread that call held the event loop the whole time (no `status` answer,
 * no watcher event, no live change, SIGTERM waiting); on its own thread it holds nothing.
 *
 * Beside the daemon's connection the check is a reader of the WAL database: it sees one consistent snapshot (the
 * one at its start) while the daemon goes on reading and writing; only the WAL checkpoint waits for it to end.
 *
 * A check is stopped (SIGTERM) by terminating its thread. A thread inside a native call (the pragma) ends only when
 * that call returns, and node waits for such a thread at a natural exit: so whoever ends the process asks
 * checkThreadsBusy() and exits explicitly while one is (daemon.ts). process.exit does not wait for it.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { workerPrelude, reapplyAfterWorkerStart } from '../local/worker-heap-flags.js';

/** What the check found: `problems` empty when the file is sound; `error` when it could not run. */
export type ThreadCheckResult =
  | { readonly ok: true; readonly problems: readonly string[] }
  | { readonly ok: false; readonly error: Error & { code?: string } };

export interface ThreadCheckOptions {
  /** Run the check this many times (default 1): a test's knob that makes the work last, on a small journal. */
  readonly repeat?: number;
  /**
   * After a check that passed, copy what the WAL holds into the file from the thread too (a PASSIVE checkpoint:
   * it waits for no reader or writer), so that the TRUNCATE checkpoint left for the main thread has little to copy.
   */
  readonly checkpoint?: boolean;
  /** Aborting terminates the thread; the promise then resolves with an error (code 'ABORT_ERR'). */
  readonly signal?: AbortSignal;
}

/** Plain CommonJS, run with `eval`: the thread's own connection, the check, the answer, the connection closed. */
const WORKER_CODE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.sqlite);
let db;
try {
  db = new Database(workerData.path, { fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  const problems = [];
  for (let i = 0; i < workerData.repeat && problems.length === 0; i++) {
    for (const r of db.pragma('quick_check')) if (r.quick_check !== 'ok') problems.push(r.quick_check);
  }
  if (problems.length === 0 && workerData.checkpoint) db.pragma('wal_checkpoint(PASSIVE)');
  parentPort.postMessage({ problems });
} catch (e) {
  parentPort.postMessage({ error: { message: e && e.message ? e.message : String(e), code: e && typeof e.code === 'string' ? e.code : undefined } });
} finally {
  try { if (db) db.close(); } catch {}
}
`;

let busy = 0;

/** A check thread is still running (possibly inside the pragma, past a terminate()). */
export function checkThreadsBusy(): boolean {
  return busy > 0;
}

const sqlitePath = (): string => createRequire(import.meta.url).resolve('better-sqlite3');

function failure(message: string, code?: string): Error & { code?: string } {
  const e: Error & { code?: string } = new Error(message);
  if (code !== undefined) e.code = code;
  return e;
}

/** Runs quick_check on `path` on a thread of its own; never rejects. */
export function quickCheckOnThread(path: string, opts: ThreadCheckOptions = {}): Promise<ThreadCheckResult> {
  if (opts.signal?.aborted) return Promise.resolve({ ok: false, error: failure('the check was stopped before it started', 'ABORT_ERR') });
  let worker: Worker;
  try {
    worker = new Worker(workerPrelude() + WORKER_CODE, { eval: true, workerData: { path, sqlite: sqlitePath(), repeat: Math.max(1, Math.floor(opts.repeat ?? 1)), checkpoint: opts.checkpoint === true } });
    worker.once('online', reapplyAfterWorkerStart);
  } catch (e) {
    return Promise.resolve({ ok: false, error: failure(`the check thread could not start (${e instanceof Error ? e.message : String(e)})`) });
  }
  // Never keeps the process alive by itself (see the header for the exit).
  worker.unref();
  busy += 1;
  return new Promise<ThreadCheckResult>((resolve) => {
    let settled = false;
    const settle = (r: ThreadCheckResult): void => {
      if (settled) return;
      settled = true;
      opts.signal?.removeEventListener('abort', onAbort);
      resolve(r);
    };
    const onAbort = (): void => {
      settle({ ok: false, error: failure('the check was stopped (the daemon is closing)', 'ABORT_ERR') });
      void worker.terminate().catch(() => undefined);
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    worker.on('message', (m: { problems?: string[]; error?: { message: string; code?: string } }) => {
      if (m.error) settle({ ok: false, error: failure(m.error.message, m.error.code) });
      else settle({ ok: true, problems: m.problems ?? [] });
    });
    worker.on('error', (e) => settle({ ok: false, error: failure(`the check thread failed (${e.message})`) }));
    worker.on('exit', () => {
      busy -= 1;
      settle({ ok: false, error: failure('the check thread ended without an answer') });
    });
  });
}
