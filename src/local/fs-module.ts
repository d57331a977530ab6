/**
 * The file system the local adapter works on, injected: `node:fs` in production (pass the module itself), memfs
 * in unit tests of the adapter's logic. Only what the adapter uses; every path is absolute.
 */
import type { createReadStream, link, lstat, lstatSync, rename, stat, statfs, unlink, utimes } from 'node:fs';
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
   * The tree walk's synchronous lstat, used only on a local disk (statfs's type, see scan.ts `syncStatFor`) and only
   * while it answers from the cache: 100,000 cached entries cost about 0.5 s of CPU through it against 1.3-2.3 s
   * through the callback form and the thread pool.
   */
  readonly lstatSync?: typeof lstatSync;
  readonly statfs?: typeof statfs;
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
