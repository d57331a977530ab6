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
    const fromZip = this.zip === undefined ? null : await this.zip.download(req);
    return fromZip ?? download(this.downloadDeps, req);
  }

  prefetch(files: readonly PrefetchFile[], signal?: AbortSignal): PrefetchHandle {
    return this.zip === undefined ? { release: () => undefined } : this.zip.prefetch(files, signal);
  }

  async uploadNew(req: NewFileUpload): Promise<RemoteEntry> {
    return this.tree.remember(await uploadNew(this.uploadDeps, req));
  }

  async uploadVersion(req: NewVersionUpload): Promise<RemoteEntry> {
    return this.tree.remember(await uploadVersion(this.uploadDeps, req));
  }

  async createFolder(parentId: RemoteId, name: string): Promise<RemoteEntry> {
    return this.tree.remember(await this.mutations.createFolder(parentId, name));
  }

  async move(req: MoveRequest): Promise<RemoteEntry> {
    return this.tree.remember(await this.mutations.move(req));
  }

  async trash(id: RemoteId, kind: 'file' | 'folder' | 'weblink', ifMatch?: string): Promise<void> {
    await this.mutations.trash(id, kind, ifMatch);
    this.tree.forget(id);
  }

  async restore(req: RestoreRequest): Promise<RemoteEntry> {
    return this.tree.remember(await this.mutations.restore(req));
  }

  setSyncState(folderId: RemoteId, state: 'synced' | 'not_synced' | 'partially_synced'): Promise<void> {
    return this.mutations.setSyncState(folderId, state);
  }
}
