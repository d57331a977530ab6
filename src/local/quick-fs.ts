/**
 * Synchronous file system calls on a local disk, while they are quick.
 *
 * An asynchronous node:fs call hands its work to libuv's thread pool and wakes a pool thread; on a machine with few
 * cores the woken thread takes the CPU from the main thread, and the main thread pays a thread switch each way. For
 * a call the kernel answers from memory (an lstat of a cached inode, a link, an unlink, a utimes on ext4, a few
 * microseconds each) that costs far more than the call itself: a first mirror of 2,000 small files spent about a
 * fifth of its main thread in them. So on a local disk (statfs's type: `onLocalDisk`) those calls run synchronously,
 * each timed, and a `QuickGate` turns them off when several in a row were slow (the disk, not the cache, answered
 * them): then they go through the pool, whose threads wait for the disk in parallel while the main thread works.
 * Never on a network or FUSE file system: a synchronous call there could hold the main thread as long as the network
 * does. Calls that wait for the disk by design (fsync, reading and writing file contents) stay in the pool.
 */
import { dirname } from 'node:path';
import type { FsModule } from './fs-module.js';

/**
 * File systems (statfs f_type) whose calls are answered on this machine: ext2/3/4, XFS, Btrfs, tmpfs, overlayfs,
 * ZFS, F2FS, bcachefs.
 */
const LOCAL_FS_TYPES = new Set([0xef53, 0x58465342, 0x9123683e, 0x01021994, 0x794c7630, 0x2fc12fc1, 0xf2f52010, 0xca451a4e]);

/**
 * Whether `path` is on a local disk: false when the module has no statfs or it fails. A path not there yet (a sync
 * root a first run creates) is on the file system of its nearest existing parent.
 */
export async function onLocalDisk(fs: FsModule, path: string): Promise<boolean> {
  const statfs = fs.statfs;
  if (statfs === undefined) return false;
  for (let at = path; ; at = dirname(at)) {
    const answer = await new Promise<number | string>((resolve) => statfs(at, (err, st) => resolve(err === null ? Number(st.type) >>> 0 : (err.code ?? 'error'))));
    if (typeof answer === 'number') return LOCAL_FS_TYPES.has(answer);
    if (answer !== 'ENOENT' || dirname(at) === at) return false;
  }
}

/** Slow calls (or windows of calls) in a row that turn a gate off: one alone can be a garbage collection or the scheduler. */
export const QUICK_SLOW_IN_A_ROW = 3;

export interface QuickGateOptions {
  /** How long the gate stays off after QUICK_SLOW_IN_A_ROW slow calls, then it tries again; default for good. */
  readonly offForMs?: number;
  /** The clock the calls are timed with (ms); default performance.now. */
  readonly now?: () => number;
  /**
   * `call` hands its answer to the callback on the next turn of the event loop, not in the same turn. For a process
   * that must answer other work while it downloads (the daemon: a watcher's event, a live change's upload): a
   * download's chain of quick calls (lstat, utimes, stat, link, unlink) answered in the same turn runs as one stretch,
   * and I/O that is ready waits behind every such stretch. While the daemon mirrored 10,000 files, a file written in
   * the mirror reached Box in 607-707 ms (p50, six and eight runs) with same-turn answers, 371-508 ms with next-turn
   * answers, 380-462 ms with no quick calls at all; a one-shot `sync --once` has nothing else to answer, and mirrors
   * 2,000 files about 10 % faster with same-turn answers (README, Performance).
   */
  readonly answerNextTurn?: boolean;
}

/**
 * On while the synchronous calls it times are quick: `record` one call (or a window of `entries` calls) and how long
 * it took; after QUICK_SLOW_IN_A_ROW in a row each over `maxMsEach` per entry it turns off, for `offForMs` (then it
 * tries again) or for good.
 */
export class QuickGate {
  #on: boolean;
  #slow = 0;
  #offUntilMs = 0;
  readonly offForMs: number;
  readonly now: () => number;
  readonly answerNextTurn: boolean;

