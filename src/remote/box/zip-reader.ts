/**
 * How yauzl reads a scratch archive (zip-prefetch.ts): through a file reader that serves its small reads from one
 * chunk read ahead. yauzl reads the central directory two reads an entry (its fixed 46 bytes, then the name and
 * extra fields), each a call through libuv's thread pool and back to the main thread: 20,000 files cost 40,000 of
 * them, about 1.2 s of the main thread's time on a first mirror of 20,000 small files (`--cpu-prof`). The central
 * directory is read in order, so reads of up to CHUNK_BYTES now come from one buffer filled by one read.
 *
 * Memory: one buffer of CHUNK_BYTES an open archive (an entry's stream, the fallback path, reads the file itself).
 * Everything yauzl checks (signatures, sizes, ZIP64, the CRC of an entry it streams) is unchanged.
 */
import { close, fstat, open, read } from 'node:fs';
import { Readable } from 'node:stream';
import yauzl from 'yauzl';

/** Bytes read at once for yauzl's small reads. */
const CHUNK_BYTES = 256 * 1024;
/** Bytes read at once for an entry's stream. */
const STREAM_CHUNK_BYTES = 64 * 1024;

class ChunkedFileReader extends yauzl.RandomAccessReader {
  #chunk = Buffer.alloc(0);
  #chunkAt = 0;

  constructor(private readonly fd: number) {
    super();
  }

  /** An entry's bytes (the fallback path): read from the file, which stays open (fs.ReadStream closes its fd when destroyed). */
  override _readStreamForRange(start: number, end: number): Readable {
    const fd = this.fd;
    let at = start;
    return new Readable({
      read() {
        const want = Math.min(STREAM_CHUNK_BYTES, end - at);
        if (want <= 0) return void this.push(null);
        const buf = Buffer.allocUnsafe(want);
        read(fd, buf, 0, want, at, (err, n) => {
          if (err) return this.destroy(err);
          if (n === 0) return void this.push(null);
          at += n;
          this.push(buf.subarray(0, n));
        });
      },
    });
  }

  override read(buffer: Buffer, offset: number, length: number, position: number, callback: (err: Error | null, bytesRead?: number) => void): void {
    const from = position - this.#chunkAt;
    if (from >= 0 && from + length <= this.#chunk.length) {
      this.#chunk.copy(buffer, offset, from, from + length);
      // Never synchronously: yauzl reads the next entry from the callback of this one.
      queueMicrotask(() => callback(null, length));
      return;
    }
    if (length >= CHUNK_BYTES) {
      read(this.fd, buffer, offset, length, position, (err, n) => callback(err, n));
      return;
    }
    const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    read(this.fd, chunk, 0, CHUNK_BYTES, position, (err, n) => {
      if (err) return callback(err);
      this.#chunk = chunk.subarray(0, n);
      this.#chunkAt = position;
      const got = Math.min(length, n);
      chunk.copy(buffer, offset, 0, got);
      callback(null, got);
    });
  }

  override close(callback: (err: Error | null) => void): void {
    this.#chunk = Buffer.alloc(0);
    close(this.fd, (err) => callback(err));
  }
}

/** Opens an archive for reading its entries one at a time (lazyEntries; the file is closed by `zip.close()`). */
export function openArchive(path: string): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) => {
    open(path, 'r', (err, fd) => {
      if (err) return reject(err);
      fstat(fd, (err2, st) => {
        if (err2) return close(fd, () => reject(err2));
        const reader = new ChunkedFileReader(fd);
        yauzl.fromRandomAccessReader(reader, st.size, { lazyEntries: true, autoClose: false, validateEntrySizes: true }, (err3, zip) => {
          if (err3 || !zip) {
            // yauzl holds no reference to a reader it refused: close the file here.
            close(fd, () => reject(err3 ?? new Error('no archive')));
            return;
          }
          resolve(zip);
        });
      });
    });
  });
}
