/**
 * LocalFs: the disk side of one sync root, in domain terms. Implemented by src/local/local-fs.ts on top of an
 * injected `fs` (node:fs in production, memfs in unit tests).
 *
 * Paths passed in and out are RelPath (relative to the root). The implementation refuses to follow symlinks
 * out of the root: a symlink is reported as kind 'symlink' and never descended into.
 *
 * Every method that replaces or removes something takes a LocalGuard and re-checks it immediately before
 * acting; when the path no longer matches it throws SyncError code `local_changed` (replan) and touches nothing.
 */
import type { LocalEntry, RelPath } from '../core/model.js';
import type { LocalGuard } from '../core/operations.js';
import type { SyncError } from '../core/errors.js';

/** A temp file opened by LocalFs.openTemp. A failed call rejects with a classified SyncError (a full disk: `disk_full`). */
export interface TempFile {
  /** Its absolute path (from tempPathFor). */
  readonly path: string;
  /** Append `chunk`; resolves once all of it is handed to the kernel. */
  write(chunk: Buffer): Promise<void>;
  /** Empty it again (a download that must start over from byte 0). */
  truncate(): Promise<void>;
  /** fsync, then close: resolves once the bytes are durable. */
  syncAndClose(): Promise<void>;
  /** Close without fsync, after a failure; never rejects, and does nothing once closed. */
  close(): Promise<void>;
  /**
   * Free bytes (for this user) of the file system holding it, for the free-space check before a download; rejects
   * when the file system cannot say (then the write itself reports a full disk).
   */
  freeBytes(): Promise<number>;
  /**
   * Present when the temp file is written off the main thread (config `http.fileWorkers`): fill it from one entry
   * of a zip archive on disk (a download's scratch archive), check it, fsync and close it, all on a worker thread.
   * Resolves with what it holds, or with why the entry cannot be used there (unreadable, not the listed size or
   * SHA-1, no worker thread): then nothing was written and the file is open and empty, as before the call. A
   * failure to write the temp file rejects as syncAndClose() would.
   */
  fillFromArchive?(entry: ArchiveEntry): Promise<{ readonly sha1: string; readonly sizeBytes: number } | { readonly unusable: string }>;
  /**
   * Present when a big temp file can be written off the main thread (config `http.fileWorkers`): the body of a GET
   * of a pre-signed URL (no token) read, hashed and written into it on a worker thread (local/worker-fetch.ts).
   * Resolves with what happened (a body cut, too big or too slow says so in `failed`; the file then holds `written`
   * checked bytes), or null when no thread can run it (nothing written). A failure to write the file rejects as
   * write() would. The caller fsyncs and closes it (syncAndClose) as after its own writes.
   */
  fillFromUrl?(fill: UrlFill): Promise<UrlFillResult | null>;
}

/** A GET whose body fills a temp file on a worker thread (TempFile.fillFromUrl). */
export interface UrlFill {
  readonly url: string;
  /** Sent as they are (a Range from `position`, the user agent); never a token. */
  readonly headers: Readonly<Record<string, string>>;
  /** Bytes already in the file (an earlier attempt's): read back and hashed first, then the body is written after them. */
  readonly position: number;
  /** Most bytes the file may hold (the size Box listed); null: no bound. */
  readonly limit: number | null;
  /** No byte for this long is a stall; no connection for `connectTimeoutMs` is one too. */
  readonly stallMs: number;
  readonly connectTimeoutMs: number;
  /** The download's deadline, from now. */
  readonly deadlineInMs: number;
  readonly signal?: AbortSignal | undefined;
  /** The bytes the file holds so far, every few MiB. */
  readonly onProgress?: ((doneBytes: number) => void) | undefined;
}

/**
 * The body of a GET of `url` (no token) written into a new file at `path` (created, mode 0600) off the main thread,
 * not hashed (a zip download's scratch archive); null when no thread can (nothing created). `position` is 0.
 */
export type WriteUrlToFile = (fill: UrlFill & { readonly path: string }) => Promise<UrlFillResult | null>;

