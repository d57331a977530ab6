/**
 * Worker threads that write download temp files (config `fileWorkers`, issue 29 point 4): the create (O_EXCL), the
 * writes, the fsync and the close of a temp file run on a pool of node:worker_threads, so the main thread hands a
 * small file's whole life on disk over in one message and hears back once, instead of making each system call itself.
 *
 * A new file's job also commits it into place (`commit`: the guards, Box's mtime, the link under its final name;
 * worker-commit.ts), and so does a file that replaces one (worker-replace.ts: the guard, then a rename over it); the
 * journal stays on the main thread. A worker makes nothing but temp files (temp-name.ts names, created with O_EXCL)
 * and links or renames of whole durable ones (worker-durable.ts), so a killed process leaves at most temp files, removed by the next full scan, as before.
 *
 * The pool is sized to the machine unless told: os.availableParallelism() - 1 threads (at least one). Its threads are unref'd (they never keep
 * a process alive) and `close()` terminates them (the composition root's close, which SIGTERM reaches).
 * - A worker that cannot start (ERR_WORKER_INIT_FAILED, a resource limit, code that fails before it says it is
 *   ready): the jobs it held never ran, and they and every later job run on the main thread (`runHere`, the same
 *   calls through libuv's pool; LocalFs opens new temp files there again). Logged once.
 * - A worker that dies with jobs in flight: each of them fails with SyncError `file_worker` (retry) naming the
 *   file, so that one download is tried again and the rest go on; the worker is replaced. After MAX_DEATHS deaths
 *   the pool stops using threads and runs everything on the main thread.
 * - A job that gets no answer within `jobTimeoutMs` (a thread stuck in the kernel) fails the same way, and the
 *   worker is terminated: nothing waits for ever.
 */
import * as nodeFs from 'node:fs';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { SyncError } from '../core/errors.js';
import { reapplyAfterWorkerStart, workerPrelude } from './worker-heap-flags.js';
import { asRelPath } from '../core/model.js';
import { firstBadAncestor } from './containment.js';
import { COMMIT_CODE, type CommitOutcome } from './worker-commit.js';
import type { ReplaceGuard } from './worker-replace.js';
import { DURABLE_CODE } from './worker-durable.js';
import { syncfsAddonPath } from './syncfs-native.js';
import { WORKER_GC_CODE } from './worker-gc.js';
import { FETCH_CODE, type FetchOutcome } from './worker-fetch.js';

/**
 * The commit into place of a new file, done by the job that wrote its temp file (worker-commit.ts). The temp file is
 * put at `target` only when the bytes written have SHA-1 `sha1`, every folder from `root` down to it is a real
 * folder, no name Box takes for the same one is beside it, and nothing is at `target` (link(2), never a rename over).
 */
export interface CommitJob {
  readonly root: string;
  /** `target` relative to `root`. */
  readonly rel: string;
  readonly target: string;
  /** Box's mtime, set on the open file before its fsync; null: left as written. */
  readonly mtimeMs: number | null;
  readonly sha1: string;
  /** A file that replaces the one at `target` (guard `file`), which must still have this stat (worker-replace.ts). */
  readonly replace?: ReplaceGuard;
}

/** One call chain on a temp file. `fd` null: create `path` first (O_EXCL, 0666 before the umask). */
export type FileJob = (
  /** put: `data` is handed over: once run() is called the caller must not read or change it (it may be moved to the thread). */
  | { readonly op: 'put'; readonly path: string; readonly fd: number | null; readonly position: number; readonly data: Uint8Array; readonly sync: boolean; readonly close: boolean; readonly commit?: CommitJob }
  | { readonly op: 'unzip'; readonly path: string; readonly fd: number | null; readonly archive: string; readonly offset: number; readonly compressedSize: number; readonly method: number; readonly size: number; readonly sha1: string; readonly commit?: CommitJob }
  | { readonly op: 'truncate'; readonly path: string; readonly fd: number }
  /** fetch (worker-fetch.ts): the body of a GET of `url` into `fd` from `position` (the bytes before it hashed again). */
  | {
      readonly op: 'fetch';
      readonly path: string;
      readonly fd: number;
      readonly position: number;
      readonly url: string;
      readonly headers: Readonly<Record<string, string>>;
      /** Most bytes the file may hold; null: no bound. */
      readonly limit: number | null;
      readonly stallMs: number;
      readonly connectTimeoutMs: number;
      /** The download's deadline, from when the thread starts the job. */
      readonly deadlineInMs: number;
      /** false: the bytes are not hashed (no `sha1` in the answer). */
      readonly hash?: boolean;
    }
  | { readonly op: 'close'; readonly path: string; readonly fd: number }
) & {
  /** The file it is for, as error messages name it (default: the temp path). */
  readonly label?: string;
};

