/** RemoteStore over Box: the port's methods, each delegated to the module that owns that part of the wire. */
import type { RemoteEntry, RemoteId } from '../../core/model.js';
import type {
  AccountInfo,
  DownloadRequest,
  DownloadResult,
  ListingPage,
  MoveRequest,
  NewFileUpload,
  NewVersionUpload,
  PrefetchFile,
  PrefetchHandle,
  RemoteStore,
  RestoreRequest,
} from '../../ports/remote-store.js';
import { download, type DownloadDeps } from './download.js';
import type { Mutations } from './mutations.js';
import type { TreeReader } from './tree.js';
import { uploadNew, uploadVersion, type UploadDeps } from './upload.js';
import type { ZipPrefetcher } from './zip-prefetch.js';
import { checkedAnswer, type AskedFor } from './answer-check.js';

/** The SHA-1 of no bytes: what Box lists for an empty file. */
const EMPTY_SHA1 = 'da39a3ee5e6b4b0d3255bfef95601890afd80709';

export class BoxStore implements RemoteStore {
  constructor(
    private readonly tree: TreeReader,
    private readonly mutations: Mutations,
    private readonly downloadDeps: DownloadDeps,
    private readonly uploadDeps: UploadDeps,
    /** Zip downloads for many small files (zip-prefetch.ts); none: every file is downloaded alone. */
    private readonly zip?: ZipPrefetcher,
  ) {}

  account(): Promise<AccountInfo> {
    return this.tree.account();
  }

  getItem(id: RemoteId, kind: 'file' | 'folder' | 'weblink'): Promise<RemoteEntry | null> {
    return this.tree.getItem(id, kind);
  }

  listFolder(id: RemoteId, signal?: AbortSignal): AsyncIterable<ListingPage> {
    return this.tree.listFolder(id, signal);
  }

  pathIds(id: RemoteId): Promise<readonly RemoteId[]> {
    return this.tree.pathIds(id);
  }

  async download(req: DownloadRequest): Promise<DownloadResult> {
    // A file Box lists as empty (size 0, the SHA-1 of no bytes) has nothing to fetch: its temp file, empty, is made
    // durable as a download's would be, without an API call (one a file of Box's per-user budget) or a body. The
    // result is the listing's, which a download would have had to match anyway.
    if (req.versionId === undefined && req.expectSizeBytes === 0 && req.expectSha1 === EMPTY_SHA1) {
      req.signal?.throwIfAborted();
      await req.destFile.syncAndClose();
      req.onProgress?.({ doneBytes: 0, totalBytes: 0 });
      return { sha1: EMPTY_SHA1, sizeBytes: 0 };
    }
    const fromZip = this.zip === undefined ? null : await this.zip.download(req);
    return fromZip ?? download(this.downloadDeps, req);
  }

  prefetch(files: readonly PrefetchFile[], signal?: AbortSignal): PrefetchHandle {
    return this.zip === undefined ? { release: () => undefined } : this.zip.prefetch(files, signal);
  }

  prefetched(id: RemoteId): boolean {
    return this.zip?.has(id) === true;
  }

  async uploadNew(req: NewFileUpload): Promise<RemoteEntry> {
    const asked = { what: 'upload', kind: 'file', parentId: req.parentId, name: req.name } as const;
    return this.checked(asked, await uploadNew(this.uploadDeps, req));
  }

  async uploadVersion(req: NewVersionUpload): Promise<RemoteEntry> {
    const asked = { what: 'upload of a new version', kind: 'file', id: req.id, name: req.name, ...(req.parentId === undefined ? {} : { parentId: req.parentId }) } as const;
    return this.checked(asked, await uploadVersion(this.uploadDeps, req));
  }

  async createFolder(parentId: RemoteId, name: string): Promise<RemoteEntry> {
    return this.checked({ what: 'folder create', kind: 'folder', parentId, name }, await this.mutations.createFolder(parentId, name));
  }

  async move(req: MoveRequest): Promise<RemoteEntry> {
    return this.checked(askedOf('move', req), await this.mutations.move(req));
  }

  /** The answer, remembered, once it matches what was asked (answer-check.ts: a GET when it does not). */
  private async checked(asked: AskedFor, got: RemoteEntry): Promise<RemoteEntry> {
    const read = (id: RemoteId, kind: AskedFor['kind']): Promise<RemoteEntry | null> => {
      this.tree.forget(id);
      return this.tree.getItem(id, kind);
    };
    return this.tree.remember(await checkedAnswer(asked, got, read, this.uploadDeps.logger));
  }

  async trash(id: RemoteId, kind: 'file' | 'folder' | 'weblink', ifMatch?: string): Promise<void> {
    await this.mutations.trash(id, kind, ifMatch);
    this.tree.forget(id);
  }

  async restore(req: RestoreRequest): Promise<RemoteEntry> {
    return this.checked(askedOf('restore', req), await this.mutations.restore(req));
  }

  setSyncState(folderId: RemoteId, state: 'synced' | 'not_synced' | 'partially_synced'): Promise<void> {
    return this.mutations.setSyncState(folderId, state);
  }
}

/** What a move or restore asked for: the item, and the parent and name when it named them. */
function askedOf(what: string, req: MoveRequest | RestoreRequest): AskedFor {
  return {
    what,
    kind: req.kind,
    id: req.id,
    ...(req.parentId === undefined ? {} : { parentId: req.parentId }),
    ...(req.name === undefined ? {} : { name: req.name }),
  };
}
