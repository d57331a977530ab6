/**
 * LocalFs over an injected file system (node:fs in production, memfs in unit tests).
 *
 * Containment: RelPaths with '', '.', '..' or empty segments are refused, and every write re-checks that each
 * folder on the way from the root is a real folder, not a symlink, so nothing is ever written, moved or
 * trashed outside the root. Replacing writes go through a temp file in the target's folder (see temp-name.ts)
 * that is fsynced, then put in place only if the LocalGuard still holds:
 * - guard 'absent': link(2) the temp to the target, which fails instead of clobbering a file that appeared
 *   meanwhile; then the temp name is unlinked. (File systems without hard links fall back to re-check + rename.)
 * - guard 'file': re-check size, mtime and inode, then rename(2) over it. The window between the check and the
 *   rename is a few microseconds; it cannot be closed on Linux without kernel help.
 * - guard 'folder': refused (a folder is never replaced by a file; the planner trashes it first).
 * On any failure the temp file is removed and the target is left as it was. The folders of those renames (and of
 * moves) are fsynced by durable(), each once however many renames it saw: the engine calls it before the journal
 * records the renames as synced (engine/commit-batch.ts).
 */
import { basename, dirname, join } from 'node:path';
import type { Logger } from 'pino';
import { SyncError } from '../core/errors.js';
import { asRelPath, type LocalEntry, type RelPath } from '../core/model.js';
import type { LocalGuard } from '../core/operations.js';
import type { LocalFs, RootState, ScanOptions, TempCommit, TempFile, UploadReader } from '../ports/local-fs.js';
import { assertParentsInside, firstBadAncestor } from './containment.js';
import { classifyFsError, errnoOf } from './fs-errors.js';
import { viaCallback, type FsModule } from './fs-module.js';
import { checkGuard, isGone, localChanged, lstatOrUndefined, nameTwinAppeared } from './guard.js';
import { NameTwins } from './name-twins.js';
import { onLocalDisk, QUICK_CALL_MAX_MS, QUICK_CALL_OFF_MS, QuickGate, quickFs } from './quick-fs.js';
import { sha1File } from './hash.js';
import type { LocalTrash } from './local-trash.js';
import { entryFromStats, scanTree } from './scan.js';
import { openTempFile } from './temp-file.js';
import type { FileWorkerPool } from './file-workers.js';
import { FLUSH_BYTES, WorkerTempFile } from './worker-temp-file.js';
import type { CommitOutcome } from './worker-commit.js';
import type { ReplaceGuard } from './worker-replace.js';
import { openUploadReader, type PlannedStat } from './upload-reader.js';
import { probePath } from './probe.js';
import { isTempName, TempNames } from './temp-name.js';

export interface LocalFsOptions {
  /** Absolute path of the sync root. */
  readonly rootPath: string;
  readonly fs: FsModule;
  readonly trash: LocalTrash;
  readonly logger?: Logger;
  /**
   * Other work must get turns while this root downloads (the daemon: watcher events, live changes): the quick calls
   * answer on the next turn of the event loop (QuickGateOptions.answerNextTurn). Default false (`sync --once`).
   */
  readonly liveChanges?: boolean;
  /**
   * The state dir's key for temp names (temp-name.ts TempNames, kept in the journal): leftover temp files made
   * with it are removed by a full scan; others with the prefix are reported and left alone. Default: a key of
   * this process alone.
   */
  readonly tempKey?: string;
  /**
   * Worker threads that write download temp files (config `fileWorkers`; file-workers.ts): only with node:fs
   * itself, whose calls the threads make. None: the main thread writes them (temp-file.ts).
   */
  readonly fileWorkers?: FileWorkerPool | undefined;
}

/** errnos of link(2) that mean "this file system has no hard links", not "the target exists". */
const NO_HARDLINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EMLINK']);

export class DiskLocalFs implements LocalFs {
  readonly rootPath: string;
  /** The module with quick synchronous metadata calls on a local disk (quick-fs.ts); `#rawFs` as given. */
  readonly #fs: FsModule;
  readonly #rawFs: FsModule;
  readonly #gate: QuickGate;
  /** Whether the root is on a local disk (onLocalDisk): asked at the start and again by each full scan. */
  #localDisk: Promise<boolean>;
  #lastLocalDisk: boolean | undefined;
  readonly #trash: LocalTrash;
  readonly #logger: Logger | undefined;
  readonly #twins: NameTwins;
  readonly #temps: TempNames;
  /** Folders with a rename of ours not yet fsynced (see durable()). */
  readonly #unsynced = new Set<string>();
  readonly #fileWorkers: FileWorkerPool | undefined;
  /** Temp files whose worker thread commits them into place (worker-commit.ts), until commitTemp or discardTemp. */
  readonly #workerCommits = new Map<string, WorkerTempFile>();

