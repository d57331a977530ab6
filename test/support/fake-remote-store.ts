/**
 * An in-memory RemoteStore, faithful to the contract in src/ports/remote-store.ts (the same contract suite runs
 * against it and against the Box adapter over HTTP): etags and sequence ids change on every change of an item,
 * names are unique per folder case-insensitively across files and folders, trash keeps ids and restores them,
 * `ifMatch` answers `precondition_failed` (also when the item is gone), downloads verify the SHA-1.
 *
 * `changes` is a RemoteChanges over the fake's own change log (one hint per change), for engine tests of the
 * event path. File contents live in memory: keep test files small. Extra helpers (`seedFolder`, `seedFile`, `editRemotely`,
 * `failNext`, `calls`) let engine tests arrange remote state and inject failures without HTTP.
 */
import { createHash } from 'node:crypto';
import type { RemoteEntry, RemoteId, RemoteKind } from '../../src/core/model.js';
import { asRemoteId } from '../../src/core/model.js';
import type { SyncError } from '../../src/core/errors.js';
import type { RemoteChanges, RemoteHint, StreamType } from '../../src/ports/remote-changes.js';
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
} from '../../src/ports/remote-store.js';
import { remoteError } from '../../src/remote/box/error-codes.js';

interface Version {
  readonly id: string;
  readonly content: Buffer;
  readonly sha1: string;
}

interface Item {
  id: RemoteId;
  kind: RemoteKind;
  parentId: RemoteId | null;
  name: string;
  etag: number;
  sequenceId: number;
  modifiedAtMs: number;
  versions: Version[];
  url: string | null;
  status: 'active' | 'trashed' | 'deleted';
  /** Set on the item the user trashed (not on descendants trashed with it). */
  trashedDirectly: boolean;
  syncState: 'synced' | 'not_synced' | 'partially_synced';
}

export type FakeMethod = keyof RemoteStore;

export interface FakeRemoteStoreOptions {
  /** Entries per listFolder page (Box: up to 1000). Small values exercise paging. */
  readonly pageSize?: number;
  readonly now?: () => number;
  readonly maxUploadSizeBytes?: number;
  /** How long `changes.waitForChange` waits before answering 'timeout'. Default 30 000. */
  readonly longPollTimeoutMs?: number;
}

const sha1Hex = (b: Buffer): string => createHash('sha1').update(b).digest('hex');
const fold = (name: string): string => name.normalize('NFC').toLowerCase();

export class FakeRemoteStore implements RemoteStore {
  private readonly items = new Map<RemoteId, Item>();
  private nextId = 1000;
  private nextVersion = 5000;
  private readonly pageSize: number;
  private readonly now: () => number;
  private readonly maxUploadSizeBytes: number;
  private readonly failures: { method: FakeMethod; error: SyncError }[] = [];
  /** Every change as a hint, in order; a stream position is an index into this log. */
  private readonly events: RemoteHint[] = [];
  private readonly waiters = new Set<() => void>();
  private readonly longPollTimeoutMs: number;
  /**
   * RemoteChanges over this store's own change log: positions are decimal strings (indexes), `fetch` returns
   * one hint per change after a position, `waitForChange` resolves 'changed' as soon as the log passes the
   * position and 'timeout' after `longPollTimeoutMs`. The stream type is ignored (every change is visible).
   */
  readonly changes: RemoteChanges = {
    now: async () => String(this.events.length),
    fetch: async (_stream: StreamType, position: string) => {
      const from = Number(position);
      if (!Number.isInteger(from) || from < 0 || from > this.events.length) {
        throw remoteError('stream_position_invalid', `stream position ${position} is unknown`);
      }
      return { hints: this.events.slice(from), nextPosition: String(this.events.length) };
    },
    waitForChange: (_stream: StreamType, position: string, signal?: AbortSignal) =>
      new Promise<'changed' | 'timeout'>((resolve, reject) => {
        if (this.events.length > Number(position)) return resolve('changed');
        const done = (): void => {
          clearTimeout(timer);
          this.waiters.delete(wake);
          signal?.removeEventListener('abort', onAbort);
        };
        const wake = (): void => {
          done();
          resolve('changed');
        };
        const onAbort = (): void => {
          done();
          reject(remoteError('aborted', 'long poll cancelled'));
        };
        const timer = setTimeout(() => {
          done();
          resolve('timeout');
        }, this.longPollTimeoutMs);
        this.waiters.add(wake);
        signal?.addEventListener('abort', onAbort, { once: true });
      }),
  };
  /** Every call made, in order, with its method name (for assertions in engine tests). */
  readonly calls: { method: FakeMethod; args: unknown[] }[] = [];

