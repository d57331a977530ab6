/**
 * The file system the local adapter works on, injected: `node:fs` in production (pass the module itself), memfs
 * in unit tests of the adapter's logic. Only what the adapter uses; every path is absolute.
 */
import type { createReadStream } from 'node:fs';
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
}