/** What a UrlFill did. */
export interface UrlFillResult {
  /** The answer's status; 0: none came. Only 200 and 206 are read (anything else: nothing written). */
  readonly status: number;
  /** Bytes in the file now, from byte 0: each hashed and written. */
  readonly written: number;
  /** The total the answer announced (Content-Range's, or the offset plus Content-Length); 0: not said. */
  readonly total: number;
  /** The body was read to its end: the SHA-1 of the file's `written` bytes. */
  readonly sha1?: string;
  /** The host ignored the Range request: the file was emptied and read again from byte 0. */
  readonly restarted?: boolean;
  /** Why it stopped before the body's end (`write` never comes here: fillFromUrl rejects with the disk's error). */
  readonly failed?: { readonly kind: 'open' | 'body' | 'oversize' | 'slow' | 'aborted' | 'write'; readonly message: string; readonly code?: string };
}

/** How a temp file will be committed (LocalFs.openTemp): the guard and mtime commitTemp gets, the SHA-1 Box listed. */
export interface TempCommit {
  readonly guard: LocalGuard;
  readonly mtimeMs?: number | undefined;
  readonly sha1: string | null;
}

/** Where one file's bytes are in a zip archive on disk (its central directory's record), and what they must be. */
export interface ArchiveEntry {
  readonly archivePath: string;
  readonly localHeaderOffset: number;
  readonly compressedSize: number;
  /** 0 stored, 8 deflated (others cannot be used). */
  readonly method: number;
  readonly sizeBytes: number;
  /** Lower-case hex. */
  readonly sha1: string;
}

/** The stat a file was opened for upload with (fstat of the open file, not of its path). */
export interface UploadStat {
  /** Its device (st_dev, as text: it may not fit a double) and inode. */
  readonly dev: string;
  readonly ino: number;
  readonly mtimeMs: number;
  readonly size: number;
}

/**
 * A file opened for upload by LocalFs.openForUpload: a fixed snapshot of exactly `size` bytes of the inode it was
 * opened on. A file that shrinks meanwhile ends before that length; one that grows has bytes beyond it. Either is
 * noticed at the read and thrown as SyncError `local_changed` (replan): the request reading it is abandoned at once
 * (a body shorter than its Content-Length would otherwise leave the server waiting for bytes that never come), and
 * the engine re-reads the file and uploads what it holds then. Reads are positional: a retried request reads again.
 */
export interface UploadReader {
  /** The length announced for the upload (Content-Length, a session's file_size): `stat.size`. */
  readonly size: number;
  readonly stat: UploadStat;
  /** Exactly the bytes [start, end). A read ending at `size` also checks that nothing follows. */
  read(start: number, end: number): Promise<Buffer>;
  /** The whole snapshot from byte 0, in chunks of up to `chunkBytes`, then the check that nothing follows. */
  stream(chunkBytes?: number): AsyncIterable<Buffer>;
  /** SHA-1 (lower-case hex) of the snapshot, read whole through stream(). */
  sha1(): Promise<string>;
  /** Close the file; never rejects, and does nothing once closed. */
  close(): Promise<void>;
}

/** What the root folder is now (engine/root-guard.ts compares it with what it was). */
export interface RootState {
  /** Its device (st_dev, as text: it may not fit a double) and inode. */
  readonly dev: string;
  readonly ino: number;
  /** On another device than its parent folder: something is mounted on it. */
  readonly mountPoint: boolean;
  /** Whether the marker file asked for is there (null: none asked for). */
  readonly hasMarker: boolean | null;
}