/** The file descriptor the job ended with (after a `close`, the closed one); an error carries it too. */
export interface FileJobResult {
  readonly fd: number | null;
  /** `unzip`: what the temp file holds now, or why the entry could not be used (nothing written). */
  readonly sha1?: string;
  readonly size?: number;
  readonly unusable?: string;
  /** A job with `commit`: what became of it (worker-commit.ts CommitOutcome). */
  readonly committed?: CommitOutcome;
  /** `fetch`: what the thread read and wrote (none: no thread could run it). */
  readonly fetched?: FetchOutcome;
}

/** What a caller of FileWorkerPool.run may add to a job. */
export interface RunOptions {
  /** `fetch`: ends the job early (its answer says `aborted`). */
  readonly signal?: AbortSignal | undefined;
  /** `fetch`: the bytes the file holds so far, every few MiB. */
  readonly onProgress?: ((doneBytes: number) => void) | undefined;
  /** This job's own bound instead of the pool's `jobTimeoutMs` (a big download's deadline is longer). */
  readonly timeoutMs?: number | undefined;
}

/** An errno error from a worker, rebuilt with the fields classifyFsError reads, and the fd it had. */
export class FileJobError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
    readonly fd: number | null,
  ) {
    super(message);
  }
}

/** Worker deaths after which the pool stops using threads (a thread that keeps dying is not worth a retry each time). */
export const MAX_DEATHS = 3;
const DEFAULT_JOB_TIMEOUT_MS = 10 * 60_000;

/**
 * The worker's code: plain CommonJS (run with `eval`, so the same text runs from the sources, the compiled CLI and
 * the tests). Open, write and close are synchronous (the thread is there to wait for them); the fsync goes through
 * libuv's pool so one thread keeps several files' fsyncs in flight, as the main thread did.
 */
