/**
 * Operations: what the planner asks the executor to do. PURE data.
 *
 * Every operation carries:
 * - `root`: which folder pair it belongs to;
 * - `reason`: a human-readable sentence saying why (shown by `boxsync status PATH` and in logs);
 * - the guard the executor must check before acting. Remote writes carry the etag the plan was based on
 *   (`ifMatch`): a 412 means re-observe and re-plan, never overwrite. Local replaces and deletes carry a
 *   LocalGuard: the executor re-stats the path and refuses (outcome `guard-failed`) if it no longer matches.
 *
 * The operations of one batch are independent: they may run in any order or concurrently. The planner never
 * puts an ancestor and its descendant into the same batch.
 */
import type { RelPath, RemoteId, RootId } from './model.js';

/** What the local path must look like for the operation to proceed. */
export type LocalGuard =
  | { readonly state: 'absent' }
  | { readonly state: 'file'; readonly sizeBytes: number; readonly mtimeMs: number; readonly inode: number }
  | { readonly state: 'folder'; readonly inode: number };

/** What the remote item is expected to be when a download starts (the executor verifies the SHA-1). */
export interface RemoteExpect {
  readonly etag: string;
  readonly sha1: string | null;
  readonly sizeBytes: number;
  readonly versionId: string | null;
  /** Box's content_modified_at of that version: a download sets the file's mtime to it. */
  readonly modifiedAtMs: number;
}

interface Base {
  readonly root: RootId;
  readonly reason: string;
}

/** Download a remote file to `path` (temp name in the same folder, verify SHA-1, re-check guard, rename). */
export interface DownloadOp extends Base {
  readonly kind: 'download';
  readonly path: RelPath;
  readonly remoteId: RemoteId;
  readonly expect: RemoteExpect;
  readonly guard: LocalGuard;
}

/** Upload a local file as a new Box file. */
export interface UploadOp extends Base {
  readonly kind: 'upload';
  readonly path: RelPath;
  readonly parentId: RemoteId;
  readonly name: string;
  readonly guard: LocalGuard;
}

/** Upload a local file as a new version of an existing Box file, with If-Match. */
export interface UploadVersionOp extends Base {
  readonly kind: 'upload-version';
  readonly path: RelPath;
  readonly remoteId: RemoteId;
  readonly ifMatch: string;
  readonly guard: LocalGuard;
}

export interface CreateRemoteFolderOp extends Base {
  readonly kind: 'create-remote-folder';
  readonly path: RelPath;
  readonly parentId: RemoteId;
  readonly name: string;
}

export interface CreateLocalFolderOp extends Base {
  readonly kind: 'create-local-folder';
  readonly path: RelPath;
  readonly remoteId: RemoteId;
}

/** Move and/or rename a Box item (one call, even for a folder with a million descendants). */
export interface RemoteMoveOp extends Base {
  readonly kind: 'remote-move';
  readonly remoteId: RemoteId;
  readonly itemKind: 'file' | 'folder';
  readonly from: RelPath;
  readonly to: RelPath;
  readonly parentId: RemoteId;
  readonly name: string;
  readonly ifMatch: string;
}

/** Move and/or rename a local entry (one rename(2), even for a folder). */
export interface LocalMoveOp extends Base {
  readonly kind: 'local-move';
  readonly remoteId: RemoteId;
  readonly from: RelPath;
  readonly to: RelPath;
  readonly guard: LocalGuard;
}

/** Move a Box item to the Box trash (never a permanent delete). */
export interface RemoteTrashOp extends Base {
  readonly kind: 'remote-trash';
  readonly path: RelPath;
  readonly remoteId: RemoteId;
  readonly itemKind: 'file' | 'folder' | 'weblink';
  readonly ifMatch: string;
}

/** Move a local entry into the local trash (freedesktop trash or the state dir's trash). */
export interface LocalTrashOp extends Base {
  readonly kind: 'local-trash';
  readonly path: RelPath;
  readonly guard: LocalGuard;
}

/** Restore a Box item from the trash, keeping its id, history and shared links. */
export interface RemoteRestoreOp extends Base {
  readonly kind: 'remote-restore';
  readonly path: RelPath;
  readonly remoteId: RemoteId;
  readonly itemKind: 'file' | 'folder';
  readonly parentId: RemoteId;
  readonly name: string;
}

/** Move a local file aside to a conflict-copy name, so that the remote version can take its place. */
export interface ConflictCopyOp extends Base {
  readonly kind: 'conflict-copy';
  readonly path: RelPath;
  readonly to: RelPath;
  readonly guard: LocalGuard;
}

/** Both sides already agree (same SHA-1, or both folders): record the merge base without transferring. */
export interface LinkOp extends Base {
  readonly kind: 'link';
  readonly path: RelPath;
  readonly remoteId: RemoteId;
}

/** Both sides are gone: drop the merge base row (and the rows of its descendants). */
export interface ForgetOp extends Base {
  readonly kind: 'forget';
  readonly path: RelPath;
}

/** Write or update the link file for a Box web link (download-only). */
export interface WriteWeblinkOp extends Base {
  readonly kind: 'write-weblink';
  readonly path: RelPath;
  readonly remoteId: RemoteId;
  readonly url: string;
  readonly guard: LocalGuard;
}

export type ProblemCode =
  | 'name-invalid'
  | 'name-too-long'
  | 'case-clash'
  | 'unicode-clash'
  | 'symlink'
  | 'special-file'
  | 'type-change-blocked';

/** Something the planner will not do and the user should know about. Recorded, not retried. */
export interface ReportOp extends Base {
  readonly kind: 'report';
  readonly path: RelPath;
  readonly problem: ProblemCode;
}

export type Operation =
  | DownloadOp
  | UploadOp
  | UploadVersionOp
  | CreateRemoteFolderOp
  | CreateLocalFolderOp
  | RemoteMoveOp
  | LocalMoveOp
  | RemoteTrashOp
  | LocalTrashOp
  | RemoteRestoreOp
  | ConflictCopyOp
  | LinkOp
  | ForgetOp
  | WriteWeblinkOp
  | ReportOp;

export type OperationKind = Operation['kind'];

/** A batch of independent operations, plus what the planner could not decide yet. */
export interface Plan {
  readonly ops: readonly Operation[];
  /**
   * True when the plan holds nothing but reports: the root has converged as far as it can for now. Deferred
   * paths (backoff not yet elapsed) and reported problems do not hold it; the failures table keeps them.
   */
  readonly quiescent: boolean;
}

/** The path an operation acts on, for status, locking and the failures table. */
export function opPath(op: Operation): RelPath {
  switch (op.kind) {
    case 'remote-move':
    case 'local-move':
      return op.to;
    default:
      return op.path;
  }
}

/**
 * Every path an operation touches: both ends of a move or a conflict copy, else its one path. The batcher keeps
 * ancestor/descendant pairs out of one batch by them, a replan re-observes them, a hinted pass keeps watching them.
 */
export function pathsTouched(op: Operation): RelPath[] {
  switch (op.kind) {
    case 'remote-move':
    case 'local-move':
      return [op.from, op.to];
    case 'conflict-copy':
      return [op.path, op.to];
    default:
      return [op.path];
  }
}

export function assertNever(x: never): never {
  throw new Error(`unexpected value: ${JSON.stringify(x)}`);
}