export interface ScanOptions {
  /** Only this subtree (default: the whole root). */
  readonly under?: RelPath;
  /** Paths matching the ignore rules are not returned. */
  readonly isIgnored: (path: RelPath, isDir: boolean) => boolean;
  /**
   * Previously known entries, so that unchanged files (same size, mtime, inode) keep their SHA-1 without
   * re-hashing. Files that changed or are new are returned with sha1 null unless `hash` is true.
   */
  readonly known?: (path: RelPath) => LocalEntry | undefined;
  readonly hash?: boolean;
  /**
   * Called for a folder (or file to hash) that cannot be read (permission denied, I/O error) instead of failing
   * the whole scan. The folder itself is still reported, its contents are not: the caller must treat that subtree
   * as unknown, never as deleted. Without this callback such an error makes scan() throw.
   */
  readonly onUnreadable?: (path: RelPath, error: SyncError) => void;
  /**
   * Remove our own temp files (partial downloads left by a run that was killed) instead of skipping them.
   * Only safe when no transfer of this state dir is in flight: the engine sets it for the full scan at the start
   * of a pass, under the state-dir lock. They are never user data: a download only becomes the user's file
   * when it is renamed into place.
   */
  readonly removeTemps?: boolean;
  /**
   * Called for a file with the temp prefix that this state dir's boxsync did not make (a user's own
   * `.boxsync-tmp-notes`): it is never removed nor synced, and the caller reports it.
   */
  readonly onForeignTemp?: (path: RelPath) => void;
  /**
   * Called once for every folder whose listing the scan read (the root, `under`, and every folder reported
   * below), after all its entries were observed, with the entries reported for it in name order (ignored names,
   * our temp files and names gone before their lstat are not among them). Never called for a folder that could
   * not be read: its contents are unknown, not gone. A folder gone since it was reported is called with none.
   */
  readonly onListed?: (dir: RelPath | '', entries: readonly LocalEntry[]) => void;
  /**
   * Listing marks (engine/observe-local.ts; the journal's local_listing_marks). A folder read by the native walk
   * gets a mark: a digest of its whole listing (every name, kind, size, mtime and inode). `skip(dir, mark)` true
   * says the caller's rows of that folder are those of that very listing: none of its entries is reported,
   * onListed is not called for it, and its subfolders (those the ignore rules keep) are still walked. `clean(dir,
   * mark, reported)` is called after onListed for a folder each entry of which equalled its `known` row (nothing
   * hashed, no temp name, nothing unreadable), with how many entries were reported for it. A folder read through
   * node:fs (no native walk, a slow disk, a name that is not UTF-8) has no mark and is always compared.
   */
  readonly listingMarks?: {
    skip(dir: RelPath | '', mark: string): boolean;
    clean(dir: RelPath | '', mark: string, reported: number): void;
  };
}