export const WORKER_CODE = `
const fs = require('node:fs');
const zlib = require('node:zlib');
const { createHash } = require('node:crypto');
const { parentPort } = require('node:worker_threads');
${COMMIT_CODE}
${DURABLE_CODE}
${WORKER_GC_CODE}
${FETCH_CODE}
// The answers of one turn go back in one message (an array), as the jobs came (FileWorkerPool.#post).
let answers = [];
const sendAnswers = () => {
  const a = answers;
  answers = [];
  parentPort.postMessage(a.length === 1 ? a[0] : a);
};
const reply = (m, fd, more) => {
  if (answers.push({ id: m.id, fd, ...more }) === 1) setImmediate(sendAnswers);
};
const fail = (m, fd, e) => reply(m, fd, { error: { message: String(e && e.message), code: e && e.code } });
let scratch = Buffer.alloc(0);
// The bytes of an archive entry, checked, or the reason they cannot be used (a stored entry's are in scratch
// until the next entry: put() writes them before this thread reads another message).
function entryBytes(m) {
  if (m.method !== 0 && m.method !== 8) return 'compression method ' + m.method;
  if (!(m.compressedSize <= 2 * m.size + 1024)) return 'the entry claims ' + m.compressedSize + ' compressed bytes for a file of ' + m.size;
  let a;
  try {
    a = fs.openSync(m.archive, 'r');
    const h = Buffer.alloc(30);
    if (fs.readSync(a, h, 0, 30, m.offset) !== 30 || h.readUInt32LE(0) !== 0x04034b50) return 'no local file header at byte ' + m.offset;
    // One read buffer for every entry: a thread frees buffers only at its rare garbage collections.
    if (scratch.length < m.compressedSize) scratch = Buffer.allocUnsafeSlow(Math.max(m.compressedSize, 2 * scratch.length, 64 * 1024));
    const raw = scratch.subarray(0, m.compressedSize);
    if (fs.readSync(a, raw, 0, raw.length, m.offset + 30 + h.readUInt16LE(26) + h.readUInt16LE(28)) !== raw.length) return 'the archive ends inside the entry';
    const data = m.method === 0 ? raw : zlib.inflateRawSync(raw, { maxOutputLength: m.size + 1 });
    if (data.length !== m.size) return 'the entry holds ' + data.length + ' bytes, Box listed ' + m.size;
    const sha1 = createHash('sha1').update(data).digest('hex');
    if (sha1 !== m.sha1) return 'the entry has SHA-1 ' + sha1 + ', Box listed ' + m.sha1;
    return data;
  } catch (e) {
    return String(e && e.message);
  } finally {
    if (a !== undefined) try { fs.closeSync(a); } catch {}
  }
}
// Create the temp file if need be, write d at m.position, then make it durable (whenDurable, worker-durable.ts: one
// syncfs for a batch, or an fsync in libuv's pool; this thread keeps working) and close when asked; answers with the fd.
function put(m, d, more) {
  let fd = m.fd;
  // A job that also commits (worker-commit.ts) is sure of its bytes before the file is made, or commits nothing.
  const c = m.commit !== undefined && m.sync && m.close && m.position === 0 && fd === null && commitReady(m.commit, d, more.sha1) ? m.commit : undefined;
  let st;
  try {
    if (fd === null) {
      if (c !== undefined) {
        const refused = beforeCreate(c);
        if (refused !== undefined) return reply(m, null, { ...more, committed: refused });
        fd = createOwn(c, m.path);
      } else fd = fs.openSync(m.path, 'wx', 0o666);
    }
    for (let done = 0; done < d.length; ) {
      const n = fs.writeSync(fd, d, done, d.length - done, m.position + done);
      if (!(n > 0)) throw Object.assign(new Error('write made no progress'), { code: 'EIO' });
      done += n;
    }
    if (c !== undefined) st = stampFile(fd, c);
    if (!m.sync) {
      if (m.close) fs.closeSync(fd);
      return reply(m, fd, more);
    }
  } catch (e) {
    return fail(m, fd, e);
  }
  const at = fd;
  whenDurable(at, m.path, m.fd === null, (e) => {
    if (e) return fail(m, at, e);
    if (m.close) {
      try { fs.closeSync(at); } catch (e2) { return fail(m, at, e2); }
    }
    if (c === undefined) return reply(m, at, more);
    const committed = commitInPlace(c, m.path, st);
    trace({ op: 'committed', paths: [m.path], target: c.target });
    reply(m, at, { ...more, committed });
  });
}
parentPort.on('message', (m) => {
  if (Array.isArray(m)) for (const job of m) onJob(job);
  else onJob(m);
});
function onJob(m) {
  if (m.op === 'exit') process.exit(m.code);
  if (m.op === 'put') return put(m, m.data, {});
  if (m.op === 'fetch') return fetchJob(m);
  if (m.op === 'cancel') return cancelFetch(m.target);
  if (m.op === 'unzip') {
    const d = entryBytes(m);
    if (typeof d === 'string') return reply(m, m.fd, { unusable: d });
    return put({ ...m, position: 0, sync: true, close: true }, d, { sha1: m.sha1, size: d.length });
  }
  try {
    if (m.op === 'truncate') fs.ftruncateSync(m.fd, 0);
    else fs.closeSync(m.fd);
    reply(m, m.fd, {});
  } catch (e) {
    fail(m, m.fd, e);
  }
}
parentPort.postMessage({ ready: true });
`;