  constructor(opts: LocalFsOptions) {
    if (!opts.rootPath.startsWith('/')) throw new Error(`the sync root must be an absolute path, got "${opts.rootPath}"`);
    this.rootPath = opts.rootPath.length > 1 ? opts.rootPath.replace(/\/+$/, '') : opts.rootPath;
    this.#absPrefix = join(this.rootPath, '_').slice(0, -1);
    this.#rawFs = opts.fs;
    this.#fileWorkers = opts.fileWorkers;
    // Off until statfs says the root is on a local disk (a call or two before that goes through the pool).
    this.#gate = new QuickGate(false, QUICK_CALL_MAX_MS, { offForMs: QUICK_CALL_OFF_MS, answerNextTurn: opts.liveChanges === true });
    this.#localDisk = this.#askLocalDisk();
    this.#fs = quickFs(opts.fs, this.#gate);
    this.#trash = opts.trash;
    this.#logger = opts.logger;
    this.#twins = new NameTwins(this.#fs);
    this.#temps = new TempNames(opts.tempKey);
  }

  /** join(rootPath, NAME) without NAME: what abs() puts before a checked path. */
  readonly #absPrefix: string;

  abs(path: RelPath): string {
    assertRelPath(path);
    // A checked path has no empty, "." or ".." segment: the root's joined prefix and the path are what join() gives.
    return `${this.#absPrefix}${path}`;
  }

