/**
 * The executor: one operation in, one outcome out. It performs the I/O and nothing else; the reconciler
 * commits the outcome to the journal (commit.ts).
 *
 * Guards: remote writes send the etag the plan was based on (If-Match); local replaces, moves and deletes go
 * through LocalFs, which re-checks the LocalGuard right before acting; an upload re-stats its source and refuses
 * when it no longer matches the plan. Downloads land in a temp file from LocalFs.openTemp(path), the adapter verifies the
 * SHA-1, and commitTemp renames into place after re-checking the guard. Any failure is a SyncError; the
 * caller branches on its disposition only.
 */
import { SyncError, isSyncError } from '../core/errors.js';
import type { LocalEntry, RelPath, RemoteEntry, SyncRoot, SyncedEntry } from '../core/model.js';
import { assertNever, type LocalGuard, type Operation, type UploadOp, type UploadVersionOp } from '../core/operations.js';
import type { Journal } from '../ports/journal.js';
import type { LocalFs } from '../ports/local-fs.js';
import type { RemoteStore, TransferProgress } from '../ports/remote-store.js';
import { listSubtree } from './observe-remote.js';
import { INCOMPLETE_CODE } from './remote-listing.js';
import { escapeText } from '../core/escape.js';
import type { Logger } from 'pino';
import { weblinkFileContent } from './weblink-file.js';
import { localUnchanged } from '../core/same-item.js';

/** What an operation produced, for the commit. Fields are present when the operation yields them. */
export interface OpResult {
  readonly remote?: RemoteEntry;
  readonly local?: LocalEntry;
  /** Where a local trash put the entry. */
  readonly trashedTo?: string;
  /** Payload bytes moved over the network. */
  readonly bytes: number;
}

export type Outcome = { readonly status: 'done'; readonly result: OpResult } | { readonly status: 'failed'; readonly error: SyncError };

export interface ExecContext {
  readonly journal: Journal;
  readonly remote: RemoteStore;
  readonly fs: LocalFs;
  readonly root: SyncRoot;
  readonly logger: Logger;
  readonly onProgress: (p: TransferProgress) => void;
  readonly signal?: AbortSignal;
  /** The run's pass this operation belongs to (its plan's), for a recorder; follow-ups share their folder's. */
  readonly pass?: number;
  /** EngineOptions.growingUploads (the daemon's). */
  readonly growingUploads?: boolean;
}

/**
 * What carries out the reconciler's operations: `execute` below, or the dry run's recorder
 * (recording-executor.ts), which records each operation and reports what its success would have produced.
 */
export interface Executor {
  execute(op: Operation, ctx: ExecContext): Promise<Outcome>;
  /** Nothing may be written but the journal (a copy): the root guard only judges (root-guard.ts readOnly). */
  readonly recordsOnly?: boolean;
}

export async function execute(op: Operation, ctx: ExecContext): Promise<Outcome> {
  try {
    return { status: 'done', result: await run(op, ctx) };
  } catch (e) {
    return { status: 'failed', error: toSyncError(e) };
  }
}

/** Errors the adapters did not classify are treated as transient: the item is retried with backoff. */
export function toSyncError(e: unknown): SyncError {
  if (isSyncError(e)) return e;
  const message = e instanceof Error ? e.message : String(e);
  return new SyncError({ code: 'unexpected', disposition: 'retry', message: `${message}; will retry with backoff`, cause: e });
}

function localChanged(path: RelPath): SyncError {
  return new SyncError({
    code: 'local_changed',
    disposition: 'replan',
    message: `${path} changed since it was planned; will look at it again`,
  });
}

function matchesGuard(entry: LocalEntry | undefined, guard: LocalGuard): boolean {
  switch (guard.state) {
    case 'absent':
      return entry === undefined;
    case 'file':
      return entry?.kind === 'file' && localUnchanged(guard, entry);
    case 'folder':
      return entry?.kind === 'folder' && entry.inode === guard.inode;
    default:
      return assertNever(guard);
  }
}

