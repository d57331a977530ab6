/**
 * A download's temp file written by the file worker threads (file-workers.ts; LocalFs.openTemp with `fileWorkers`).
 * A small file's bytes are gathered here and `syncAndClose` hands them to a worker in one job with the create
 * (O_EXCL, so nothing is ever overwritten through a temp name), the write, the fsync and the close: the main thread
 * sends one message and gets one answer. A file taken from a zip archive (fillFromArchive) costs the same one
 * message: the worker also reads the entry, inflates it and checks its size and SHA-1. A temp file opened with a
 * `commit` (a new file whose SHA-1 Box listed: LocalFs.openTemp) is also put in place by that job
 * (worker-commit.ts); `committed` says what became of it.
 *
 * A file that grows past FLUSH_BYTES is opened here after all (temp-file.ts, the main thread's path) and written
 * as before: a big file's bytes would cost a copy each to cross to a worker, and a worker frees the buffers it was
 * sent only at its own garbage collections (measured: about 50 MiB more peak RSS on a mirror of 40 MB), while the
 * main thread's write calls are a small share of a big download's work.
 *
 * The file is created by its job, not by openTemp: an error the create would have given (a folder gone, no
 * permission) comes from syncAndClose instead, classified the same way. A caller must not change a chunk's bytes
 * once write() resolved (as with a stream's write): they may still be waiting here.
 */
import { dirname } from 'node:path';
import type { ArchiveEntry, TempFile } from '../ports/local-fs.js';
import { FileJobError, type CommitJob, type FileJob, type FileWorkerPool } from './file-workers.js';
import type { CommitOutcome } from './worker-commit.js';
import { classifyFsError } from './fs-errors.js';
import type { FsModule } from './fs-module.js';

/** Bytes gathered for one job; a file bigger than this is written by the main thread. */
export const FLUSH_BYTES = 256 * 1024;

export class WorkerTempFile implements TempFile {
  /** The fd a failed job left open (close() closes it). */
  #fd: number | null = null;
  #chunks: Buffer[] = [];
  #buffered = 0;
  #closed = false;
  /** The main thread's temp file, once this one grew past FLUSH_BYTES. */
  #here: TempFile | undefined;
  /** With `commit`: what the worker's commit into place did (undefined: not done, the main thread puts it in place). */
  committed: CommitOutcome | undefined;

  constructor(
    readonly path: string,
    readonly label: string,
    readonly pool: FileWorkerPool,
    readonly fs: FsModule,
    /** Opens `path` on the main thread (temp-file.ts openTempFile). */
    readonly openHere: () => Promise<TempFile>,
    /** The job that writes the file also puts it in place (worker-commit.ts). */
    readonly commit?: CommitJob,
  ) {}

  freeBytes(): Promise<number> {
    const statfs = this.fs.statfs;
    if (statfs === undefined) return Promise.reject(new Error('this file system cannot say how much room it has'));
    return new Promise((resolve, reject) => statfs(dirname(this.path), (err, s) => (err ? reject(err) : resolve(s.bavail * s.bsize))));
  }

  async write(chunk: Buffer): Promise<void> {
    if (this.#here !== undefined) return this.#here.write(chunk);
    if (this.#closed) throw classifyFsError(Object.assign(new Error('the temp file is closed'), { code: 'EBADF' }), { action: 'writing the download of', path: this.label });
    if (chunk.length === 0) return;
    this.#chunks.push(chunk);
    this.#buffered += chunk.length;
    if (this.#buffered <= FLUSH_BYTES) return;
    const here = await this.openHere();
    this.#here = here;
    const chunks = this.#take();
    for (const c of chunks) await here.write(c);
  }

  async truncate(): Promise<void> {
    if (this.#here !== undefined) return this.#here.truncate();
    this.#take();
  }

  async syncAndClose(): Promise<void> {
    if (this.#here !== undefined) return this.#here.syncAndClose();
    const chunks = this.#take();
    const data = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
    let at = 0;
    for (const c of chunks) {
      data.set(c, at);
      at += c.length;
    }
    try {
      const r = await this.pool.run({ op: 'put', path: this.path, label: this.label, fd: null, position: 0, data, sync: true, close: true, ...this.#commitFor(this.commit?.sha1) });
      this.committed = r.committed;
    } catch (e) {
      const failed = this.#failed(e, 'saving the download of');
      await this.close();
      throw failed;
    }
    this.#closed = true;
  }

  async fillFromArchive(entry: ArchiveEntry): Promise<{ readonly sha1: string; readonly sizeBytes: number } | { readonly unusable: string }> {
    if (this.#closed || this.#here !== undefined || this.#buffered > 0) return { unusable: 'the temp file is not new' };
    const sha1 = entry.sha1.toLowerCase();
    // One object, built whole (no spreads): this runs for every small file of a zip archive.
    const commit = this.commit !== undefined && this.commit.sha1 === sha1 ? this.commit : undefined;
    const job: FileJob = { op: 'unzip', path: this.path, fd: null, archive: entry.archivePath, offset: entry.localHeaderOffset, compressedSize: entry.compressedSize, method: entry.method, label: this.label, size: entry.sizeBytes, sha1, commit };
    let r;
    try {
      r = await this.pool.run(job);
    } catch (e) {
      // The caller closes it (and removes the temp name): the fd the job got to, if any, is kept for that.
      throw this.#failed(e, 'saving the download of');
    }
    if (r.unusable !== undefined || r.sha1 === undefined || r.size === undefined) return { unusable: r.unusable ?? 'no answer' };
    this.#closed = true;
    this.committed = r.committed;
    return { sha1: r.sha1, sizeBytes: r.size };
  }

  async close(): Promise<void> {
    if (this.#here !== undefined) return this.#here.close();
    if (this.#closed) return;
    this.#closed = true;
    this.#take();
    const fd = this.#fd;
    this.#fd = null;
    if (fd !== null) await this.pool.run({ op: 'close', path: this.path, label: this.label, fd }).catch(() => undefined);
  }

  /** The commit for a job whose bytes must have SHA-1 `sha1` (none when the commit was for other bytes). */
  #commitFor(sha1: string | undefined): { commit?: CommitJob } {
    return this.commit !== undefined && this.commit.sha1 === sha1 ? { commit: this.commit } : {};
  }

  #take(): Buffer[] {
    const chunks = this.#chunks;
    this.#chunks = [];
    this.#buffered = 0;
    return chunks;
  }

  #failed(e: unknown, action: string): Error {
    if (e instanceof FileJobError && e.fd !== null) this.#fd = e.fd;
    return classifyFsError(e, { action, path: this.label });
  }
}
