/**
 * A blob's bytes sent from a few reused buffers: each chunk is read into a buffer of a small pool and goes back to the
 * pool once the socket wrote it (the write's callback). `createReadStream` allocates a new 64 KiB buffer a chunk, and
 * the external memory those buffers add up to makes V8 run a full mark-compact every few tens of MB sent: in a
 * loopback first mirror of 10,000 files / 1 GiB, about half of box-server's CPU went to those collections.
 *
 * Reads are synchronous, 256 KiB at a time (a copy from the page cache: cheaper than a thread-pool round trip a
 * chunk, measured), and the loop yields to the event loop after every chunk, so other requests are served between
 * them. Backpressure as a pipe's: the next chunk is read only once the response took the previous one.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import type { ServerResponse } from 'node:http';

/** Bytes read a call (and written a chunk). */
export const SEND_CHUNK_BYTES = 256 * 1024;
/** Free buffers kept for the next chunks (a buffer still being written is not in the pool). */
const POOL_MAX = 16;
const pool: Buffer[] = [];

function take(): Buffer {
  return pool.pop() ?? Buffer.allocUnsafeSlow(SEND_CHUNK_BYTES);
}

function give(buf: Buffer): void {
  if (pool.length < POOL_MAX) pool.push(buf);
}

/** Waits until `res` can take more (true), or is gone (false). */
function drained(res: ServerResponse): Promise<boolean> {
  if (res.destroyed) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve(!res.destroyed);
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/**
 * Sends bytes `start` to `end` (inclusive) of the file at `path` as `res`'s body and ends it. Throws when the file
 * cannot be read or is shorter than that (the response is then destroyed: the body is cut, never padded); returns
 * quietly when the client went away.
 */
export async function sendFileRange(path: string, start: number, end: number, res: ServerResponse): Promise<void> {
  let fd = -1;
  try {
    fd = openSync(path, 'r');
    let pos = start;
    while (pos <= end) {
      if (res.destroyed) return;
      const buf = take();
      const bytesRead = readSync(fd, buf, 0, Math.min(buf.length, end + 1 - pos), pos);
      if (bytesRead === 0) {
        give(buf);
        throw new Error(`file ended at byte ${pos}, ${end + 1} expected`);
      }
      pos += bytesRead;
      // Back to the pool only once written; a failed write (the socket gone) leaves the buffer to the GC.
      const ok = res.write(buf.subarray(0, bytesRead), (err) => {
        if (!err) give(buf);
      });
      if (!ok) {
        if (!(await drained(res))) return;
      } else {
        await new Promise(setImmediate);
      }
    }
    res.end();
  } catch (e) {
    res.destroy();
    throw e;
  } finally {
    if (fd >= 0) closeSync(fd);
  }
}