interface Pending {
  readonly job: FileJob;
  readonly resolve: (r: FileJobResult) => void;
  readonly reject: (e: unknown) => void;
  readonly timer: NodeJS.Timeout;
  readonly onProgress?: ((doneBytes: number) => void) | undefined;
}

interface Slot {
  readonly worker: Worker;
  online: boolean;
  readonly pending: Map<number, Pending>;
  /** The jobs of this turn not yet posted: one message for them all (#post). */
  outbox: unknown[];
}

/** A step a worker thread took on temp files (FileWorkerPoolOptions.onTrace). */
export interface WorkerTrace {
  readonly op: 'fsync' | 'syncfs' | 'committed';
  readonly paths: readonly string[];
  readonly target?: string;
}

/** A pass's planned downloads (LocalFs.warmUp): how many files, and their bytes in all. */
export interface PlannedDownloads {
  readonly files: number;
  readonly bytes: number;
}

/**
 * A pass with fewer downloads than `minFiles` (config `http.fileWorkersMinFiles`, default SMALL_PASS_FILES) and at most
 * SMALL_PASS_BYTES in all has them written on the main thread (README, Performance: "The fixed cost of a run"): a
 * thread's start (about 0.05 s of CPU and 10 MiB) cost a first mirror of 50 small files more than its writes saved,
 * while from about 100 files or 20 MB on the threads won (measured on loopback).
 */
export const SMALL_PASS_FILES = 100;
export const SMALL_PASS_BYTES = 10 * 1024 * 1024;

export function smallPass(p: PlannedDownloads, minFiles = SMALL_PASS_FILES): boolean {
  return p.files < minFiles && p.bytes <= SMALL_PASS_BYTES;
}

export interface FileWorkerPoolOptions {
  /** Threads; default os.availableParallelism() - 1, at least 1. */
  readonly size?: number;
  readonly logger?: Logger | undefined;
  /** A job with no answer for this long fails (`file_worker`) and its thread is terminated; default 10 minutes. */
  readonly jobTimeoutMs?: number;
  /** Threads with no job for this long are ended (a new job starts them again); default 5 s. */
  readonly idleMs?: number;
  /** A pass planning fewer downloads (and at most SMALL_PASS_BYTES) starts no thread (smallPass); 0: every pass does. */
  readonly minFiles?: number;
  /** Tests: called with a job and a way to post a message to the thread that gets it, before the job is posted. */
  readonly beforePost?: (job: FileJob, post: (message: unknown) => void) => void;
  /** Tests: the worker's code (one that cannot start, one that dies). */
  readonly workerCode?: string;
  /** Tests: what each thread did, in order (worker-durable.ts: `fsync`, `syncfs`, `committed`). */
  readonly onTrace?: (t: WorkerTrace) => void;
}

export class FileWorkerPool {
  readonly size: number;
  readonly #slots: Slot[] = [];
  readonly #log: Logger | undefined;
  readonly #timeoutMs: number;
  #next = 0;
  #ids = 0;
  #deaths = 0;
  /** Threads are not used any more (one could not start, too many died, or the pool is closed). */
  #off = false;
  /** The last pass that planned downloads was small (warmUp): new temp files are written here while no thread runs. */
  #here = false;
  #closed = false;
  #idleTimer: NodeJS.Timeout | undefined;

  constructor(readonly opts: FileWorkerPoolOptions = {}) {
    // One core is the main thread's: with as many threads as cores, two threads and the main thread took turns on
    // two cores and the hand-offs cost more than they saved (README, Performance).
    this.size = Math.max(1, opts.size ?? availableParallelism() - 1);
    this.#log = opts.logger;
    this.#timeoutMs = opts.jobTimeoutMs ?? DEFAULT_JOB_TIMEOUT_MS;
  }

  /**
   * Whether new temp files and bodies go to threads (false: they are written on the main thread). False too while
   * no thread runs after a small pass's warmUp: starting one would cost that pass more than it saves.
   */
  get threaded(): boolean {
    return !this.#off && !(this.#here && this.#slots.length === 0);
  }

