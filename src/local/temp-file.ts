/**
 * A download's temp file (LocalFs.openTemp). Opening, writing, truncating and closing go through quick-fs.ts's gate:
 * synchronous on a local disk while they answer quickly (for a small file each costs far more through the thread
 * pool than it takes: a first mirror of 2,000 small files spent about a tenth of its main thread handing them to the
 * pool), through the pool otherwise. The fsync always goes through the pool: it waits for the disk by design. A
 * module without the file-descriptor calls (a test wrapper) writes through `promises.open`'s FileHandle.
 * Created with O_EXCL: a temp name is never one that exists, so nothing is ever overwritten through it.
 */
import type { FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { TempFile, UrlFill, UrlFillResult } from '../ports/local-fs.js';
import type { FileWorkerPool } from './file-workers.js';
import { classifyFsError } from './fs-errors.js';
import type { FsModule } from './fs-module.js';
import { quickCall, type QuickGate } from './quick-fs.js';

type FdCalls = Required<Pick<FsModule, 'open' | 'openSync' | 'write' | 'writeSync' | 'ftruncate' | 'ftruncateSync' | 'close' | 'closeSync' | 'fsync'>>;

function fdCalls(fs: FsModule): FdCalls | undefined {
  const { open, openSync, write, writeSync, ftruncate, ftruncateSync, close, closeSync, fsync } = fs;
  if (!open || !openSync || !write || !writeSync || !ftruncate || !ftruncateSync || !close || !closeSync || !fsync) return undefined;
  return { open, openSync, write, writeSync, ftruncate, ftruncateSync, close, closeSync, fsync };
}

/** `what` failed on the temp file at `path`: the classified error (a full disk is `disk_full`). */
function failed(e: unknown, what: string, path: string): Error {
  return classifyFsError(e, { action: what, path });
}

/** The four things a temp file does with its open handle: a raw fd through the gate, or a FileHandle. */
interface Handle {
  /** The raw fd (a FileHandle has none here: fillFromUrl needs one). */
  readonly fd?: number;
  /** Write `length` bytes of `chunk` from `offset` at `position`; how many were written (write(2) may take fewer). */
  write(chunk: Buffer, offset: number, length: number, position: number): Promise<number>;
  truncate(): Promise<void>;
  sync(): Promise<void>;
  close(): Promise<void>;
}

/** A raw fd: open, write, truncate and close through the gate, fsync always in the pool (it waits for the disk). */
function fdHandle(fd: number, calls: FdCalls, gate: QuickGate): Handle {
  return {
    fd,
    write: (chunk, offset, length, position) =>
      quickCall<[number, Buffer, number, number, number], number>(gate, calls.write as never, calls.writeSync as never, fd, chunk, offset, length, position),
    truncate: () => quickCall<[number, number], void>(gate, calls.ftruncate as never, calls.ftruncateSync as never, fd, 0),
    sync: () => new Promise<void>((resolve, reject) => calls.fsync(fd, (err) => (err ? reject(err) : resolve()))),
    close: () => quickCall<[number], void>(gate, calls.close as never, calls.closeSync as never, fd),
  };
}

/** A FileHandle (a module with `promises.open` only: the fault-injecting test wrapper). */
function fileHandle(handle: FileHandle): Handle {
  return {
    write: async (chunk, offset, length, position) => (await handle.write(chunk, offset, length, position)).bytesWritten,
    truncate: () => handle.truncate(0),
    sync: () => handle.sync(),
    close: () => handle.close(),
  };
}

/**
 * Create and open the temp file at `path` (absolute) for the file at `label` (what error messages name). With
 * `workers` (threaded, node:fs itself), a body fetched from a URL can be written by a worker thread (fillFromUrl).
 */
export async function openTempFile(fs: FsModule, gate: QuickGate, path: string, label: string, workers?: FileWorkerPool): Promise<TempFile> {
  const calls = fdCalls(fs);
  try {
    if (calls === undefined) return new HandleTempFile(path, label, fileHandle(await fs.promises.open(path, 'wx', 0o666)), fs);
    const fd = await quickCall<[string, string, number], number>(gate, calls.open as never, calls.openSync as never, path, 'wx', 0o666);
    const file = new HandleTempFile(path, label, fdHandle(fd, calls, gate), fs);
    return workers === undefined ? file : new FetchingTempFile(file, fd, workers);
  } catch (e) {
    throw failed(e, 'creating the temp file for', label);
  }
}

class HandleTempFile implements TempFile {
  /** Where the next write goes (fillFromUrl moves it to the end of what the worker wrote). */
  position = 0;
  #closed = false;

  constructor(
    readonly path: string,
    readonly label: string,
    readonly handle: Handle,
    readonly fs: FsModule,
  ) {}

  freeBytes(): Promise<number> {
    const statfs = this.fs.statfs;
    if (statfs === undefined) return Promise.reject(new Error('this file system cannot say how much room it has'));
    return new Promise((resolve, reject) => statfs(dirname(this.path), (err, s) => (err ? reject(err) : resolve(s.bavail * s.bsize))));
  }

  async write(chunk: Buffer): Promise<void> {
    try {
      // write(2) may take fewer bytes than asked (a signal, a quota): the rest is written after them. A write that
      // takes none of a non-empty rest would repeat for ever: it is an error instead.
      for (let done = 0; done < chunk.length; ) {
        const n = await this.handle.write(chunk, done, chunk.length - done, this.position + done);
        if (!(n > 0)) throw Object.assign(new Error(`write made no progress (${String(n)} of ${chunk.length - done} bytes)`), { code: 'EIO' });
        done += n;
      }
      this.position += chunk.length;
    } catch (e) {
      throw failed(e, 'writing the download of', this.label);
    }
  }

  async truncate(): Promise<void> {
    try {
      await this.handle.truncate();
      this.position = 0;
    } catch (e) {
      throw failed(e, 'emptying the download of', this.label);
    }
  }

  async syncAndClose(): Promise<void> {
    try {
      await this.handle.sync();
    } catch (e) {
      await this.close();
      throw failed(e, 'saving the download of', this.label);
    }
    this.#closed = true;
    try {
      await this.handle.close();
    } catch (e) {
      throw failed(e, 'closing the download of', this.label);
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.handle.close().catch(() => undefined);
  }
}

/**
 * A temp file open on the main thread whose body may also be fetched into it by a file worker thread
 * (worker-fetch.ts): the same file, the same fd, so a download can go on either way (download.ts).
 */
class FetchingTempFile implements TempFile {
  constructor(
    readonly file: HandleTempFile,
    readonly fd: number,
    readonly workers: FileWorkerPool,
  ) {}

  get path(): string {
    return this.file.path;
  }

  write(chunk: Buffer): Promise<void> {
    return this.file.write(chunk);
  }

  truncate(): Promise<void> {
    return this.file.truncate();
  }

  syncAndClose(): Promise<void> {
    return this.file.syncAndClose();
  }

  close(): Promise<void> {
    return this.file.close();
  }

  freeBytes(): Promise<number> {
    return this.file.freeBytes();
  }

  async fillFromUrl(f: UrlFill): Promise<UrlFillResult | null> {
    if (!this.workers.threaded) return null;
    const { url, headers, position, limit, stallMs, connectTimeoutMs, deadlineInMs } = f;
    // The pool's own bound on a job comes after the download's deadline and one stall more.
    const r = await this.workers.run(
      { op: 'fetch', path: this.path, label: this.file.label, fd: this.fd, url, headers, position, limit, stallMs, connectTimeoutMs, deadlineInMs },
      { signal: f.signal, onProgress: f.onProgress, timeoutMs: deadlineInMs + stallMs + connectTimeoutMs },
    );
    const got = r.fetched;
    if (got === undefined) return null;
    this.file.position = got.written;
    if (got.failed?.kind === 'write') throw failed(Object.assign(new Error(got.failed.message), { code: got.failed.code }), 'writing the download of', this.file.label);
    return got;
  }
}