async function run(op: Operation, ctx: ExecContext): Promise<OpResult> {
  const { remote, fs, signal } = ctx;
  switch (op.kind) {
    case 'download':
      return download(op.path, op, ctx);
    case 'upload':
    case 'upload-version':
      return upload(op, ctx);
    case 'create-remote-folder': {
      const created = await remote.createFolder(op.parentId, op.name);
      const local = await fs.stat(op.path);
      return { remote: created, ...(local ? { local } : {}), bytes: 0 };
    }
    case 'create-local-folder':
      return { local: await fs.mkdir(op.path), bytes: 0 };
    case 'remote-move': {
      const moved = await remote.move({ id: op.remoteId, kind: op.itemKind, parentId: op.parentId, name: op.name, ifMatch: op.ifMatch });
      return { remote: moved, bytes: 0 };
    }
    case 'local-move':
      return { local: await fs.move(op.from, op.to, op.guard), bytes: 0 };
    case 'remote-trash':
      await remote.trash(op.remoteId, op.itemKind, op.ifMatch);
      return { bytes: 0 };
    case 'local-trash':
      return { trashedTo: await fs.trash(op.path, op.guard), bytes: 0 };
    case 'remote-restore': {
      let restored;
      try {
        restored = await remote.restore({ id: op.remoteId, kind: op.itemKind, parentId: op.parentId, name: op.name });
      } catch (e) {
        // Box says it is not in the trash: it went with a trashed folder (only that folder is in the trash), or
        // the trash was emptied. It cannot be restored by itself: the next plan forgets it, and the local
        // version is uploaded as a new item rather than restoring the whole folder someone deleted on Box.
        if ((e as { code?: string }).code === 'not_found') ctx.journal.markTrashed(op.remoteId, false);
        throw e;
      }
      if (restored.kind === 'folder') {
        // The files that were in the folder came back with it, and no event names them. Until the folder is
        // listed, the journal keeps a 'listing incomplete' mark on it, written with its row: a run killed before
        // the listing ends leaves the mark, and the next process's first pass lists everything again
        // (relistParked) instead of knowing the folder without its files for ever.
        const path = op.path;
        ctx.journal.transaction(() => {
          ctx.journal.putRemote(restored);
          ctx.journal.recordFailure({
            root: ctx.root.id,
            path,
            code: INCOMPLETE_CODE,
            message: `the Box folder ${escapeText(path)} was restored from the Box trash and its content is not listed yet; the next pass lists it`,
            attempts: 1,
            nextRetryAtMs: Date.now(),
            disposition: 'retry',
          });
        });
        const listed = await listSubtree(ctx, restored.id, signal);
        if (listed.problems.incomplete.length === 0) ctx.journal.clearFailure(ctx.root.id, path);
      }
      return { remote: restored, bytes: 0 };
    }
    case 'conflict-copy':
      return { local: await fs.move(op.path, op.to, op.guard), bytes: 0 };
    case 'write-weblink': {
      const r = ctx.journal.getRemote(op.remoteId);
      const local = await fs.writeSmallFile(op.path, weblinkFileContent(op.url), op.guard, r?.modifiedAtMs);
      return { local, bytes: 0 };
    }
    case 'link':
    case 'forget':
    case 'report':
      return { bytes: 0 };
    default:
      return assertNever(op);
  }
}

