/**
 * The bytes an upload sends are a fixed snapshot: exactly the length stat'ed before the request announced it
 * (Content-Length, a session's file_size), read from the file that was stat'ed (same inode). A file that shrinks
 * while it uploads ends before that length; one that grows has bytes beyond it; one replaced by a rename is
 * another inode. Each is noticed at the read and thrown as `local_changed` (disposition replan): the request is
 * abandoned at once (a body shorter than its Content-Length would otherwise leave the server waiting for bytes
 * that never come, until the stall timeout), and the engine re-reads the file and uploads what it holds now.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { SyncError } from '../../core/errors.js';

export interface SourceSnapshot {
  readonly sizeBytes: number;
  readonly mtimeMs: number;
  /** The inode stat'ed with the size; the file opened for reading must be this one. */
  readonly inode?: number;
}

export function sourceChanged(path: string, what: string): SyncError {
  return new SyncError({
    code: 'local_changed',
    disposition: 'replan',
    message: `${path} ${what} while it was being uploaded; the upload was abandoned and the file will be read again`,
  });
}

/** Opens the source for a fixed-length read, refusing a file that is no longer the one stat'ed. */
export async function openSource(path: string, snap: SourceSnapshot): Promise<FileHandle> {
  const fh = await open(path, 'r');
  try {
    const st = await fh.stat();
    if (snap.inode !== undefined && st.ino !== snap.inode) throw sourceChanged(path, 'was replaced');
    if (st.size < snap.sizeBytes) throw sourceChanged(path, `shrank from ${snap.sizeBytes} to ${st.size} bytes`);
    if (st.size > snap.sizeBytes) throw sourceChanged(path, `grew from ${snap.sizeBytes} to ${st.size} bytes`);
    return fh;
  } catch (e) {
    await fh.close();
    throw e;
  }
}

/** Reads exactly `size` bytes at `offset`; the file ending before them is a change (`local_changed`). */
export async function readExact(fh: FileHandle, path: string, offset: number, size: number): Promise<Buffer> {
  const buf = Buffer.allocUnsafe(size);
  let got = 0;
  while (got < size) {
    const { bytesRead } = await fh.read(buf, got, size - got, offset + got);
    if (bytesRead === 0) throw sourceChanged(path, `shrank (it ended at byte ${offset + got})`);
    got += bytesRead;
  }
  return buf;
}

/** Throws `local_changed` when the file holds bytes beyond `size` (it grew after it was stat'ed). */
export async function assertEndsAt(fh: FileHandle, path: string, size: number): Promise<void> {
  const { bytesRead } = await fh.read(Buffer.alloc(1), 0, 1, size);
  if (bytesRead > 0) throw sourceChanged(path, `grew beyond the ${size} bytes announced`);
}

/** The whole snapshot in chunks of up to `chunkBytes`, then the check that nothing follows it. */
export async function* readSnapshot(path: string, snap: SourceSnapshot, chunkBytes: number): AsyncGenerator<Buffer> {
  const fh = await openSource(path, snap);
  try {
    for (let at = 0; at < snap.sizeBytes; ) {
      const n = Math.min(chunkBytes, snap.sizeBytes - at);
      const buf = await readExact(fh, path, at, n);
      at += n;
      yield buf;
    }
    await assertEndsAt(fh, path, snap.sizeBytes);
  } finally {
    await fh.close();
  }
}
