/**
 * RemoteStore: everything the engine may ask of the remote service (Box), in domain terms.
 *
 * Implementations: src/remote/box (the real adapter over HTTP) and test/support/fake-remote-store (in memory).
 * The same contract suite (test/support/remote-store-contract.ts) runs against both.
 *
 * Semantics shared by every method:
 * - Ids are opaque strings; "0" is the account root.
 * - Every failure is a SyncError (core/errors.ts) with a stable code and a disposition. Notably:
 *   `precondition_failed` (412, ifMatch did not match): replan. `item_name_in_use` (409): replan, with
 *   details.conflictId. `not_found`: replan. `rate_limited`: retry with retryAfterMs. `auth_revoked`: fatal.
 * - Methods that take `ifMatch` send it as If-Match; Box answers 412 when the item changed (or is gone).
 * - Nothing Box-shaped (snake_case JSON) is returned: only core/model types.
 * - `signal` aborts the call; an aborted upload session is aborted on the server too, unless the abort reason is
 *   `shutdownReason()` (core/errors.ts): a shutdown keeps the session and its record, so the next process resumes.
 */
import type { RemoteEntry, RemoteId } from '../core/model.js';
import type { TempFile, UploadReader } from './local-fs.js';

export interface TransferProgress {
  readonly doneBytes: number;
  readonly totalBytes: number;
}

export interface DownloadRequest {
  readonly id: RemoteId;
  /**
   * The file to write, a temp file the caller opened empty (LocalFs.openTemp): the bytes are written through it,
   * and it is fsynced and closed before the download resolves (so the caller need not open it again to make them
   * durable), or closed when the download fails.
   */
  readonly destFile: TempFile;
  /** SHA-1 the bytes must have; a mismatch throws SyncError code `checksum_mismatch` (retry) and leaves destFile. */
  readonly expectSha1: string | null;
  /**
   * The size Box listed for it. When given, the download never writes more: an answer that announces or sends
   * more bytes is refused (`checksum_mismatch`), free space is checked before the first byte (`disk_full`,
   * retry), and the whole transfer has a deadline that grows with the size.
   */
  readonly expectSizeBytes?: number;
  /** Download this file_version instead of the current one. */
  readonly versionId?: string;
  readonly onProgress?: (p: TransferProgress) => void;
  readonly signal?: AbortSignal;
}

/** A file a plan is about to download, announced so the adapter can bring many at once (RemoteStore.prefetch). */
export interface PrefetchFile {
  readonly id: RemoteId;
  /** Its name on Box (the last segment of its path). */
  readonly name: string;
  readonly sha1: string | null;
  readonly sizeBytes: number;
}

/** What a prefetch holds until released: release it when the plan's downloads have ended. */
export interface PrefetchHandle {
  release(): void;
}

export interface DownloadResult {
  readonly sha1: string;
  readonly sizeBytes: number;
}

export interface UploadRequest {
  /**
   * The local file, opened through LocalFs.openForUpload (the caller opens and closes it). It is streamed, never
   * buffered whole, and read as a fixed snapshot: exactly `source.size` bytes of the inode opened. A file that
   * shrinks or grows while it uploads fails the upload at once with `local_changed` (replan), the request abandoned.
   */
  readonly source: UploadReader;
  readonly name: string;
  /** Local mtime, sent as content_modified_at (Box keeps whole seconds). */
  readonly modifiedAtMs: number;
  /** Known SHA-1 of the file, if the caller hashed it already (sent as Content-MD5 / Digest). */
  readonly sha1?: string;
  readonly onProgress?: (p: TransferProgress) => void;
  readonly signal?: AbortSignal;
  /**
   * Key under which a resumable upload session is persisted (usually `${rootId}:${path}`). When set and the
   * file is at or above the session threshold, the session id, endpoints and uploaded parts are saved through
   * the UploadSessionStore so that a new process can resume it.
   */
  readonly resumeKey?: string;
}

export interface NewFileUpload extends UploadRequest {
  readonly parentId: RemoteId;
}

export interface NewVersionUpload extends UploadRequest {
  readonly id: RemoteId;
  /** Etag the plan was based on. */
  readonly ifMatch?: string;
  /** The folder the file is in as the plan saw it: an answer naming another is checked with a GET (never just believed). */
  readonly parentId?: RemoteId;
}

export interface MoveRequest {
  readonly id: RemoteId;
  readonly kind: 'file' | 'folder' | 'weblink';
  readonly parentId?: RemoteId;
  readonly name?: string;
  readonly ifMatch?: string;
}

export interface RestoreRequest {
  readonly id: RemoteId;
  readonly kind: 'file' | 'folder';
  readonly parentId?: RemoteId;
  readonly name?: string;
}

export interface AccountInfo {
  readonly userId: string;
  readonly login: string;
  readonly name: string;
  readonly spaceAmountBytes: number;
  readonly spaceUsedBytes: number;
  readonly maxUploadSizeBytes: number;
}

