/**
 * Zip downloads for many small files (Box's `POST /zip_downloads`): one archive brings up to 10,000 files for two
 * API calls, where one download each costs an API call. Box's per-user limit (about 1,000 calls a minute) is what
 * bounds a first mirror on the real service, so this is the one large lever there.
 *
 * The engine announces the downloads of a plan (RemoteStore.prefetch), and in a full pass planned in windows those
 * the next window will most likely make while the current one runs (engine/window-prefetch.ts); when at least
 * `minFiles` of them are small files with a known SHA-1, they are asked for as archives of at most 10,000 files
 * and `maxArchiveBytes`. Each archive is streamed to a scratch file (never held in memory), then read with yauzl
 * (central directory, ZIP64, data descriptors, CRC checked). A later `download()` of one of those files takes its entry from the archive and
 * writes it through the same temp file, SHA-1 and size checks as a single download, so the local side (guards,
 * commit, mtime) is the same code. A temp file written by a worker thread (TempFile.fillFromArchive, config
 * `http.fileWorkers`) takes the entry from the scratch archive itself, with the same size and SHA-1 checks, so the
 * main thread neither reads, inflates, hashes nor writes it; with `writeUrlTo` (the same workers) the archive's body is
 * written to the scratch file there too, with the same bound on its size. Whatever goes wrong falls back to the file's own download, silently for the
 * user but logged: a refused zip (an enterprise policy: 403), an archive cut mid-stream, a missing entry, an
 * entry whose bytes do not match the listing, a name the archive does not hold.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type yauzl from 'yauzl';
import { isSyncError } from '../../core/errors.js';
import type { RemoteId } from '../../core/model.js';
import type { Logger } from '../../logger.js';
import type { ArchiveEntry, WriteUrlToFile } from '../../ports/local-fs.js';
import type { DownloadRequest, DownloadResult, PrefetchFile, PrefetchHandle } from '../../ports/remote-store.js';
import type { BoxHttp } from './http.js';
import { transferDeadlineMs } from './download.js';
import { openArchive } from './zip-reader.js';

export interface ZipPrefetchOptions {
  /** Where archives are written while they are read (the state dir's `zip/`); removed when released. */
  readonly scratchDir: string;
  /** Fewest small files that make an archive worth asking for (default 40). */
  readonly minFiles?: number;
  /** Largest file taken into an archive (default 1 MiB). */
  readonly maxFileBytes?: number;
  /** Most bytes of files in one archive (default 64 MiB). */
  readonly maxArchiveBytes?: number;
  /**
   * Writes an archive's body to its scratch file on a file worker thread (local/worker-fetch.ts), so its bytes never
   * reach this thread (config `http.fileWorkers`); without it, or for a URL the proxy serves, they are streamed here.
   */
  readonly writeUrlTo?: WriteUrlToFile;
}

export interface ZipPrefetchDeps extends ZipPrefetchOptions {
  readonly http: BoxHttp;
  readonly apiUrl: string;
  readonly logger: Logger;
  readonly nowMs: () => number;
}

/** Box: at most 10,000 files in one archive. */
export const ZIP_MAX_FILES = 10_000;
const DEFAULT_MIN_FILES = 40;
const DEFAULT_MAX_FILE_BYTES = 1024 * 1024;
const DEFAULT_MAX_ARCHIVE_BYTES = 64 * 1024 * 1024;
/**
 * A prefetch of more than ZIP_PART_MIN_BYTES is asked for as about ZIP_PARTS archives (each still within the caps
 * above), fetched one after the other: the files of one are checked and written while the next one is made and
 * downloaded, where one archive of everything held every file back until its last byte had come. Smaller prefetches
 * (small files: a window of a big first mirror) stay one archive, so the API calls a file do not grow.
 */
export const ZIP_PARTS = 4;
export const ZIP_PART_MIN_BYTES = 8 * 1024 * 1024;
/** After Box refuses zip downloads (403: a policy), files are downloaded one by one for this long. */
const REFUSED_BACKOFF_MS = 60 * 60_000;

type Opener = () => Promise<Readable>;

/** An entry of a read archive: its stream, and where it is for a temp file that reads it itself (fillFromArchive). */
interface Found {
  readonly open: Opener;
  readonly where: Omit<ArchiveEntry, 'sizeBytes' | 'sha1'>;
}