  constructor(opts: FakeRemoteStoreOptions = {}) {
    this.pageSize = opts.pageSize ?? 1000;
    this.now = opts.now ?? Date.now;
    this.maxUploadSizeBytes = opts.maxUploadSizeBytes ?? 5 * 1024 ** 3;
    this.longPollTimeoutMs = opts.longPollTimeoutMs ?? 30_000;
    this.items.set(asRemoteId('0'), {
      id: asRemoteId('0'),
      kind: 'folder',
      parentId: null,
      name: 'All Files',
      etag: 0,
      sequenceId: 0,
      modifiedAtMs: this.now(),
      versions: [],
      url: null,
      status: 'active',
      trashedDirectly: false,
      syncState: 'not_synced',
    });
  }

  // ---- test helpers -------------------------------------------------------------------------------------

  /** Make the next call of `method` throw `error` (queued; one failure per call). */
  failNext(method: FakeMethod, error: SyncError): void {
    this.failures.push({ method, error });
  }

  seedFolder(parentId: RemoteId, name: string): RemoteEntry {
    return this.toEntry(this.insert(parentId, name, 'folder', null, null, this.now()));
  }

  seedFile(parentId: RemoteId, name: string, content: string | Buffer, modifiedAtMs = this.now()): RemoteEntry {
    return this.toEntry(this.insert(parentId, name, 'file', Buffer.from(content), null, modifiedAtMs));
  }

  seedWeblink(parentId: RemoteId, name: string, url: string): RemoteEntry {
    return this.toEntry(this.insert(parentId, name, 'weblink', null, url, this.now()));
  }

  /** A change made by someone else: new content for a file (new version, new etag). */
  editRemotely(id: RemoteId, content: string | Buffer): RemoteEntry {
    const item = this.mustGetActive(id);
    this.addVersion(item, Buffer.from(content));
    item.modifiedAtMs = this.now();
    this.touch(item, 'ITEM_UPLOAD');
    return this.toEntry(item);
  }

  /** The content of a file's current version, or undefined. */
  contentOf(id: RemoteId): Buffer | undefined {
    return this.items.get(id)?.versions.at(-1)?.content;
  }

  /** Every item, including trashed ones (for assertions). */
  allEntries(): RemoteEntry[] {
    return [...this.items.values()].filter((i) => i.id !== '0').map((i) => this.toEntry(i));
  }

  /** Child of a folder by name (case-insensitive), active only. */
  childByName(parentId: RemoteId, name: string): RemoteEntry | undefined {
    const item = this.activeChildren(parentId).find((c) => fold(c.name) === fold(name));
    return item ? this.toEntry(item) : undefined;
  }

  // ---- RemoteStore ----------------------------------------------------------------------------------------

  async account(): Promise<AccountInfo> {
    this.enter('account', []);
    let used = 0;
    for (const i of this.items.values()) for (const v of i.versions) used += v.content.length;
    return {
      userId: '1',
      login: 'fake@example.com',
      name: 'Fake User',
      spaceAmountBytes: 10 * 1024 ** 4,
      spaceUsedBytes: used,
      maxUploadSizeBytes: this.maxUploadSizeBytes,
    };
  }

  async getItem(id: RemoteId, kind: 'file' | 'folder' | 'weblink'): Promise<RemoteEntry | null> {
    this.enter('getItem', [id, kind]);
    const item = this.items.get(id);
    if (!item || item.kind !== kind || item.status !== 'active') return null;
    return this.toEntry(item);
  }