async function download(path: RelPath, op: Extract<Operation, { kind: 'download' }>, ctx: ExecContext): Promise<OpResult> {
  const { fs, remote } = ctx;
  // A new small file is put in place by the worker thread that writes it (local/worker-commit.ts).
  const file = await fs.openTemp(path, { expectedBytes: op.expect.sizeBytes, commit: { guard: op.guard, mtimeMs: op.expect.modifiedAtMs, sha1: op.expect.sha1 } });
  const temp = file.path;
  try {
    const got = await remote.download({
      id: op.remoteId,
      destFile: file,
      expectSha1: op.expect.sha1,
      expectSizeBytes: op.expect.sizeBytes,
      onProgress: ctx.onProgress,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    // The download fsynced the bytes (DownloadRequest.destFile): commitTemp need not open the file again.
    const local = await fs.commitTemp(temp, path, op.guard, op.expect.modifiedAtMs, { synced: true });
    return { local: { ...local, sha1: got.sha1 }, bytes: got.sizeBytes };
  } catch (e) {
    // The temp file is ours (never user data): leave nothing half-written behind (the download closed it).
    await file.close();
    await fs.discardTemp(temp);
    // The folder went away or moved while the bytes came (a local rename of a parent): plan again from the trees.
    if (!isSyncError(e) && (e as NodeJS.ErrnoException).code === 'ENOENT') throw localChanged(path);
    throw e;
  }
}

async function upload(op: UploadOp | UploadVersionOp, ctx: ExecContext): Promise<OpResult> {
  const { fs, remote, root, journal } = ctx;
  const before = await fs.stat(op.path);
  if (!before || before.kind !== 'file' || !matchesGuard(before, op.guard)) throw localChanged(op.path);
  const known = journal.getLocal(root.id, op.path);
  const appendOnly = ctx.growingUploads === true && growingUpload(journal.getSynced(root.id, op.path), before);
  const cached = before.sha1 ?? (known && localUnchanged(known, before) && known.sha1 ? known.sha1 : null);
  const planned = cached ?? (appendOnly ? null : await fs.hash(op.path));
  // The bytes sent are a fixed snapshot of the file as planned (LocalFs.openForUpload): one that changed since is
  // local_changed before any request, one that shrinks or grows meanwhile fails the request at once. A growing
  // file (growingUpload) is the exception: its snapshot is what it holds at the open, hashed from those bytes.
  const source = await fs.openForUpload(op.path, { sizeBytes: before.sizeBytes, mtimeMs: before.mtimeMs, inode: before.inode, appendOnly });
  let sha1 = planned;
  let taken = before;
  if (sha1 === null || source.size !== before.sizeBytes || source.stat.mtimeMs !== before.mtimeMs) {
    try {
      sha1 = await source.sha1();
    } catch (e) {
      await source.close();
      throw e;
    }
    taken = { ...before, sizeBytes: source.size, mtimeMs: source.stat.mtimeMs };
  }
  const common = {
    source,
    modifiedAtMs: taken.mtimeMs,
    sha1,
    resumeKey: `${root.id}:${op.path}`,
    onProgress: ctx.onProgress,
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  };
  let uploaded: RemoteEntry;
  try {
    uploaded =
      op.kind === 'upload'
        ? await remote.uploadNew({ ...common, parentId: op.parentId, name: op.name })
        : await remote.uploadVersion({ ...common, id: op.remoteId, name: op.path.slice(op.path.lastIndexOf('/') + 1), ifMatch: op.ifMatch, ...parentOf(journal.getRemote(op.remoteId)) });
  } finally {
    await source.close();
  }
  // Record the stat taken before the upload: if the file changed meanwhile, the next scan sees it and uploads again.
  return { remote: uploaded, local: { ...taken, sha1: uploaded.sha1 ?? sha1 }, bytes: uploaded.sizeBytes };
}

/**
 * In the daemon (EngineOptions.growingUploads), a file that keeps growing (a log) is uploaded as the prefix it
 * held when opened, and the rest by the next pass (local/upload-reader.ts appendOnly): the watcher hints it at
 * least every `daemon.uploadGrowingEverySec` even while it is still written, and an upload that waited for the
 * file to stop growing would never finish. The rule that tells an append from a rewrite: the file is the inode
 * last synced (or was never synced) and is no smaller than it was then. A file replaced by a rename (another
 * inode) or one that shrank is not a growing file: any change during its upload abandons it as before. A rewrite
 * in place that keeps the inode is caught by the digest: the SHA-1 sent was read from the same open file before
 * the body, Box refuses a body that does not match it, and the Box adapter then replans (remote/box/upload.ts).
 */
function growingUpload(synced: SyncedEntry | undefined, now: LocalEntry): boolean {
  return synced === undefined || (synced.inode === now.inode && synced.sizeBytes <= now.sizeBytes);
}

/** The folder the plan saw the file in (its etag is the If-Match): an answer naming another is checked, not believed. */
function parentOf(r: RemoteEntry | undefined): { parentId?: RemoteEntry['id'] } {
  return r?.parentId ? { parentId: r.parentId } : {};
}