  /** Threads running now. */
  get threads(): number {
    return this.#slots.length;
  }

  /**
   * Start the threads before the first job (LocalFs.warmUp: a pass planned downloads), so that a thread's start (a
   * few tens of milliseconds) runs while the downloads' requests do. Ended after `idleMs` like idle threads when no
   * job comes. A small pass (`planned` within smallPass: a few small files) starts none: until the next pass that
   * plans downloads, new temp files are written on the main thread unless threads still run (`threaded`).
   */
  warmUp(planned?: PlannedDownloads): void {
    this.#here = planned !== undefined && smallPass(planned, this.opts.minFiles);
    if (this.#here || this.#closed || this.#off || this.#slots.length >= this.size) return;
    if (this.#slot() !== undefined) this.#whenIdle();
  }

  run(job: FileJob, opts: RunOptions = {}): Promise<FileJobResult> {
    if (this.#closed) return Promise.reject(stopped(job, 'boxsync is stopping'));
    if (this.#off) return runHere(job);
    clearTimeout(this.#idleTimer);
    const slot = this.#slot();
    if (slot === undefined) return runHere(job);
    const id = ++this.#ids;
    const timeoutMs = opts.timeoutMs ?? this.#timeoutMs;
    return new Promise<FileJobResult>((resolve, reject) => {
      const cancel = (): void => {
        this.#post(slot);
        slot.worker.postMessage({ op: 'cancel', target: id });
      };
      const timer = setTimeout(() => {
        slot.pending.delete(id);
        opts.signal?.removeEventListener('abort', cancel);
        reject(stopped(job, `its worker thread gave no answer in ${Math.round(timeoutMs / 1000)} s`));
        void slot.worker.terminate();
        this.#whenIdle();
      }, timeoutMs);
      timer.unref();
      const settled = <A extends unknown[]>(f: (...a: A) => void) => (...a: A): void => {
        opts.signal?.removeEventListener('abort', cancel);
        f(...a);
        this.#whenIdle();
      };
      slot.pending.set(id, { job, resolve: settled(resolve), reject: settled(reject), timer, onProgress: opts.onProgress });
      if (opts.signal !== undefined) {
        if (opts.signal.aborted) queueMicrotask(cancel);
        else opts.signal.addEventListener('abort', cancel, { once: true });
      }
      this.opts.beforePost?.(job, (m) => {
        this.#post(slot);
        slot.worker.postMessage(m);
      });
      // A put job's bytes are moved to a thread that said it is ready (no copy; `data` is empty here afterwards), and
      // copied to one still starting: a job held by a thread that never started runs here with them (#fail).
      const moved = slot.online ? movable(job) : undefined;
      if (moved !== undefined) {
        // Moved as it is posted (after the jobs gathered before it, so the thread sees them in order).
        this.#post(slot);
        slot.worker.postMessage({ ...job, id }, [moved]);
      }
      // Any other job is posted at the end of this turn with the other jobs of the turn: one message (an array) for
      // many small files taken from a zip archive.
      else if (slot.outbox.push({ ...job, id }) === 1) setImmediate(() => this.#post(slot));
    });
  }

  /** Posts the jobs `slot` gathered (a single job as itself, several as an array). */
  #post(slot: Slot): void {
    if (slot.outbox.length === 0) return;
    const jobs = slot.outbox as { id: number }[];
    slot.outbox = [];
    try {
      slot.worker.postMessage(jobs.length === 1 ? jobs[0] : jobs);
    } catch (e) {
      // A job that cannot be sent fails as run() failed when it posted each job itself.
      for (const { id } of jobs) {
        const p = slot.pending.get(id);
        if (p === undefined) continue;
        slot.pending.delete(id);
        clearTimeout(p.timer);
        p.reject(e);
      }
    }
  }

  /**
   * Once no thread holds a job, the threads are ended after `idleMs` (they cost about 9 MiB each, and an idle
   * daemon has nothing for them); the next job starts them again. Not a death.
   */
  #whenIdle(): void {
    if (this.#slots.some((s) => s.pending.size > 0)) return;
    clearTimeout(this.#idleTimer);
    this.#idleTimer = setTimeout(() => {
      if (this.#slots.some((s) => s.pending.size > 0)) return;
      for (const s of this.#slots.splice(0)) void s.worker.terminate();
    }, this.opts.idleMs ?? 5000);
    this.#idleTimer.unref();
  }

  /** Terminates the threads; jobs in flight fail with `file_worker` (the process is stopping). */
  async close(): Promise<void> {
    clearTimeout(this.#idleTimer);
    this.#closed = true;
    this.#off = true;
    const slots = this.#slots.splice(0);
    for (const s of slots) this.#fail(s, 'boxsync is stopping');
    // A thread inside a system call that does not return (a hung network file system) ends when it returns: the
    // stop waits at most a second for it (the threads are unref'd, so they never hold the process).
    const bound = new Promise<void>((resolve) => setTimeout(resolve, 1000).unref());
    await Promise.race([Promise.all(slots.map((s) => s.worker.terminate().catch(() => undefined))), bound]);
  }

  #slot(): Slot | undefined {
    while (this.#slots.length < this.size) {
      const slot = this.#start();
      if (slot === undefined) return undefined;
      this.#slots.push(slot);
    }
    // Round robin: each thread keeps several fsyncs in flight, so the least busy one is not worth looking for.
    this.#next = (this.#next + 1) % this.#slots.length;
    return this.#slots[this.#next];
  }

  #start(): Slot | undefined {
    let worker: Worker;
    try {
      // workerPrelude: the thread's start puts the process's young generation flag back to V8's default.
      worker = new Worker(workerPrelude() + (this.opts.workerCode ?? WORKER_CODE), {
        eval: true,
        resourceLimits: { maxYoungGenerationSizeMb: 2 },
        // worker-durable.ts: the addon that makes a batch of temp files durable at once (none: an fsync each).
        workerData: { syncfsAddon: syncfsAddonPath(), trace: this.opts.onTrace !== undefined },
      });
      worker.once('online', reapplyAfterWorkerStart);
    } catch (e) {
      this.#giveUp(`a worker thread could not start (${e instanceof Error ? e.message : String(e)})`);
      return undefined;
    }
    worker.unref();
    const slot: Slot = { worker, online: false, pending: new Map(), outbox: [] };
    type Answer = FileJobResult & { id: number; ready?: true; trace?: WorkerTrace; progress?: number; done?: number; error?: { message: string; code?: string } };
    const answer = (m: Answer): void => {
      // Its code ran to the end: from now on a job it holds may have started.
      if (m.ready === true) return void (slot.online = true);
      if (m.trace !== undefined) return this.opts.onTrace?.(m.trace);
      if (m.progress !== undefined) return slot.pending.get(m.progress)?.onProgress?.(m.done ?? 0);
      const p = slot.pending.get(m.id);
      if (p === undefined) return;
      slot.pending.delete(m.id);
      clearTimeout(p.timer);
      if (m.error === undefined) p.resolve(m);
      else p.reject(new FileJobError(m.error.message, m.error.code, m.fd));
    };
    // The answers of one turn of the thread come as an array.
    worker.on('message', (m: Answer | Answer[]) => (Array.isArray(m) ? m.forEach(answer) : answer(m)));
    const ended = (why: string): void => {
      const at = this.#slots.indexOf(slot);
      if (at < 0) return;
      this.#slots.splice(at, 1);
      if (!slot.online) {
        this.#giveUp(`a worker thread could not start (${why})`);
        this.#fail(slot, why);
        return;
      }
      this.#fail(slot, `its worker thread stopped (${why})`);
      this.#deaths += 1;
      if (this.#deaths >= MAX_DEATHS) this.#giveUp(`${this.#deaths} worker threads stopped`);
      else this.#log?.warn({ why, deaths: this.#deaths }, 'a file worker thread stopped; its files are tried again, and a new thread takes its place');
    };
    worker.on('error', (e) => ended(e instanceof Error ? e.message : String(e)));
    worker.on('exit', (code) => ended(`exit code ${code}`));
    return slot;
  }

  /**
   * Ends the jobs `slot` holds: with `file_worker` errors, or, for a thread that never said it is ready (its code
   * did not run to the end, so none of them started), by running them here.
   */
  #fail(slot: Slot, why: string): void {
    slot.outbox = [];
    for (const p of slot.pending.values()) {
      clearTimeout(p.timer);
      if (slot.online || this.#closed) p.reject(stopped(p.job, why));
      else runHere(p.job).then(p.resolve, p.reject);
    }
    slot.pending.clear();
  }

  #giveUp(why: string): void {
    if (this.#off) return;
    this.#off = true;
    this.#log?.warn({ why }, `${why}: download temp files are written on the main thread from now on`);
    for (const s of this.#slots.splice(0)) {
      this.#fail(s, why);
      void s.worker.terminate();
    }
  }
}

/**
 * The ArrayBuffer a put job's bytes can be moved with: only when the view is the whole of it (Buffer.allocUnsafe's
 * small Buffers share one pool, a socket's chunk may be a slice of a bigger one: moving those would take other
 * bytes away from their owners, so they are copied). The caller gives a put job's `data` up to run().
 */
export function movable(job: FileJob): ArrayBuffer | undefined {
  if (job.op !== 'put') return undefined;
  const b = job.data.buffer;
  return b instanceof ArrayBuffer && job.data.byteOffset === 0 && job.data.byteLength === b.byteLength && b.byteLength > 0 ? b : undefined;
}

function stopped(job: FileJob, why: string): SyncError {
  return new SyncError({
    code: 'file_worker',
    disposition: 'retry',
    message: `writing the download of ${job.label ?? job.path} did not finish: ${why}; the download is tried again`,
    details: { path: job.label ?? job.path },
  });
}

/** The main thread's way to do a job: the same calls, through libuv's pool. */
async function runHere(job: FileJob): Promise<FileJobResult> {
  const call = <R>(f: (cb: (e: NodeJS.ErrnoException | null, r: R) => void) => void): Promise<R> =>
    new Promise<R>((resolve, reject) => f((e, r) => (e ? reject(e) : resolve(r))));
  // An archive entry is read on the main thread by its caller's own path (zip-prefetch.ts streams it).
  if (job.op === 'unzip') return { fd: job.fd, unusable: 'no worker thread' };
  // A body to fetch is read on the main thread by its caller (download.ts), which sees no `fetched`.
  if (job.op === 'fetch') return { fd: job.fd };
  // A new file that a worker thread was to check and commit: its folders are checked here before the temp file is
  // created (LocalFs.openTemp left that to the job); the main thread puts it in place (LocalFs.commitTemp).
  if (job.op === 'put' && job.commit !== undefined && job.fd === null && (await firstBadAncestor(nodeFs, job.commit.root, asRelPath(job.commit.rel))) !== undefined) {
    return { fd: null, committed: { refused: 'ancestor' } };
  }
  let fd = job.fd;
  try {
    if (job.op === 'truncate') await call<void>((cb) => nodeFs.ftruncate(job.fd, 0, cb));
    else if (job.op === 'close') await call<void>((cb) => nodeFs.close(job.fd, cb));
    else {
      if (fd === null) fd = await call<number>((cb) => nodeFs.open(job.path, 'wx', 0o666, cb));
      const at = fd;
      for (let done = 0; done < job.data.length; ) {
        const n = await call<number>((cb) => nodeFs.write(at, job.data, done, job.data.length - done, job.position + done, cb));
        if (!(n > 0)) throw Object.assign(new Error('write made no progress'), { code: 'EIO' });
        done += n;
      }
      if (job.sync) await call<void>((cb) => nodeFs.fsync(at, cb));
      if (job.close) await call<void>((cb) => nodeFs.close(at, cb));
    }
    return { fd };
  } catch (e) {
    throw new FileJobError(e instanceof Error ? e.message : String(e), (e as NodeJS.ErrnoException).code, fd);
  }
}