interface Slot {
  readonly file: PrefetchFile;
  /** The entry once the archive is read; null: download the file alone. */
  readonly ready: Promise<Found | null>;
}

const NOOP: PrefetchHandle = { release: () => undefined };

export class ZipPrefetcher {
  readonly #slots = new Map<RemoteId, Slot>();
  #refusedUntilMs = 0;
  #swept: Promise<void> | undefined;
  readonly #minFiles: number;
  readonly #maxFileBytes: number;
  readonly #maxArchiveBytes: number;
  readonly #log: Logger;

  constructor(private readonly deps: ZipPrefetchDeps) {
    this.#minFiles = Math.max(1, deps.minFiles ?? DEFAULT_MIN_FILES);
    this.#maxFileBytes = deps.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
    this.#maxArchiveBytes = deps.maxArchiveBytes ?? DEFAULT_MAX_ARCHIVE_BYTES;
    this.#log = deps.logger.child({ component: 'box-zip' });
  }

  /**
   * The archives a killed run left in the scratch dir are removed before this process writes its first one (the
   * state-dir lock keeps any other process out of it), so a kill costs at most one run's archives of disk.
   */
  #sweep(): Promise<void> {
    this.#swept ??= sweepScratch(this.deps.scratchDir, this.#log);
    return this.#swept;
  }

  prefetch(files: readonly PrefetchFile[], signal?: AbortSignal): PrefetchHandle {
    if (this.deps.nowMs() < this.#refusedUntilMs) return NOOP;
    const picked = files.filter((f) => f.sha1 !== null && f.sizeBytes > 0 && f.sizeBytes <= this.#maxFileBytes && !this.#slots.has(f.id));
    if (picked.length < this.#minFiles) return NOOP;
    const archives: Archive[] = [];
    let batch: PrefetchFile[] = [];
    let bytes = 0;
    const total = picked.reduce((sum, f) => sum + f.sizeBytes, 0);
    const archiveBytes = Math.min(this.#maxArchiveBytes, Math.max(ZIP_PART_MIN_BYTES, Math.ceil(total / ZIP_PARTS)));
    const flush = (): void => {
      if (batch.length > 0) archives.push(new Archive({ ...this.deps, swept: () => this.#sweep() }, this.#log, batch, () => this.#refused()));
      batch = [];
      bytes = 0;
    };
    for (const f of picked) {
      if (batch.length >= ZIP_MAX_FILES || (batch.length > 0 && bytes + f.sizeBytes > archiveBytes)) flush();
      batch.push(f);
      bytes += f.sizeBytes;
    }
    flush();
    for (const a of archives) for (const f of a.files) this.#slots.set(f.id, { file: f, ready: a.opener(f.id) });
    // One archive at a time: the first entries are ready as soon as the first archive is read.
    let chain: Promise<void> = Promise.resolve();
    for (const a of archives) chain = chain.then(() => a.fetch(signal));
    void chain;
    this.#log.info({ files: picked.length, archives: archives.length }, `asking Box for ${archives.length} zip archive(s) of ${picked.length} small files`);
    return {
      release: () => {
        let unused = 0;
        for (const a of archives) {
          for (const f of a.files) {
            if (this.#slots.get(f.id)?.ready !== a.opener(f.id)) continue;
            this.#slots.delete(f.id);
            unused += 1;
          }
          a.close();
        }
        if (unused > 0) this.#log.debug({ unused }, `${unused} file(s) of the zip archive(s) were not downloaded from them`);
      },
    };
  }

  /** Whether a prefetch holds this file (RemoteStore.prefetched): its download() takes it from an archive. */
  has(id: RemoteId): boolean {
    return this.#slots.has(id);
  }

  #refused(): void {
    this.#refusedUntilMs = this.deps.nowMs() + REFUSED_BACKOFF_MS;
  }

  /**
   * The download of a prefetched file from its archive, through the request's temp file, with the same SHA-1 and
   * size checks as a single download; null when it must be downloaded alone (and the temp file is empty again).
   */
  async download(req: DownloadRequest): Promise<DownloadResult | null> {
    if (req.versionId !== undefined) return null;
    const slot = this.#slots.get(req.id);
    if (slot === undefined || slot.file.sha1 !== req.expectSha1) return null;
    this.#slots.delete(req.id);
    const found = await slot.ready;
    if (found === null) return null;
    const limit = req.expectSizeBytes ?? slot.file.sizeBytes;
    // A temp file written by a worker thread takes the entry from the archive itself (read, inflated, checked,
    // written, fsynced, closed there): the main thread only asks. Its own failure to write ends this download.
    // The streamed path is a function of its own: this one, run for every small file, suspends with a small frame.
    if (req.destFile.fillFromArchive === undefined || slot.file.sha1 === null) return this.#stream(req, found, limit);
    req.signal?.throwIfAborted();
    const w = found.where;
    const got = await req.destFile.fillFromArchive({ archivePath: w.archivePath, localHeaderOffset: w.localHeaderOffset, compressedSize: w.compressedSize, method: w.method, sizeBytes: limit, sha1: slot.file.sha1 });
    if ('sha1' in got) {
      req.onProgress?.({ doneBytes: got.sizeBytes, totalBytes: got.sizeBytes });
      return got;
    }
    this.#log.debug({ id: req.id, why: got.unusable }, 'the worker thread could not use the archive entry; reading it here');
    return this.#stream(req, found, limit);
  }

  /** The entry read, hashed and written here (no worker thread, or one that could not use it). */
  async #stream(req: DownloadRequest, found: Found, limit: number): Promise<DownloadResult | null> {
    const hash = createHash('sha1');
    let written = 0;
    try {
      const source = await found.open();
      for await (const chunk of source as AsyncIterable<Buffer>) {
        req.signal?.throwIfAborted();
        written += chunk.length;
        if (written > limit) {
          source.destroy();
          throw new Error(`the archive entry holds more than the ${limit} bytes Box listed`);
        }
        hash.update(chunk);
        await req.destFile.write(chunk);
      }
      const sha1 = hash.digest('hex');
      if (written !== limit || sha1 !== req.expectSha1) throw new Error(`the archive entry does not match the listing (${written} bytes, SHA-1 ${sha1})`);
      await req.destFile.syncAndClose();
      req.onProgress?.({ doneBytes: written, totalBytes: written });
      return { sha1, sizeBytes: written };
    } catch (e) {
      if (req.signal?.aborted === true) throw e;
      if (isSyncError(e) && (e.code === 'disk_full' || e.code === 'local_io')) throw e;
      this.#log.warn({ id: req.id, err: e instanceof Error ? e.message : String(e) }, 'a file of a zip archive could not be used; downloading it alone');
      await req.destFile.truncate();
      return null;
    }
  }
}

/** One archive: its files, the request and the scratch file, and each file's entry once read. */
class Archive {
  readonly #openers = new Map<RemoteId, Promise<Found | null>>();
  readonly #resolvers = new Map<RemoteId, (o: Found | null) => void>();
  #zip: yauzl.ZipFile | undefined;
  #path: string | undefined;
  #closed = false;

  constructor(
    private readonly deps: ZipPrefetchDeps & { readonly swept: () => Promise<void> },
    private readonly log: Logger,
    readonly files: readonly PrefetchFile[],
    private readonly onRefused: () => void,
  ) {
    for (const f of files) this.#openers.set(f.id, new Promise((resolve) => this.#resolvers.set(f.id, resolve)));
  }

  opener(id: RemoteId): Promise<Found | null> {
    return this.#openers.get(id) ?? Promise.resolve(null);
  }

  #settle(found: ReadonlyMap<RemoteId, yauzl.Entry>): void {
    for (const [id, resolve] of this.#resolvers) {
      const entry = found.get(id);
      const zip = this.#zip;
      const archivePath = this.#path;
      resolve(
        entry === undefined || zip === undefined || archivePath === undefined || this.#closed
          ? null
          : {
              open: () => openEntry(zip, entry),
              where: { archivePath, localHeaderOffset: entry.relativeOffsetOfLocalHeader, compressedSize: entry.compressedSize, method: entry.isEncrypted() ? -1 : entry.compressionMethod },
            },
      );
    }
    this.#resolvers.clear();
  }

  async fetch(signal?: AbortSignal): Promise<void> {
    if (this.#closed) return this.#settle(new Map());
    try {
      const names = await this.#create(signal);
      if (names === null) return this.#settle(new Map());
      const found = await this.#readEntries(names);
      const missing = this.files.length - found.size;
      if (missing > 0) this.log.warn({ missing }, `${missing} file(s) were missing from the zip archive; they are downloaded one by one`);
      this.#settle(found);
    } catch (e) {
      this.log.warn({ err: e instanceof Error ? e.message : String(e) }, `a zip archive of ${this.files.length} files failed; they are downloaded one by one`);
      this.#settle(new Map());
    }
  }

  /** POST /zip_downloads, then the archive to a scratch file; the name each file has in it, by name. */
  async #create(signal?: AbortSignal): Promise<Map<string, RemoteId> | null> {
    const { http, apiUrl } = this.deps;
    let body: unknown;
    try {
      const res = await http.request<unknown>({
        method: 'POST',
        url: `${apiUrl}/zip_downloads`,
        json: { items: this.files.map((f) => ({ type: 'file', id: f.id })), download_file_name: 'boxsync' },
        accept: [200, 201, 202],
        ...(signal ? { signal } : {}),
      });
      body = res.body;
    } catch (e) {
      if (signal?.aborted === true) throw e;
      const status = isSyncError(e) ? e.details.status : undefined;
      if (status === 403) this.onRefused();
      this.log.info({ status, err: e instanceof Error ? e.message : String(e) }, 'Box refused a zip download; the files are downloaded one by one');
      return null;
    }
    const answer = parseZipAnswer(body, this.files);
    const url = new URL(answer.downloadUrl);
    const cap = this.files.reduce((s, f) => s + f.sizeBytes, 0) * 2 + this.files.length * 1024 + 1024 * 1024;
    const direct = this.deps.writeUrlTo === undefined ? undefined : http.directGet(url.href);
    if (this.deps.writeUrlTo !== undefined && direct !== undefined) {
      const written = await this.#writeOnThread(this.deps.writeUrlTo, url.href, direct, cap, signal);
      if (written !== undefined) return written ? answer.names : null;
    }
    const res = await http.stream({ url: url.href, auth: false, accept: [200], ...(signal ? { signal } : {}) });
    if (this.#closed) {
      // Released while Box answered (a window's lookahead that was not needed): nothing is written.
      res.body.destroy();
      return null;
    }
    await this.deps.swept();
    await mkdir(this.deps.scratchDir, { recursive: true, mode: 0o700 });
    const path = this.#newPath();
    let seen = 0;
    const bounded = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        seen += chunk.length;
        if (seen > cap) cb(new Error(`the zip archive is larger than ${cap} bytes for files of ${cap} at most; refused`));
        else cb(null, chunk);
      },
    });
    try {
      await pipeline(res.body, bounded, createWriteStream(path, { mode: 0o600 }), signal ? { signal } : {});
    } finally {
      // Released while the archive was written: close() found no file to remove yet, so it is removed here.
      if (this.#closed) await rm(path, { force: true });
    }
    if (this.#closed) return null;
    return answer.names;
  }

  /** A new scratch file's name (after the sweep), kept as this archive's. */
  #newPath(): string {
    const path = join(this.deps.scratchDir, `${randomBytes(8).toString('hex')}.zip`);
    this.#path = path;
    return path;
  }

  /**
   * The archive's body written to its scratch file by a worker thread: true once whole, false when released
   * meanwhile (nothing kept), undefined when no thread could (nothing written: this thread streams it). A body cut,
   * too big or refused throws, as here.
   */
  async #writeOnThread(
    writeUrlTo: WriteUrlToFile,
    url: string,
    direct: { readonly headers: Readonly<Record<string, string>>; readonly stallMs: number; readonly connectTimeoutMs: number },
    cap: number,
    signal: AbortSignal | undefined,
  ): Promise<boolean | undefined> {
    if (this.#closed) return false;
    await this.deps.swept();
    await mkdir(this.deps.scratchDir, { recursive: true, mode: 0o700 });
    const path = this.#newPath();
    let got;
    try {
      // The deadline of a download of its size (download.ts's: 5 minutes, then 64 KiB a second).
      got = await writeUrlTo({ url, headers: direct.headers, path, position: 0, limit: cap, stallMs: direct.stallMs, connectTimeoutMs: direct.connectTimeoutMs, deadlineInMs: transferDeadlineMs(cap), signal });
    } finally {
      // Released while the archive was written: close() found no file to remove yet, so it is removed here.
      if (this.#closed) await rm(path, { force: true });
    }
    if (this.#closed) return false;
    if (got === null) {
      this.#path = undefined;
      await rm(path, { force: true });
      return undefined;
    }
    signal?.throwIfAborted();
    if (got.failed !== undefined) throw new Error(`the zip archive's download failed (${got.failed.kind}: ${got.failed.message})`);
    if (got.status !== 200) throw new Error(`the zip archive's download answered ${got.status}`);
    if (got.total > 0 && got.written < got.total) throw new Error(`the zip archive's body ended after ${got.written} of ${got.total} bytes`);
    return true;
  }

  async #readEntries(names: ReadonlyMap<string, RemoteId>): Promise<Map<RemoteId, yauzl.Entry>> {
    const path = this.#path;
    if (path === undefined) return new Map();
    // Its central directory is read a chunk at a time, not two reads an entry (zip-reader.ts).
    const zip = await openArchive(path);
    if (this.#closed) {
      zip.close();
      return new Map();
    }
    this.#zip = zip;
    const found = new Map<RemoteId, yauzl.Entry>();
    await new Promise<void>((resolve, reject) => {
      zip.on('error', reject);
      zip.on('end', () => resolve());
      zip.on('entry', (entry: yauzl.Entry) => {
        const id = names.get(entry.fileName);
        if (id !== undefined && !found.has(id)) found.set(id, entry);
        zip.readEntry();
      });
      zip.readEntry();
    });
    return found;
  }

  close(): void {
    this.#closed = true;
    this.#settle(new Map());
    this.#zip?.close();
    this.#zip = undefined;
    const path = this.#path;
    if (path !== undefined) void rm(path, { force: true }).catch(() => undefined);
  }
}

/** A scratch archive's name (`randomBytes(8)` in hex): the only files the sweep removes. */
const SCRATCH_NAME = /^[0-9a-f]{16}\.zip$/;

async function sweepScratch(dir: string, log: Logger): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const stale = names.filter((n) => SCRATCH_NAME.test(n));
  await Promise.all(stale.map((n) => rm(join(dir, n), { force: true }).catch(() => undefined)));
  if (stale.length > 0) log.info({ removed: stale.length }, `removed ${stale.length} zip archive(s) an earlier run left in the scratch dir`);
}

function openEntry(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Readable> {
  return new Promise((resolve, reject) => zip.openReadStream(entry, (err, s) => (err || !s ? reject(err ?? new Error('no entry stream')) : resolve(s))));
}

/**
 * Box's answer to POST /zip_downloads, validated: an http(s) `download_url`, and `name_conflicts` pairs that give
 * the name a file has in the archive when two requested files share a name. Each file's archive name maps back to
 * its id (a name the answer does not account for is simply not found, and that file is downloaded alone).
 */
export function parseZipAnswer(body: unknown, files: readonly PrefetchFile[]): { downloadUrl: string; names: Map<string, RemoteId> } {
  if (typeof body !== 'object' || body === null) throw new Error('the zip download answer is not an object');
  const o = body as Record<string, unknown>;
  const url = o['download_url'];
  if (typeof url !== 'string' || !/^https?:\/\//.test(url)) throw new Error('the zip download answer has no http(s) download_url');
  const renamed = new Map<RemoteId, string>();
  const conflicts = Array.isArray(o['name_conflicts']) ? o['name_conflicts'] : [];
  for (const group of conflicts) {
    if (!Array.isArray(group)) continue;
    for (const c of group) {
      if (typeof c !== 'object' || c === null) continue;
      const { id, download_name: name } = c as Record<string, unknown>;
      if (typeof id === 'string' && typeof name === 'string' && name !== '') renamed.set(id as RemoteId, name);
    }
  }
  const names = new Map<string, RemoteId>();
  const taken = new Set<string>();
  for (const f of files) {
    const name = renamed.get(f.id) ?? f.name;
    // Two files under one name in the archive cannot be told apart: neither is taken from it.
    if (taken.has(name)) {
      names.delete(name);
      continue;
    }
    taken.add(name);
    names.set(name, f.id);
  }
  return { downloadUrl: url, names };
}