  async *listFolder(id: RemoteId): AsyncIterable<ListingPage> {
    this.enter('listFolder', [id]);
    const folder = this.items.get(id);
    if (!folder || folder.kind !== 'folder' || folder.status !== 'active') {
      throw remoteError('not_found', `folder ${id} not found`, { details: { id } });
    }
    // Box orders folders, then files, then web links; marker paging walks a stable order.
    const rank = { folder: 0, file: 1, weblink: 2 } as const;
    const children = this.activeChildren(id).sort((a, b) => rank[a.kind] - rank[b.kind] || Number(a.id) - Number(b.id));
    if (children.length === 0) {
      yield { entries: [], rejected: [] };
      return;
    }
    for (let i = 0; i < children.length; i += this.pageSize) {
      yield { entries: children.slice(i, i + this.pageSize).map((c) => this.toEntry(c)), rejected: [] };
    }
  }

  async pathIds(id: RemoteId): Promise<readonly RemoteId[]> {
    this.enter('pathIds', [id]);
    const out: RemoteId[] = [];
    let cur = this.items.get(id);
    if (!cur) throw remoteError('not_found', `item ${id} not found`, { details: { id } });
    while (cur.parentId !== null) {
      out.unshift(cur.parentId);
      const next = this.items.get(cur.parentId);
      if (!next) break;
      cur = next;
    }
    return out;
  }

  async download(req: DownloadRequest): Promise<DownloadResult> {
    this.enter('download', [req]);
    const item = this.items.get(req.id);
    const version = item?.kind !== 'file' || item.status !== 'active' ? undefined : req.versionId === undefined ? item.versions.at(-1) : item.versions.find((v) => v.id === req.versionId);
    if (!version) {
      // As the port says: the caller's file is closed when the download fails.
      await req.destFile.close();
      throw remoteError('not_found', `file ${req.id}${req.versionId === undefined ? '' : ` version ${req.versionId}`} not found`, { details: { id: req.id } });
    }
    await req.destFile.write(version.content);
    await req.destFile.syncAndClose();
    req.onProgress?.({ doneBytes: version.content.length, totalBytes: version.content.length });
    if (req.expectSha1 !== null && req.expectSha1.toLowerCase() !== version.sha1) {
      throw remoteError('checksum_mismatch', `downloaded file ${req.id} has SHA-1 ${version.sha1}, expected ${req.expectSha1}`, {
        details: { id: req.id, expected: req.expectSha1, actual: version.sha1 },
      });
    }
    return { sha1: version.sha1, sizeBytes: version.content.length };
  }

  async uploadNew(req: NewFileUpload): Promise<RemoteEntry> {
    this.enter('uploadNew', [req]);
    this.checkAbort(req.signal);
    const parent = this.mustGetActiveFolder(req.parentId);
    this.checkName(parent.id, req.name, null);
    const content = await req.source.read(0, req.source.size);
    this.checkUpload(content, req.sha1);
    const item = this.insert(parent.id, req.name, 'file', content, null, truncSec(req.modifiedAtMs));
    req.onProgress?.({ doneBytes: content.length, totalBytes: content.length });
    return this.toEntry(item);
  }

  async uploadVersion(req: NewVersionUpload): Promise<RemoteEntry> {
    this.enter('uploadVersion', [req]);
    this.checkAbort(req.signal);
    const item = this.guarded(req.id, 'file', req.ifMatch);
    if (fold(req.name) !== fold(item.name) && item.parentId !== null) this.checkName(item.parentId, req.name, item.id);
    const content = await req.source.read(0, req.source.size);
    this.checkUpload(content, req.sha1);
    this.addVersion(item, content);
    item.name = req.name;
    item.modifiedAtMs = truncSec(req.modifiedAtMs);
    this.touch(item, 'ITEM_UPLOAD');
    req.onProgress?.({ doneBytes: content.length, totalBytes: content.length });
    return this.toEntry(item);
  }

  async createFolder(parentId: RemoteId, name: string): Promise<RemoteEntry> {
    this.enter('createFolder', [parentId, name]);
    const parent = this.mustGetActiveFolder(parentId);
    this.checkName(parent.id, name, null);
    return this.toEntry(this.insert(parent.id, name, 'folder', null, null, this.now()));
  }