export interface LocalFs {
  readonly rootPath: string;
  /** Absolute path of a RelPath (for transfers). */
  abs(path: RelPath): string;
  /**
   * Walk the tree (streaming, bounded memory) and yield entries in batches, a folder before its contents. With
   * `under`, the entry at `under` itself comes first (nothing when it is absent). A missing or unreadable root
   * throws SyncError `local_root_missing` (fatal) rather than yielding an empty tree.
   */
  scan(opts: ScanOptions): AsyncIterable<readonly LocalEntry[]>;
  /** lstat one path; undefined when absent. */
  stat(path: RelPath): Promise<LocalEntry | undefined>;
  /**
   * A short text that changes when the item's or its folder's permissions, owner or identity change (mode, uid,
   * gid, inode, ctime of both): what a park on a local condition is re-checked against. Never throws.
   */
  probe?(path: RelPath | ''): Promise<string>;
  /** SHA-1 (lower-case hex) of a file, streamed. */
  hash(path: RelPath): Promise<string>;
  /**
   * Open a file for upload (UploadReader): the only way an upload reads local bytes. With `expect` (the stat the
   * plan was made from), a file that no longer matches it is SyncError `local_changed` before anything is read.
   * With `expect.appendOnly`, bytes appended after the open are left out instead (local/upload-reader.ts).
   */
  openForUpload(path: RelPath, expect?: { readonly sizeBytes: number; readonly mtimeMs: number; readonly inode: number; readonly appendOnly?: boolean }): Promise<UploadReader>;
  mkdir(path: RelPath): Promise<LocalEntry>;
  /** A fresh temp path in the same folder as `path`, named so the watcher and scanner ignore it. */
  tempPathFor(path: RelPath): string;
  /**
   * A fresh temp file (tempPathFor) created and opened for writing: a download writes its bytes through it. Its
   * `path` goes to commitTemp or discardTemp like any temp path. `expectedBytes` (the size Box listed) lets a
   * big download's file be created on disk at once, as the main thread writes it (a small one may be gathered and
   * written by a worker thread when it ends: config `http.fileWorkers`). `commit` says how it will be committed
   * (the same guard and mtime must then go to commitTemp): a new file (guard `absent`) or one replacing a file
   * (guard `file`) written by a worker thread is put in place by that thread as soon as its bytes have SHA-1 `sha1`
   * (local/worker-commit.ts, local/worker-replace.ts), and commitTemp
   * then only reports what it did.
   */
  openTemp(path: RelPath, opts?: { readonly expectedBytes?: number; readonly commit?: TempCommit }): Promise<TempFile>;
  /**
   * Names in one folder ('' = the root), without boxsync's temp files; [] when the folder is gone, and (unless
   * `strict`) when it cannot be read. With `strict`, a folder that cannot be read throws.
   */
  childNames(path: RelPath | '', opts?: { readonly strict?: boolean }): Promise<readonly string[]>;
  /** Remove a temp file from tempPathFor (never user data); absent is fine. */
  discardTemp(tempAbs: string): Promise<void>;
  /** Is the root folder there, as a directory? (A missing root is never read as "everything deleted".) */
  rootExists(): Promise<boolean>;
  /** Create the root folder (and its parents): only on a first run, when nothing was ever in sync there. */
  createRoot(): Promise<void>;
  /** The root's device, inode and mount state, and whether `marker` is in it; undefined when it is missing. */
  rootState(marker: string | null): Promise<RootState | undefined>;
  /** Write the root marker file (safety.rootMarker); one already there is kept. */
  writeRootMarker(name: string): Promise<void>;
  /**
   * Rename an absolute temp file (from tempPathFor) into place after checking the guard on `path`; sets mtime when
   * given and fsyncs the file (unless `synced`: its writer already fsynced its bytes, as a download does). The
   * rename itself is durable after the next `durable()`. On any failure the temp file is removed and the target
   * is left as it was.
   */
  commitTemp(tempAbs: string, path: RelPath, guard: LocalGuard, mtimeMs?: number, opts?: { readonly synced?: boolean }): Promise<LocalEntry>;
  /** Rename `from` to `to` (guard checked on `from`; `to` must be absent); durable after the next `durable()`. */
  move(from: RelPath, to: RelPath, guard: LocalGuard): Promise<LocalEntry>;
  /** Move into the local trash (never unlink user data). Returns where it went. */
  trash(path: RelPath, guard: LocalGuard): Promise<string>;
  /**
   * Write the bytes of the file `from` into the existing file `to` in place (same inode), after checking the guard
   * on `to`: `conflicts resolve --keep local` keeps the user's copy as an edit of the original, so the sync
   * uploads it as a new version. `from` is left as it was.
   */
  copyInto(from: RelPath, to: RelPath, guard: Extract<LocalGuard, { state: 'file' }>): Promise<LocalEntry>;
  /** Remove a folder and all below it outright (only `selective exclude --free-space` asks for it), guard checked. */
  removeTree(path: RelPath, guard: LocalGuard): Promise<void>;
  /** Write a small file atomically (web link files). */
  writeSmallFile(path: RelPath, content: string, guard: LocalGuard, mtimeMs?: number): Promise<LocalEntry>;
  /**
   * Make every rename done by commitTemp, move and writeSmallFile so far survive a power cut (fsync their
   * folders, each once). The engine calls it before the journal records any of them as synced.
   */
  durable(): Promise<void>;
  /**
   * Downloads are on their way (a pass planned some): start what writes their temp files (the file worker threads)
   * now, so that its start runs while their requests do, not after the first one answered. `downloads`: the pass's
   * planned downloads (the files announced to RemoteStore.prefetch), by which a small pass's few files are written
   * on the main thread instead (no thread started for them); none or empty: unknown, the threads start. Optional;
   * changes nothing else.
   */
  warmUp?(downloads?: readonly { readonly sizeBytes: number }[]): void;
}