  constructor(
    on: boolean,
    readonly maxMsEach: number,
    opts: QuickGateOptions = {},
  ) {
    this.#on = on;
    this.offForMs = opts.offForMs ?? Infinity;
    this.now = opts.now ?? (() => performance.now());
    this.answerNextTurn = opts.answerNextTurn ?? false;
  }

  get on(): boolean {
    if (!this.#on && this.#offUntilMs !== 0 && this.now() >= this.#offUntilMs) {
      this.#on = true;
      this.#offUntilMs = 0;
    }
    return this.#on;
  }

  /** Turn the gate on or off from now on (onLocalDisk's answer). */
  set(on: boolean): void {
    this.#on = on;
    this.#slow = 0;
    this.#offUntilMs = 0;
  }

  record(entries: number, ms: number): void {
    this.#slow = ms > entries * this.maxMsEach ? this.#slow + 1 : 0;
    if (this.#slow < QUICK_SLOW_IN_A_ROW) return;
    this.#slow = 0;
    this.#on = false;
    this.#offUntilMs = Number.isFinite(this.offForMs) ? this.now() + this.offForMs : 0;
  }

  /**
   * `sync(...args)` timed while the gate is on, its answer handed to `cb` as the callback form would (on the next
   * turn with `answerNextTurn`); else the callback form.
   */
  call<A extends unknown[], R>(viaPool: (...a: [...A, Callback<R>]) => void, sync: (...a: A) => R, args: A, cb: Callback<R>): void {
    if (!this.on) return viaPool(...args, cb);
    const t0 = this.now();
    let err: NodeJS.ErrnoException | null = null;
    let result = undefined as R;
    try {
      result = sync(...args);
    } catch (e) {
      err = e as NodeJS.ErrnoException;
    }
    this.record(1, this.now() - t0);
    if (this.answerNextTurn) setImmediate(cb, err, result);
    else cb(err, result);
  }
}

type Callback<R> = (err: NodeJS.ErrnoException | null, result: R) => void;

/** `gate.call` as a promise. */
export function quickCall<A extends unknown[], R>(gate: QuickGate, viaPool: (...a: [...A, Callback<R>]) => void, sync: (...a: A) => R, ...args: A): Promise<R> {
  return new Promise<R>((resolve, reject) => gate.call(viaPool, sync, args, (err, r) => (err === null ? resolve(r) : reject(err))));
}

/** A single metadata call slower than this (a cached one takes microseconds) counts as slow. */
export const QUICK_CALL_MAX_MS = 0.5;
/** How long the per-call gate stays off after it saw the disk, before it tries synchronous calls again. */
export const QUICK_CALL_OFF_MS = 60_000;

/**
 * `fs` with the callback forms of lstat, stat, link, unlink, utimes and rename answered by their synchronous forms
 * while `gate` is on (the callback still receives the answer; callers wrap it in a promise, fs-module's
 * viaCallback and guard's lstatOrUndefined). A form the module lacks is left as it is.
 */
export function quickFs(fs: FsModule, gate: QuickGate): FsModule {
  const out: { -readonly [K in keyof FsModule]: FsModule[K] } = { ...fs };
  const wrap = <A extends unknown[], R>(viaPool: ((...a: [...A, Callback<R>]) => void) | undefined, sync: ((...a: A) => R) | undefined) =>
    viaPool === undefined || sync === undefined ? viaPool : (...a: [...A, Callback<R>]) => gate.call(viaPool, sync, a.slice(0, -1) as A, a[a.length - 1] as Callback<R>);
  out.lstat = wrap(fs.lstat as never, fs.lstatSync as never) as FsModule['lstat'];
  out.stat = wrap(fs.stat as never, fs.statSync as never) as FsModule['stat'];
  out.link = wrap(fs.link as never, fs.linkSync as never) as FsModule['link'];
  out.unlink = wrap(fs.unlink as never, fs.unlinkSync as never) as FsModule['unlink'];
  out.utimes = wrap(fs.utimes as never, fs.utimesSync as never) as FsModule['utimes'];
  out.rename = wrap(fs.rename as never, fs.renameSync as never) as FsModule['rename'];
  return out;
}