  async move(req: MoveRequest): Promise<RemoteEntry> {
    this.enter('move', [req]);
    const item = this.guarded(req.id, req.kind, req.ifMatch);
    const parentId = req.parentId ?? item.parentId;
    if (parentId === null) throw remoteError('forbidden', `item ${req.id} cannot be moved`);
    const parent = this.mustGetActiveFolder(parentId);
    for (let p: Item | undefined = parent; p; p = p.parentId === null ? undefined : this.items.get(p.parentId)) {
      if (p.id === item.id) throw remoteError('bad_request', `cannot move folder ${item.id} into itself`, { details: { code: 'cyclical_folder_structure' } });
    }
    const name = req.name ?? item.name;
    this.checkName(parent.id, name, item.id);
    item.parentId = parent.id;
    item.name = name;
    this.touch(item, req.parentId !== undefined ? 'ITEM_MOVE' : 'ITEM_RENAME');
    return this.toEntry(item);
  }

  async trash(id: RemoteId, kind: 'file' | 'folder' | 'weblink', ifMatch?: string): Promise<void> {
    this.enter('trash', [id, kind, ifMatch]);
    const item = this.guarded(id, kind, ifMatch);
    const mark = (i: Item): void => {
      i.status = 'trashed';
      this.touch(i, 'ITEM_TRASH');
      for (const c of this.allChildren(i.id)) if (c.status === 'active') mark(c);
    };
    mark(item);
    item.trashedDirectly = true;
  }

  async restore(req: RestoreRequest): Promise<RemoteEntry> {
    this.enter('restore', [req]);
    const item = this.items.get(req.id);
    if (!item || item.kind !== req.kind || item.status !== 'trashed' || !item.trashedDirectly) {
      throw remoteError('not_found', `${req.kind} ${req.id} is not in the trash`, { details: { id: req.id } });
    }
    const parentId = req.parentId ?? item.parentId;
    const parent = parentId === null ? undefined : this.items.get(parentId);
    if (!parent || parent.kind !== 'folder' || parent.status !== 'active') {
      throw remoteError('not_found', `the folder to restore ${req.id} into is gone`, { details: { id: req.id, parentId } });
    }
    const name = req.name ?? item.name;
    this.checkName(parent.id, name, item.id);
    const revive = (i: Item): void => {
      i.status = 'active';
      i.trashedDirectly = false;
      this.touch(i, 'ITEM_UNDELETE_VIA_TRASH');
      for (const c of this.allChildren(i.id)) if (c.status === 'trashed' && !c.trashedDirectly) revive(c);
    };
    item.parentId = parent.id;
    item.name = name;
    revive(item);
    return this.toEntry(item);
  }

  async setSyncState(folderId: RemoteId, state: 'synced' | 'not_synced' | 'partially_synced'): Promise<void> {
    this.enter('setSyncState', [folderId, state]);
    const folder = this.mustGetActiveFolder(folderId);
    folder.syncState = state;
    this.touch(folder, state === 'synced' ? 'ITEM_SYNC' : 'ITEM_UNSYNC');
  }

  // ---- internals ---------------------------------------------------------------------------------------------

  private enter(method: FakeMethod, args: unknown[]): void {
    this.calls.push({ method, args });
    const i = this.failures.findIndex((f) => f.method === method);
    if (i >= 0) {
      const [f] = this.failures.splice(i, 1);
      throw f!.error;
    }
  }

  private checkAbort(signal: AbortSignal | undefined): void {
    if (signal?.aborted) throw remoteError('aborted', 'upload cancelled');
  }

  private checkUpload(content: Buffer, sha1: string | undefined): void {
    if (content.length > this.maxUploadSizeBytes) {
      throw remoteError('file_too_large', `file of ${content.length} bytes exceeds the ${this.maxUploadSizeBytes}-byte limit`);
    }
    if (sha1 !== undefined && sha1.toLowerCase() !== sha1Hex(content)) {
      throw remoteError('checksum_mismatch', 'uploaded bytes do not match the SHA-1 given (the file changed while uploading)');
    }
  }

  private insert(parentId: RemoteId, name: string, kind: RemoteKind, content: Buffer | null, url: string | null, modifiedAtMs: number): Item {
    const parent = this.mustGetActiveFolder(parentId);
    this.checkName(parent.id, name, null);
    const item: Item = {
      id: asRemoteId(String(this.nextId++)),
      kind,
      parentId: parent.id,
      name,
      etag: 0,
      sequenceId: 0,
      modifiedAtMs,
      versions: [],
      url,
      status: 'active',
      trashedDirectly: false,
      syncState: 'not_synced',
    };
    if (content) this.addVersion(item, content);
    this.items.set(item.id, item);
    this.record(item, kind === 'file' ? 'ITEM_UPLOAD' : 'ITEM_CREATE');
    return item;
  }

