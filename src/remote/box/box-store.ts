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
  RemoteStore,
  RestoreRequest,
} from '../../ports/remote-store.js';
import { download, type DownloadDeps } from './download.js';
import type { Mutations } from './mutations.js';
import type { TreeReader } from './tree.js';
import { uploadNew, uploadVersion, type UploadDeps } from './upload.js';

export class BoxStore implements RemoteStore {
  constructor(
    private readonly tree: TreeReader,
    private readonly mutations: Mutations,
    private readonly downloadDeps: DownloadDeps,
    private readonly uploadDeps: UploadDeps,
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

  download(req: DownloadRequest): Promise<DownloadResult> {
    return download(this.downloadDeps, req);
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