/**
 * An item of a listing that the adapter refused to decode: a malformed entry (a field missing or of the wrong
 * type), a name Box itself forbids, or a duplicate id. It never reaches the journal; the engine parks it (the
 * failures table, disposition 'skip') and reports it, and the rest of the listing syncs as usual.
 */
export interface RejectedItem {
  /** The Box id when the entry had a usable one, else null. */
  readonly id: RemoteId | null;
  /** The name as Box sent it, already escaped for a terminal (core/escape.ts), or null when it had none. */
  readonly name: string | null;
  readonly kind: 'file' | 'folder' | 'weblink' | null;
  /** The folder whose listing held it. */
  readonly parentId: RemoteId;
  /** Which endpoint answered it (e.g. `GET /folders/{id}/items`). */
  readonly endpoint: string;
  /** The offending field (e.g. `name`, `sha1`, `id`). */
  readonly field: string;
  /** Why, in words, escaped. */
  readonly reason: string;
}

/** One page of a folder listing: the decoded children, and the ones the adapter refused (see RejectedItem). */
export interface ListingPage {
  readonly entries: readonly RemoteEntry[];
  readonly rejected: readonly RejectedItem[];
}

export interface RemoteStore {
  /** Who we are, quota and size caps (GET /users/me). Also the cheapest token check. */
  account(): Promise<AccountInfo>;

  /** The item, or null when it is gone, trashed or not visible to us. */
  getItem(id: RemoteId, kind: 'file' | 'folder' | 'weblink'): Promise<RemoteEntry | null>;

  /**
   * The active children of a folder, page by page (marker paging, up to 1000 per page). Throws `not_found`
   * when the folder itself is gone. Throws SyncError code `listing_incomplete` (disposition retry) after the
   * pages it could read when the listing cannot be proven complete (fewer entries than `total_count`, a paging
   * marker or offset that repeats or does not advance, a deadline passed, a page that stayed malformed after
   * its retries): the pages already yielded are true, but a child that did not appear must NOT be taken as
   * deleted.
   */
  listFolder(id: RemoteId, signal?: AbortSignal): AsyncIterable<ListingPage>;

  /** Ids of the folders from the account root down to (excluding) this item. */
  pathIds?(id: RemoteId): Promise<readonly RemoteId[]>;

  download(req: DownloadRequest): Promise<DownloadResult>;
  /**
   * Optional: the downloads a plan is about to run. An adapter may fetch many of them at once (Box: zip downloads)
   * and answer the later `download()` of each from there, with the same checks; anything it cannot serve that way
   * is downloaded alone. Never throws; the handle frees what was fetched and not used.
   */
  prefetch?(files: readonly PrefetchFile[], signal?: AbortSignal): PrefetchHandle;
  /**
   * Optional: whether a prefetch holds this file (its `download()` will come from an archive on disk, not a request
   * of its own). The engine runs such downloads in groups (one queue task, one commit call for several).
   */
  prefetched?(id: RemoteId): boolean;
  uploadNew(req: NewFileUpload): Promise<RemoteEntry>;
  uploadVersion(req: NewVersionUpload): Promise<RemoteEntry>;

  createFolder(parentId: RemoteId, name: string): Promise<RemoteEntry>;
  move(req: MoveRequest): Promise<RemoteEntry>;
  /** Move to the Box trash (folders recursively). Never a permanent delete. */
  trash(id: RemoteId, kind: 'file' | 'folder' | 'weblink', ifMatch?: string): Promise<void>;
  restore(req: RestoreRequest): Promise<RemoteEntry>;

  /** Mark or unmark a folder for the `sync` event stream (folder `sync_state`). */
  setSyncState(folderId: RemoteId, state: 'synced' | 'not_synced' | 'partially_synced'): Promise<void>;
}

/**
 * Persistence for resumable upload sessions (implemented by the journal). The Box adapter saves a session
 * as soon as it is created and records each part once the server confirmed it.
 */
export interface UploadSessionRecord {
  readonly key: string;
  readonly sessionId: string;
  /** Absolute URLs from `session_endpoints`. */
  readonly endpoints: Readonly<Record<string, string>>;
  readonly partSizeBytes: number;
  readonly totalParts: number;
  readonly fileSizeBytes: number;
  /** SHA-1 of the whole source file when the session started: a changed file cannot resume. */
  readonly sourceSha1: string | null;
  readonly sourceMtimeMs: number;
  readonly expiresAtMs: number;
  /** For a new version: the file id; for a new file: null. */
  readonly fileId: string | null;
  readonly parts: readonly { readonly partId: string; readonly offset: number; readonly size: number; readonly sha1: string }[];
}

export interface UploadSessionStore {
  get(key: string): UploadSessionRecord | undefined;
  put(rec: UploadSessionRecord): void;
  addPart(key: string, part: UploadSessionRecord['parts'][number]): void;
  delete(key: string): void;
  /** All sessions, for the cleanup schedule (expired ones are aborted and dropped). */
  list(): readonly UploadSessionRecord[];
}