  private addVersion(item: Item, content: Buffer): void {
    item.versions.push({ id: String(this.nextVersion++), content, sha1: sha1Hex(content) });
  }

  private touch(item: Item, eventType: string): void {
    item.etag += 1;
    item.sequenceId += 1;
    this.record(item, eventType);
  }

  private record(item: Item, eventType: string): void {
    this.events.push({
      id: item.id,
      kind: item.kind,
      // What the Box adapter decides from an event, decided the same way here.
      change: item.status !== 'active' ? 'trashed' : /RESTORE|UNDELETE/.test(eventType) ? 'restored' : 'changed',
      syncStateSet: eventType === 'ITEM_SYNC',
      parentId: item.parentId,
      sequenceId: String(item.sequenceId),
      etag: String(item.etag),
      name: item.name,
    });
    for (const wake of [...this.waiters]) wake();
  }

  private allChildren(parentId: RemoteId): Item[] {
    return [...this.items.values()].filter((i) => i.parentId === parentId);
  }

  private activeChildren(parentId: RemoteId): Item[] {
    return this.allChildren(parentId).filter((i) => i.status === 'active');
  }

  private checkName(parentId: RemoteId, name: string, self: RemoteId | null): void {
    if (name.length === 0 || name.length > 255 || name === '.' || name === '..' || /[/\\]|[\x00-\x1f\x7f]/.test(name) || name.endsWith(' ')) {
      throw remoteError('name_invalid', `Box does not accept the name ${JSON.stringify(name)}`, { details: { name } });
    }
    const clash = this.activeChildren(parentId).find((c) => c.id !== self && fold(c.name) === fold(name));
    if (clash) {
      throw remoteError('item_name_in_use', `an item named ${JSON.stringify(clash.name)} already exists in folder ${parentId}`, {
        details: { conflictId: clash.id, conflictKind: clash.kind, conflictEtag: String(clash.etag), conflictSha1: clash.versions.at(-1)?.sha1 ?? null },
      });
    }
  }

  /** Box: If-Match on a missing item answers 412, not 404. */
  private guarded(id: RemoteId, kind: RemoteKind, ifMatch: string | undefined): Item {
    const item = this.items.get(id);
    const present = item && item.kind === kind && item.status === 'active' ? item : undefined;
    if (ifMatch !== undefined && (!present || String(present.etag) !== ifMatch)) {
      throw remoteError('precondition_failed', `${kind} ${id} changed since it was read (etag ${ifMatch})`, { details: { id } });
    }
    if (!present) throw remoteError('not_found', `${kind} ${id} not found`, { details: { id } });
    return present;
  }

  private mustGetActive(id: RemoteId): Item {
    const item = this.items.get(id);
    if (!item || item.status !== 'active') throw remoteError('not_found', `item ${id} not found`, { details: { id } });
    return item;
  }

  private mustGetActiveFolder(id: RemoteId): Item {
    const item = this.mustGetActive(id);
    if (item.kind !== 'folder') throw remoteError('not_found', `folder ${id} not found`, { details: { id } });
    return item;
  }

  private toEntry(i: Item): RemoteEntry {
    const v = i.versions.at(-1);
    return {
      id: i.id,
      kind: i.kind,
      parentId: i.parentId,
      name: i.name,
      etag: String(i.etag),
      sequenceId: String(i.sequenceId),
      sha1: i.kind === 'file' ? (v?.sha1 ?? null) : null,
      sizeBytes: i.kind === 'file' ? (v?.content.length ?? 0) : i.kind === 'folder' ? this.folderSize(i.id) : 0,
      modifiedAtMs: i.modifiedAtMs,
      versionId: i.kind === 'file' ? (v?.id ?? null) : null,
      url: i.url,
      status: i.status,
    };
  }

  private folderSize(id: RemoteId): number {
    let n = 0;
    for (const c of this.activeChildren(id)) n += c.kind === 'file' ? (c.versions.at(-1)?.content.length ?? 0) : c.kind === 'folder' ? this.folderSize(c.id) : 0;
    return n;
  }
}

/** Box keeps whole seconds of content_modified_at. */
function truncSec(ms: number): number {
  return Math.floor(ms / 1000) * 1000;
}
