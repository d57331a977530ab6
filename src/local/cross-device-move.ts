/**
 * Moving a file or folder to another file system, where rename(2) fails with EXDEV: copy, verify, then remove the
 * source, one file at a time. At every instant each file exists completely in at least one place; a failure
 * leaves the rest of the source where it was (never a half-copied file as the only copy).
 */
import { constants } from 'node:fs';
import { SyncError } from '../core/errors.js';
import type { FsModule } from './fs-module.js';
import { sha1File } from './hash.js';

export async function moveAcrossDevices(fs: FsModule, from: string, to: string): Promise<void> {
  const st = await fs.promises.lstat(from);
  if (st.isDirectory()) {
    await fs.promises.mkdir(to, { mode: st.mode & 0o7777 });
    for (const name of (await fs.promises.readdir(from)).map(String)) await moveAcrossDevices(fs, `${from}/${name}`, `${to}/${name}`);
    await fs.promises.utimes(to, st.atime, st.mtime);
    await fs.promises.rmdir(from);
    return;
  }
  if (st.isSymbolicLink()) {
    await fs.promises.symlink(await fs.promises.readlink(from), to);
    await fs.promises.unlink(from);
    return;
  }
  if (!st.isFile()) {
    throw new SyncError({
      code: 'special_file',
      disposition: 'skip',
      message: `${from} is a special file (socket, fifo or device) and cannot be moved to another file system; it was left in place`,
      details: { path: from },
    });
  }
  await fs.promises.copyFile(from, to, constants.COPYFILE_EXCL);
  const [a, b] = await Promise.all([sha1File(fs, from), sha1File(fs, to)]);
  const copied = await fs.promises.lstat(to);
  if (a !== b || copied.size !== st.size) {
    await fs.promises.unlink(to);
    throw new SyncError({
      code: 'copy_verify_failed',
      disposition: 'retry',
      message: `copying ${from} to ${to} produced different bytes; the copy was removed and the original kept; will retry`,
      details: { from, to },
    });
  }
  await fs.promises.utimes(to, st.atime, st.mtime);
  await fs.promises.unlink(from);
}
