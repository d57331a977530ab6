/**
 * The file system the local adapter works on, injected: `node:fs` in production (pass the module itself), memfs
 * in unit tests of the adapter's logic. Only what the adapter uses; every path is absolute.
 */
import type {
  close,
  closeSync,
  createReadStream,
  fsync,
  ftruncate,
  ftruncateSync,
  link,
  linkSync,
  lstat,
  lstatSync,
  open,
  readdirSync,
  openSync,
  rename,
  renameSync,
  stat,
  statSync,
  statfs,
  unlink,
  unlinkSync,
  utimes,
  utimesSync,
  write,
  writeSync,
} from 'node:fs';
import type * as fsp from 'node:fs/promises';

export interface FsModule {
  readonly promises: Pick<
    typeof fsp,
    | 'lstat'
    | 'stat'
    | 'readdir'
    | 'mkdir'
    | 'rename'
    | 'link'
    | 'unlink'
    | 'utimes'
    | 'open'
    | 'rm'
    | 'rmdir'
    | 'writeFile'
    | 'readFile'
    | 'appendFile'
    | 'copyFile'
    | 'readlink'
    | 'symlink'
  >;
  readonly createReadStream: typeof createReadStream;
  /**
   * The callback lstat, when the module has one: the tree walk stats every entry, and the promise form costs
   * about three times as much per call on the main thread (100,000 cached entries: 1.8-2.6 s against 0.6 s).
   * Without it (a wrapper that only forwards `promises`) the walk uses `promises.lstat`.
   */
  readonly lstat?: typeof lstat;
  /**
   * The callback forms of the calls each download makes, when the module has them (the same reason: a first
   * mirror of small files makes several per file). `viaCallback` picks them.
   */
  readonly stat?: typeof stat;
  readonly link?: typeof link;
  readonly unlink?: typeof unlink;
  readonly utimes?: typeof utimes;
  readonly rename?: typeof rename;
  /**
   * The synchronous forms of those calls and statfs: on a local disk, while they answer quickly, the tree walk
   * (scan.ts) and the local adapter (quick-fs.ts) use them instead of the thread pool.
   */
  readonly lstatSync?: typeof lstatSync;
  /** The walk reads folders with it while its synchronous lstats are on (scan.ts readNames). */
  readonly readdirSync?: typeof readdirSync;
  readonly statSync?: typeof statSync;
  readonly linkSync?: typeof linkSync;
  readonly unlinkSync?: typeof unlinkSync;
  readonly utimesSync?: typeof utimesSync;
  readonly renameSync?: typeof renameSync;
  readonly statfs?: typeof statfs;
  /**
   * The file-descriptor calls a download's temp file is written with (temp-file.ts), callback and synchronous
   * forms; without them it is written through `promises.open`'s FileHandle.
   */
  readonly open?: typeof open;
  readonly openSync?: typeof openSync;
  readonly write?: typeof write;
  readonly writeSync?: typeof writeSync;
  readonly ftruncate?: typeof ftruncate;
  readonly ftruncateSync?: typeof ftruncateSync;
  readonly close?: typeof close;
  readonly closeSync?: typeof closeSync;
  readonly fsync?: typeof fsync;
}

type Callback<R> = (err: NodeJS.ErrnoException | null, result: R) => void;

/** `fs.<name>(...args)` through its callback form when the module has it, else through `fs.promises`. */
export function viaCallback<A extends unknown[], R>(
  cb: ((...args: [...A, Callback<R>]) => void) | undefined,
  promised: (...args: A) => Promise<R>,
  ...args: A
): Promise<R> {
  if (cb === undefined) return promised(...args);
  return new Promise<R>((resolve, reject) => cb(...args, (err, r) => (err === null ? resolve(r) : reject(err))));
}