  /** statfs of the root; the gate follows a changed answer (a file system mounted over the root since). */
  #askLocalDisk(): Promise<boolean> {
    return onLocalDisk(this.#rawFs, this.rootPath).then((local) => {
      if (local !== this.#lastLocalDisk) this.#gate.set(local);
      this.#lastLocalDisk = local;
      return local;
    });
  }

  scan(opts: ScanOptions): AsyncIterable<readonly LocalEntry[]> {
    if (opts.under !== undefined) assertRelPath(opts.under);
    // A full scan asks statfs again; the daemon's small scans after each watcher event use the last answer.
    if (opts.under === undefined) this.#localDisk = this.#askLocalDisk();
    // The walk times its own synchronous lstats, a window at a time (scan.ts).
    return scanTree({
      fs: this.#rawFs,
      rootPath: this.rootPath,
      abs: (p) => (p === '' ? this.rootPath : this.abs(p)),
      opts,
      localDisk: this.#localDisk,
      isOurTemp: (name) => this.#temps.isOurs(name),
    });
  }

  /** undefined also when a folder on the way is a symlink: such a path is not part of the tree. */
  async stat(path: RelPath): Promise<LocalEntry | undefined> {
    try {
      if ((await firstBadAncestor(this.#fs, this.rootPath, path)) !== undefined) return undefined;
      const st = await lstatOrUndefined(this.#fs, this.abs(path));
      return st === undefined ? undefined : entryFromStats(path, st, null);
    } catch (e) {
      throw classifyFsError(e, { action: 'looking at', path });
    }
  }

  probe(path: RelPath | ''): Promise<string> {
    return probePath(this.#rawFs, path === '' ? this.rootPath : this.abs(path));
  }

  async hash(path: RelPath): Promise<string> {
    try {
      await assertParentsInside(this.#fs, this.rootPath, path);
      // The size sizes the read buffer: a 1 MiB buffer per small file made hashing a big tree allocation-bound.
      const { size } = await this.#fs.promises.lstat(this.abs(path));
      return await sha1File(this.#fs, this.abs(path), Number(size));
    } catch (e) {
      throw classifyFsError(e, { action: 'hashing', path });
    }
  }

  async openForUpload(path: RelPath, expect?: PlannedStat): Promise<UploadReader> {
    try {
      await assertParentsInside(this.#fs, this.rootPath, path);
      return await openUploadReader(this.#rawFs, this.abs(path), path, expect);
    } catch (e) {
      throw classifyFsError(e, { action: 'opening for upload', path });
    }
  }

  async mkdir(path: RelPath): Promise<LocalEntry> {
    try {
      await assertParentsInside(this.#fs, this.rootPath, path);
      try {
        await this.#putNew(path, undefined, () => this.#fs.promises.mkdir(this.abs(path), { mode: 0o777 }));
      } catch (e) {
        if (errnoOf(e) !== 'EEXIST') throw e;
        const st = await lstatOrUndefined(this.#fs, this.abs(path));
        if (st === undefined || !st.isDirectory() || st.isSymbolicLink()) throw localChanged(path, { state: 'absent' }, st);
      }
      return await this.#entry(path);
    } catch (e) {
      throw classifyFsError(e, { action: 'creating the folder', path });
    }
  }

  tempPathFor(path: RelPath): string {
    const target = this.abs(path);
    return `${target.slice(0, target.lastIndexOf('/') + 1)}${this.#temps.next()}`;
  }

  async openTemp(path: RelPath, opts: { readonly expectedBytes?: number; readonly commit?: TempCommit } = {}): Promise<TempFile> {
    const inside = async (): Promise<void> => {
      try {
        await assertParentsInside(this.#fs, this.rootPath, path);
      } catch (e) {
        throw classifyFsError(e, { action: 'creating the temp file for', path });
      }
    };
    const temp = this.tempPathFor(path);
    const here = (workers?: FileWorkerPool): Promise<TempFile> => openTempFile(this.#fs, this.#gate, temp, path, workers);
    // A download bigger than a worker job is written here from its first byte (its temp file on disk while it
    // runs, as before the workers); a small one, and one of unknown size, goes to the workers.
    const small = opts.expectedBytes === undefined || opts.expectedBytes <= FLUSH_BYTES;
    const c = opts.commit;
    if (this.#fileWorkers?.threaded !== true || !small || c === undefined || c.guard.state === 'folder' || c.sha1 === null) {
      await inside();
      if (this.#fileWorkers?.threaded !== true) return here();
      // A big one's body can be read by a worker thread too (worker-fetch.ts, TempFile.fillFromUrl).
      return small ? new WorkerTempFile(temp, path, this.#fileWorkers, this.#rawFs, () => here()) : here(this.#fileWorkers);
    }
    // A new file whose SHA-1 Box listed is put in place by the worker thread that writes it (worker-commit.ts), and
    // so is one that replaces the file there (worker-replace.ts). That job checks the folders on the way itself
    // before it creates the temp file; if the file is written here after all (it grew past FLUSH_BYTES), they are
    // checked here first.
    const commit = { root: this.rootPath, rel: path, target: this.abs(path), mtimeMs: c.mtimeMs ?? null, sha1: c.sha1.toLowerCase(), ...replaceOf(c.guard) };
    const file = new WorkerTempFile(temp, path, this.#fileWorkers, this.#rawFs, async () => (await inside(), here()), commit);
    this.#workerCommits.set(temp, file);
    return file;
  }

  async childNames(path: RelPath | '', opts: { readonly strict?: boolean } = {}): Promise<readonly string[]> {
    try {
      const names = await this.#fs.promises.readdir(path === '' ? this.rootPath : this.abs(path));
      return names.map(String).filter((n) => !isTempName(n));
    } catch (e) {
      if (opts.strict === true && !isGone(e)) throw e;
      return [];
    }
  }

  async discardTemp(tempAbs: string): Promise<void> {
    if (!this.#temps.isOurs(basename(tempAbs))) throw new Error(`refusing to discard ${tempAbs}: not a boxsync temp file`);
    this.#workerCommits.delete(tempAbs);
    await this.#fs.promises.rm(tempAbs, { force: true });
  }

  async rootExists(): Promise<boolean> {
    try {
      return (await this.#fs.promises.stat(this.rootPath)).isDirectory();
    } catch {
      return false;
    }
  }

  async createRoot(): Promise<void> {
    await this.#fs.promises.mkdir(this.rootPath, { recursive: true });
  }

  async rootState(marker: string | null): Promise<RootState | undefined> {
    const st = await this.#rawFs.promises.stat(this.rootPath).catch(() => undefined);
    if (st === undefined || !st.isDirectory()) return undefined;
    // A root that is a symlink the user chose: its parent folder says nothing about the target's mount.
    const link = await this.#rawFs.promises.lstat(this.rootPath).catch(() => undefined);
    const parent = this.rootPath === '/' || link?.isSymbolicLink() === true ? undefined : await this.#rawFs.promises.stat(dirname(this.rootPath)).catch(() => undefined);
    const hasMarker = marker === null ? null : (await lstatOrUndefined(this.#rawFs, join(this.rootPath, marker)))?.isFile() === true;
    return { dev: String(st.dev), ino: Number(st.ino), mountPoint: parent !== undefined && parent.dev !== st.dev, hasMarker };
  }

  async writeRootMarker(name: string): Promise<void> {
    const text = 'This file tells boxsync that this folder is the sync root it synced (safety.rootMarker). Do not remove it.\n';
    try {
      await this.#rawFs.promises.writeFile(join(this.rootPath, name), text, { flag: 'wx' });
    } catch (e) {
      if (errnoOf(e) !== 'EEXIST') throw classifyFsError(e, { action: 'writing the root marker', path: asRelPath(name) });
    }
  }

  async commitTemp(tempAbs: string, path: RelPath, guard: LocalGuard, mtimeMs?: number, opts?: { readonly synced?: boolean }): Promise<LocalEntry> {
    const target = this.abs(path);
    if (dirname(tempAbs) !== dirname(target)) {
      throw new Error(`temp file ${tempAbs} is not in the folder of ${target}; use tempPathFor`);
    }
    const early = this.#workerCommits.get(tempAbs);
    this.#workerCommits.delete(tempAbs);
    if (early?.committed !== undefined) {
      if (guard.state === 'folder' || !sameReplace(early.commit?.replace, replaceOf(guard).replace) || early.commit?.mtimeMs !== (mtimeMs ?? null)) {
        throw new Error(`temp file ${tempAbs} was committed by its worker thread with another guard or mtime`);
      }
      return this.#committedByWorker(path, early.committed, guard);
    }
    try {
      await assertParentsInside(this.#fs, this.rootPath, path);
      if (mtimeMs !== undefined) await this.#utimes(tempAbs, mtimeMs);
      // A synced temp file's bytes are durable already; its mtime may not be after a power cut, which costs one
      // re-hash of an unchanged file at the next scan, never an upload.
      if (opts?.synced !== true) await this.#fsync(tempAbs);
      if (guard.state === 'absent') await this.#putNew(path, undefined, () => this.#putInPlace(tempAbs, target, path, guard));
      else await this.#putInPlace(tempAbs, target, path, guard);
      this.#unsynced.add(dirname(target));
      return await this.#entry(path);
    } catch (e) {
      await this.#fs.promises.unlink(tempAbs).catch(() => undefined);
      throw classifyFsError(e, { action: 'putting in place', path });
    }
  }

  /**
   * The main thread's part of a commit done by a worker thread (worker-commit.ts): the record of the file put in
   * place (its folder fsynced by durable(), its name in the twin listing), or the error the main thread's own path
   * gives for the same refusal. The worker removed the temp file in either case.
   */
  async #committedByWorker(path: RelPath, outcome: CommitOutcome, guard: LocalGuard): Promise<LocalEntry> {
    const target = this.abs(path);
    if ('entry' in outcome) {
      this.#unsynced.add(dirname(target));
      this.#twins.noteChanged(dirname(target), basename(target), null);
      return { path, kind: 'file', inode: outcome.entry.ino, sizeBytes: outcome.entry.size, mtimeMs: outcome.entry.mtimeMs, sha1: null };
    }
    try {
      switch (outcome.refused) {
        case 'twin':
          throw nameTwinAppeared(path, outcome.twin ?? '');
        case 'exists':
        case 'changed':
          throw localChanged(path, guard, await lstatOrUndefined(this.#fs, target));
        case 'ancestor':
          // The same check here gives its own error (a symlink: skipped; a folder gone: planned again).
          await assertParentsInside(this.#fs, this.rootPath, path);
          throw new SyncError({
            code: 'local_changed',
            disposition: 'replan',
            message: `a folder on the way to ${path} changed while its download was put in place; nothing was touched, it will be re-scanned and planned again`,
            details: { path },
          });
        default:
          throw Object.assign(new Error(outcome.message ?? 'the worker thread could not put the file in place'), { code: outcome.code });
      }
    } catch (e) {
      throw classifyFsError(e, { action: 'putting in place', path });
    }
  }

  async move(from: RelPath, to: RelPath, guard: LocalGuard): Promise<LocalEntry> {
    const src = this.abs(from);
    const dst = this.abs(to);
    try {
      await assertParentsInside(this.#fs, this.rootPath, from);
      await assertParentsInside(this.#fs, this.rootPath, to);
      const st = await checkGuard(this.#fs, src, from, guard);
      const there = await lstatOrUndefined(this.#fs, dst);
      if (there !== undefined) throw localChanged(to, { state: 'absent' }, there);
      await this.#putNew(to, dirname(src) === dirname(dst) ? basename(src) : undefined, async () => {
        if (st?.isDirectory()) {
          await this.#fs.promises.rename(src, dst);
        } else {
          await this.#linkNoClobber(src, dst, to, () => this.#fs.promises.rename(src, dst));
          await this.#fs.promises.unlink(src).catch((e: unknown) => {
            if (errnoOf(e) !== 'ENOENT') throw e;
          });
        }
      });
      this.#twins.noteChanged(dirname(src), null, basename(src));
      this.#unsynced.add(dirname(dst));
      this.#unsynced.add(dirname(src));
      return await this.#entry(to);
    } catch (e) {
      throw classifyFsError(e, { action: `moving ${from} to`, path: to });
    }
  }

  async trash(path: RelPath, guard: LocalGuard): Promise<string> {
    try {
      await assertParentsInside(this.#fs, this.rootPath, path);
      await checkGuard(this.#fs, this.abs(path), path, guard);
      const dest = await this.#trash.trash(this.abs(path), path);
      this.#twins.noteChanged(dirname(this.abs(path)), null, basename(path));
      this.#logger?.info({ path, trashedTo: dest }, 'moved to the local trash');
      return dest;
    } catch (e) {
      throw classifyFsError(e, { action: 'moving to the trash', path });
    }
  }

  async copyInto(from: RelPath, to: RelPath, guard: Extract<LocalGuard, { state: 'file' }>): Promise<LocalEntry> {
    try {
      await assertParentsInside(this.#fs, this.rootPath, from);
      await assertParentsInside(this.#fs, this.rootPath, to);
      await checkGuard(this.#fs, this.abs(to), to, guard);
      await this.#fs.promises.copyFile(this.abs(from), this.abs(to));
      return await this.#entry(to);
    } catch (e) {
      throw classifyFsError(e, { action: `copying ${from} into`, path: to });
    }
  }

  async removeTree(path: RelPath, guard: LocalGuard): Promise<void> {
    try {
      await assertParentsInside(this.#fs, this.rootPath, path);
      await checkGuard(this.#fs, this.abs(path), path, guard);
      await this.#fs.promises.rm(this.abs(path), { recursive: true, force: true });
      this.#twins.noteChanged(dirname(this.abs(path)), null, basename(path));
      this.#logger?.info({ path }, 'removed (selective sync --free-space)');
    } catch (e) {
      throw classifyFsError(e, { action: 'removing', path });
    }
  }

  async writeSmallFile(path: RelPath, content: string, guard: LocalGuard, mtimeMs?: number): Promise<LocalEntry> {
    const temp = this.tempPathFor(path);
    try {
      await assertParentsInside(this.#fs, this.rootPath, path);
      await this.#fs.promises.writeFile(temp, content, { flag: 'wx', mode: 0o666 });
    } catch (e) {
      await this.#fs.promises.unlink(temp).catch(() => undefined);
      throw classifyFsError(e, { action: 'writing a temp file for', path });
    }
    return this.commitTemp(temp, path, guard, mtimeMs);
  }

  /** Puts a new entry at `path` with `put`, unless that makes a pair of names Box takes for one (see name-twins.ts). */
  async #putNew(path: RelPath, except: string | undefined, put: () => Promise<unknown>): Promise<void> {
    await this.#twins.putNew(dirname(this.abs(path)), basename(path), except, (twin) => {
      throw nameTwinAppeared(path, twin);
    }, put);
  }

  async #putInPlace(tempAbs: string, target: string, path: RelPath, guard: LocalGuard): Promise<void> {
    switch (guard.state) {
      case 'absent':
        await this.#linkNoClobber(tempAbs, target, path, async () => {
          await checkGuard(this.#fs, target, path, guard);
          await this.#rename(tempAbs, target);
        });
        await this.#unlink(tempAbs).catch(() => undefined);
        return;
      case 'file':
        await checkGuard(this.#fs, target, path, guard);
        await this.#rename(tempAbs, target);
        return;
      case 'folder':
        await checkGuard(this.#fs, target, path, guard);
        throw new SyncError({
          code: 'folder_in_the_way',
          disposition: 'skip',
          message: `${path} is a folder on disk and a file cannot replace it; nothing was touched, the item is skipped until it changes`,
          details: { path },
        });
      default: {
        const never: never = guard;
        return never;
      }
    }
  }

  // The calls each download makes, through the callback forms when the module has them (fs-module.ts).
  #utimes(abs: string, mtimeMs: number): Promise<void> {
    return viaCallback(this.#fs.utimes, (p: string, a: Date, m: Date) => this.#fs.promises.utimes(p, a, m), abs, new Date(), new Date(mtimeMs));
  }

  #link(from: string, to: string): Promise<void> {
    return viaCallback(this.#fs.link, (a: string, b: string) => this.#fs.promises.link(a, b), from, to);
  }

  #unlink(abs: string): Promise<void> {
    return viaCallback(this.#fs.unlink, (p: string) => this.#fs.promises.unlink(p), abs);
  }

  #rename(from: string, to: string): Promise<void> {
    return viaCallback(this.#fs.rename, (a: string, b: string) => this.#fs.promises.rename(a, b), from, to);
  }

  /** link(2) refuses an existing target; without hard-link support, `fallback` does a checked rename. */
  async #linkNoClobber(from: string, to: string, path: RelPath, fallback: () => Promise<void>): Promise<void> {
    try {
      await this.#link(from, to);
    } catch (e) {
      const errno = errnoOf(e);
      if (errno === 'EEXIST') throw localChanged(path, { state: 'absent' }, await lstatOrUndefined(this.#fs, to));
      if (errno === undefined || !NO_HARDLINKS.has(errno)) throw e;
      await fallback();
    }
  }

  warmUp(downloads?: readonly { readonly sizeBytes: number }[]): void {
    // Unknown (none listed): the threads start, as for a big pass.
    this.#fileWorkers?.warmUp(downloads === undefined || downloads.length === 0 ? undefined : { files: downloads.length, bytes: downloads.reduce((n, f) => n + f.sizeBytes, 0) });
  }

  async durable(): Promise<void> {
    const dirs = [...this.#unsynced];
    this.#unsynced.clear();
    await Promise.all(dirs.map((d) => this.#fsyncDir(d)));
  }

  async #fsync(absPath: string): Promise<void> {
    const h = await this.#fs.promises.open(absPath, 'r+');
    try {
      await h.sync();
    } finally {
      await h.close();
    }
  }

  /** Makes the rename durable; some file systems refuse to fsync a directory, which only costs durability. */
  async #fsyncDir(absDir: string): Promise<void> {
    try {
      const h = await this.#fs.promises.open(absDir, 'r');
      try {
        await h.sync();
      } finally {
        await h.close();
      }
    } catch {
      return;
    }
  }

  async #entry(path: RelPath): Promise<LocalEntry> {
    const st = await lstatOrUndefined(this.#fs, this.abs(path));
    if (st === undefined) throw localChanged(path, { state: 'absent' }, undefined);
    return entryFromStats(asRelPath(path), st, null);
  }
}

/** The stat a replacing commit's target must still have (worker-replace.ts); none for a new file. */
function replaceOf(guard: LocalGuard): { replace?: ReplaceGuard } {
  return guard.state === 'file' ? { replace: { ino: guard.inode, size: guard.sizeBytes, mtimeMs: guard.mtimeMs } } : {};
}

function sameReplace(a: ReplaceGuard | undefined, b: ReplaceGuard | undefined): boolean {
  return a === undefined || b === undefined ? a === b : a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs;
}

export function createLocalFs(opts: LocalFsOptions): LocalFs {
  return new DiskLocalFs(opts);
}

/** An empty segment ("//"), a "." or ".." segment. */
const BAD_SEGMENT = /\/\/|(?:^|\/)\.\.?(?:\/|$)/;

function assertRelPath(path: string): void {
  if (path === '' || path.startsWith('/') || path.endsWith('/') || BAD_SEGMENT.test(path) || path.includes('\0')) {
    throw new SyncError({
      code: 'invalid_path',
      disposition: 'skip',
      message: `"${path}" is not a valid path inside the sync folder; the item is skipped and nothing outside the folder is touched`,
      details: { path },
    });
  }
}
