/**
 * Content bytes on disk, one immutable file per blob, named by a random id. Every write goes to a temp file and
 * is renamed into place only once complete, so a crash never leaves a half blob under a real id. Content is always
 * streamed, never held whole in memory (a 10 GB upload must work); the one exception is the test actor's small
 * synchronous writes (≤ 64 KiB), which stay in memory when nothing is persisted.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, mkdirSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export interface StoredBlob {
  readonly blobId: string;
  readonly sha1: string;
  readonly sizeBytes: number;
}

/** Counts and hashes what flows through; aborts with `onTooBig` once more than `maxBytes` passed. */
export class HashingCounter extends Transform {
  readonly hash = createHash('sha1');
  sizeBytes = 0;
  constructor(private readonly maxBytes: number = Number.POSITIVE_INFINITY, private readonly onTooBig?: () => Error) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null, data?: Buffer) => void): void {
    this.sizeBytes += chunk.length;
    if (this.sizeBytes > this.maxBytes) {
      cb(this.onTooBig ? this.onTooBig() : new Error('too big'));
      return;
    }
    this.hash.update(chunk);
    cb(null, chunk);
  }
}

/** Small synchronous writes (the test actor) stay in memory when nothing is persisted: file creation dominates their cost. */
const memoryBlobMaxBytes = 64 * 1024;

export class BlobStore {
  private readonly memory = new Map<string, Buffer>();
  private readonly blobsDir: string;
  private readonly tmpDir: string;
  readonly sessionsDir: string;

  constructor(
    readonly rootDir: string,
    private readonly persistent: boolean,
  ) {
    this.blobsDir = join(rootDir, 'blobs');
    this.tmpDir = join(rootDir, 'tmp');
    this.sessionsDir = join(rootDir, 'sessions');
    for (const d of [this.blobsDir, this.tmpDir, this.sessionsDir]) mkdirSync(d, { recursive: true });
    // Leftovers of a crashed upload are never referenced; drop them.
    rmSync(this.tmpDir, { recursive: true, force: true });
    mkdirSync(this.tmpDir, { recursive: true });
  }

  blobPath(blobId: string): string {
    if (!/^[0-9a-f]{32}$/.test(blobId)) throw new Error(`bad blob id ${blobId}`);
    return join(this.blobsDir, blobId);
  }

  sessionPath(sessionId: string): string {
    return join(this.sessionsDir, sessionId.replace(/[^0-9A-Za-z]/g, ''));
  }

  private newId(): string {
    return randomBytes(16).toString('hex');
  }

  /** Stream `source` into a new blob; throws what `onTooBig` makes once more than `maxBytes` arrive. */
  async writeFrom(source: Readable, maxBytes?: number, onTooBig?: () => Error): Promise<StoredBlob> {
    const blobId = this.newId();
    const tmp = join(this.tmpDir, blobId);
    const counter = new HashingCounter(maxBytes, onTooBig);
    try {
      await pipeline(source, counter, createWriteStream(tmp));
    } catch (e) {
      rmSync(tmp, { force: true });
      throw e;
    }
    renameSync(tmp, this.blobPath(blobId));
    return { blobId, sha1: counter.hash.digest('hex'), sizeBytes: counter.sizeBytes };
  }

  writeBufferSync(content: Buffer): StoredBlob {
    const blobId = this.newId();
    if (!this.persistent && content.length <= memoryBlobMaxBytes) this.memory.set(blobId, Buffer.from(content));
    // Written in place: until an item references this id, a torn write is only unreferenced garbage.
    else writeFileSync(this.blobPath(blobId), content);
    return { blobId, sha1: createHash('sha1').update(content).digest('hex'), sizeBytes: content.length };
  }

  /** Adopt a finished file (an upload session's assembled content) as a blob. */
  adopt(path: string): string {
    const blobId = this.newId();
    renameSync(path, this.blobPath(blobId));
    return blobId;
  }

  /** The bytes from `start` to `end` inclusive, streamed. */
  read(blobId: string, start: number, end: number): Readable {
    const mem = this.memory.get(blobId);
    if (mem) return Readable.from([mem.subarray(start, end + 1)]);
    return createReadStream(this.blobPath(blobId), { start, end });
  }

  /** The file holding the blob's bytes, or null for a blob kept in memory. */
  filePath(blobId: string): string | null {
    return this.memory.has(blobId) ? null : this.blobPath(blobId);
  }

  /** Whole content, for small blobs only (test reads, and a zip archive's entries up to 64 KiB). */
  readAllSync(blobId: string): Buffer {
    return this.memory.get(blobId) ?? readFileSync(this.blobPath(blobId));
  }

  remove(blobId: string): void {
    if (this.memory.delete(blobId)) return;
    try {
      unlinkSync(this.blobPath(blobId));
    } catch {
      // already gone: nothing to free
    }
  }
}
