/**
 * A download's temp file (LocalFs.openTemp). Opening, writing, truncating and closing go through quick-fs.ts's gate:
 * synchronous on a local disk while they answer quickly (for a small file each costs far more through the thread
 * pool than it takes: a first mirror of 2,000 small files spent about a tenth of its main thread handing them to the
 * pool), through the pool otherwise. The fsync always goes through the pool: it waits for the disk by design. A
 * module without the file-descriptor calls (a test wrapper) writes through `promises.open`'s FileHandle.
 * Created with O_EXCL: a temp name is never one that exists, so nothing is ever overwritten through it.
 */
import type { FileHandle } from 'node:fs/promises';
import type { TempFile } from '../ports/local-fs.js';
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

/** Create and open the temp file at `path` (absolute) for the file at `label` (what error messages name). */
export async function openTempFile(fs: FsModule, gate: QuickGate, path: string, label: string): Promise<TempFile> {
  const calls = fdCalls(fs);
  try {
    if (calls === undefined) return new HandleTempFile(path, label, await fs.promises.open(path, 'wx', 0o666));
    const fd = await quickCall<[string, string, number], number>(gate, calls.open as never, calls.openSync as never, path, 'wx', 0o666);
    return new FdTempFile(path, label, fd, calls, gate);
  } catch (e) {
    throw failed(e, 'creating the temp file for', label);
  }
}

class FdTempFile implements TempFile {
  #position = 0;
  #closed = false;

  constructor(
    readonly path: string,
    readonly label: string,
    readonly fd: number,
    readonly calls: FdCalls,
    readonly gate: QuickGate,
  ) {}

  async write(chunk: Buffer): Promise<void> {
    try {
      // write(2) may take fewer bytes than asked (a signal, a quota): the rest is written after them.
      for (let done = 0; done < chunk.length; ) {
        done += await quickCall<[number, Buffer, number, number, number], number>(
          this.gate,
          this.calls.write as never,
          this.calls.writeSync as never,
          this.fd,
          chunk,
          done,
          chunk.length - done,
          this.#position + done,
        );
      }
      this.#position += chunk.length;
    } catch (e) {
      throw failed(e, 'writing the download of', this.label);
    }
  }

  async truncate(): Promise<void> {
    try {
      await quickCall<[number, number], void>(this.gate, this.calls.ftruncate as never, this.calls.ftruncateSync as never, this.fd, 0);
      this.#position = 0;
    } catch (e) {
      throw failed(e, 'emptying the download of', this.label);
    }
  }

  async syncAndClose(): Promise<void> {
    try {
      await new Promise<void>((resolve, reject) => this.calls.fsync(this.fd, (err) => (err ? reject(err) : resolve())));
    } catch (e) {
      await this.close();
      throw failed(e, 'saving the download of', this.label);
    }
    this.#closed = true;
    try {
      await quickCall<[number], void>(this.gate, this.calls.close as never, this.calls.closeSync as never, this.fd);
    } catch (e) {
      throw failed(e, 'closing the download of', this.label);
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await quickCall<[number], void>(this.gate, this.calls.close as never, this.calls.closeSync as never, this.fd).catch(() => undefined);
  }
}

class HandleTempFile implements TempFile {
  #position = 0;
  #closed = false;

  constructor(
    readonly path: string,
    readonly label: string,
    readonly handle: FileHandle,
  ) {}

  async write(chunk: Buffer): Promise<void> {
    try {
      for (let done = 0; done < chunk.length; ) done += (await this.handle.write(chunk, done, chunk.length - done, this.#position + done)).bytesWritten;
      this.#position += chunk.length;
    } catch (e) {
      throw failed(e, 'writing the download of', this.label);
    }
  }

  async truncate(): Promise<void> {
    try {
      await this.handle.truncate(0);
      this.#position = 0;
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
