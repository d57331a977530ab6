/**
 * A file opened for upload (LocalFs.openForUpload, the UploadReader port): the bytes an upload sends are a fixed
 * snapshot, exactly the length fstat'ed when the file was opened (what the request announces: Content-Length, a
 * session's file_size), read from that open file (that inode, whatever is renamed over its path meanwhile). A file
 * that shrinks while it uploads ends before that length; one that grows has bytes beyond it. Each is noticed at the
 * read and thrown as `local_changed` (disposition replan): the request is abandoned at once (a body shorter than
 * its Content-Length would otherwise leave the server waiting for bytes that never come, until the stall timeout),
 * and the engine re-reads the file and uploads what it holds now.
 *
 * `appendOnly` (a file the engine saw only grow: engine/executor.ts growingUpload) relaxes one rule: bytes that
 * appear beyond `size` after the open are not a change of the snapshot, because appending never rewrites
 * [0, size). The upload then sends that prefix, the bytes the file held when it was opened (a log that is
 * appended every 100 ms would otherwise never finish an upload), and the next pass uploads the rest. A file that
 * shrinks is still abandoned, and so is one rewritten in place: its SHA-1 was taken from the planned bytes
 * before the open, and Box refuses a body whose bytes do not match it (Content-MD5, a session's Digest).
 */
import { createHash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { SyncError } from '../core/errors.js';
import { escapeText } from '../core/escape.js';
import type { RelPath } from '../core/model.js';
import type { UploadReader, UploadStat } from '../ports/local-fs.js';
import type { FsModule } from './fs-module.js';

/** The stat the plan was made from (LocalFs.openForUpload's `expect`). */
export interface PlannedStat {
  readonly sizeBytes: number;
  readonly mtimeMs: number;
  readonly inode: number;
  /** Bytes appended after the open are left out of the snapshot instead of abandoning the upload (see above). */
  readonly appendOnly?: boolean;
}

const DEFAULT_CHUNK_BYTES = 1 << 20;

export function sourceChanged(path: RelPath, what: string): SyncError {
  return new SyncError({
    code: 'local_changed',
    disposition: 'replan',
    message: `${escapeText(path)} ${what} while it was being uploaded; the upload was abandoned and the file will be read again`,
    details: { path },
  });
}

/** Opens `abs` for reading and takes its stat; a file that no longer matches `expect` is refused (closed again). */
export async function openUploadReader(fs: FsModule, abs: string, path: RelPath, expect?: PlannedStat): Promise<UploadReader> {
  const fh = await fs.promises.open(abs, 'r');
  try {
    const st = await fh.stat();
    const stat: UploadStat = { dev: String(st.dev), ino: Number(st.ino), mtimeMs: st.mtimeMs, size: Number(st.size) };
    // A growing file may have grown since it was planned (the caller hashes the snapshot itself then).
    const same = expect?.appendOnly === true ? expect.sizeBytes <= stat.size : expect?.sizeBytes === stat.size && expect.mtimeMs === stat.mtimeMs;
    if (expect && (!same || expect.inode !== stat.ino)) {
      throw sourceChanged(path, 'changed since it was planned');
    }
    return new FileUploadReader(fh, path, stat, expect?.appendOnly === true);
  } catch (e) {
    await fh.close().catch(() => undefined);
    throw e;
  }
}

class FileUploadReader implements UploadReader {
  readonly size: number;
  #closed = false;

  constructor(
    readonly fh: FileHandle,
    readonly path: RelPath,
    readonly stat: UploadStat,
    private readonly appendOnly = false,
  ) {
    this.size = stat.size;
  }

  async read(start: number, end: number): Promise<Buffer> {
    if (!(start >= 0 && start <= end && end <= this.size)) throw new RangeError(`read(${start}, ${end}) is outside the ${this.size} bytes of ${this.path}`);
    const buf = Buffer.allocUnsafe(end - start);
    let got = 0;
    while (got < buf.length) {
      const { bytesRead } = await this.fh.read(buf, got, buf.length - got, start + got);
      if (bytesRead === 0) throw sourceChanged(this.path, `shrank (it ended at byte ${start + got})`);
      got += bytesRead;
    }
    if (end === this.size) await this.#assertEnds();
    return buf;
  }

  async *stream(chunkBytes = DEFAULT_CHUNK_BYTES): AsyncGenerator<Buffer> {
    // A file already of another length when the request starts fails before any byte is sent.
    const now = Number((await this.fh.stat()).size);
    if (now < this.size) throw sourceChanged(this.path, `shrank from ${this.size} to ${now} bytes`);
    if (now > this.size && !this.appendOnly) throw sourceChanged(this.path, `grew from ${this.size} to ${now} bytes`);
    for (let at = 0; at < this.size; ) {
      const n = Math.min(chunkBytes, this.size - at);
      const buf = await this.read(at, at + n);
      at += n;
      yield buf;
    }
    if (this.size === 0) await this.#assertEnds();
  }

  async sha1(): Promise<string> {
    const h = createHash('sha1');
    for await (const chunk of this.stream()) h.update(chunk);
    return h.digest('hex');
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.fh.close().catch(() => undefined);
  }

  /** Throws `local_changed` when the file holds bytes beyond `size` (it grew after it was opened). */
  async #assertEnds(): Promise<void> {
    if (this.appendOnly) return;
    const { bytesRead } = await this.fh.read(Buffer.alloc(1), 0, 1, this.size);
    if (bytesRead > 0) throw sourceChanged(this.path, `grew beyond the ${this.size} bytes announced`);
  }
}
