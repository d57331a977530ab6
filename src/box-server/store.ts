/**
 * The live model: ServerState plus the blob store, with the lookups every operation needs (items, children,
 * ancestors, name conflicts, locks), the event log, and persistence. Mutations go through the operation modules
 * (folder-ops, file-ops, trash-ops, ...), which call `touch` and `recordEvent` so HTTP and the test actor record
 * exactly the same events. `flush` writes the state when something changed (only with a data dir).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { BoxError, notFound } from './box-error.js';
import type { BlobStore } from './blob-store.js';
import { nameKey } from './names.js';
import type { PublicHost } from './types.js';
import type { Persistence } from './persistence.js';
import type { EventRec, ItemRec, ItemType, LockRec, ServerState, UserRec, VersionRec } from './state.js';
import { standardItemJson } from './serialize.js';

export const rootFolderId = '0';
export const defaultUserId = '1';
export const gib = 1024 * 1024 * 1024;

export function newState(nowMs: number): ServerState {
  const state: ServerState = {
    nextId: 1000,
    nextVersionId: 5000,
    nextUserId: 2,
    nextPosition: 1,
    secret: randomBytes(24).toString('hex'),
    users: {},
    items: {},
    tokens: {},
    refreshTokens: {},
    authCodes: {},
    clients: {},
    events: [],
    sessions: {},
  };
  state.users[defaultUserId] = {
    id: defaultUserId,
    name: 'Default User',
    login: 'user@example.com',
    spaceAmountBytes: 100 * gib,
    maxUploadSizeBytes: 50 * gib,
    enterpriseAdmin: false,
    createdAtMs: nowMs,
  };
  state.items[rootFolderId] = blankItem('folder', rootFolderId, 'All Files', null, defaultUserId, nowMs);
  return state;
}

export function blankItem(type: ItemType, id: string, name: string, parentId: string | null, userId: string, nowMs: number): ItemRec {
  return {
    type,
    id,
    name,
    parentId,
    sequenceId: 0,
    createdAtMs: nowMs,
    modifiedAtMs: nowMs,
    contentCreatedAtMs: nowMs,
    contentModifiedAtMs: nowMs,
    createdBy: userId,
    modifiedBy: userId,
    ownedBy: userId,
    description: '',
    status: 'active',
    trashedAtMs: null,
    trashedSelf: false,
    trashedFromParentId: null,
    syncState: 'not_synced',
    versions: [],
    currentVersionId: null,
    lock: null,
    sharedLink: null,
    url: null,
    tags: [],
  };
}

export class Store {
  /** Emits 'event' with each new EventRec (long polls wait on it). */
  readonly bus = new EventEmitter();
  private dirty = false;

  constructor(
    readonly state: ServerState,
    readonly blobs: BlobStore,
    private readonly persistence: Persistence | null,
    /** The base of the URLs handed out, per kind of host (one base for all unless `publicUrls` says otherwise). */
    readonly baseUrl: (host?: PublicHost) => string,
  ) {
    this.bus.setMaxListeners(0);
    for (const i of Object.values(state.items)) for (const v of i.versions) this.#versionBytesBound += v.sizeBytes;
  }

  /**
   * The bytes of every version ever attached (loaded, uploaded, copied, promoted), never lowered: no user's usage
   * can be above it. While it plus an upload stays under a user's quota, the quota check need not sum that user's
   * files (a scan of every item, per upload).
   */
  #versionBytesBound = 0;

  /**
   * Attaches `v` to `file` as its current version. The one way a version is added (file-ops.ts, item-ops.ts), so
   * none can miss the quota bound.
   */
  attachCurrentVersion(file: ItemRec, v: VersionRec): void {
    file.versions.push(v);
    this.#versionBytesBound += v.sizeBytes;
    file.currentVersionId = v.id;
  }

  /** Would `sizeBytes` more take the user past the quota? Sums the user's files only when the bound says it might. */
  overQuota(userId: string, sizeBytes: number): boolean {
    const quota = this.user(userId).spaceAmountBytes;
    if (this.#versionBytesBound + sizeBytes <= quota) return false;
    return this.spaceUsed(userId) + sizeBytes > quota;
  }

  now(): number {
    return Date.now();
  }

  user(id: string): UserRec {
    const u = this.state.users[id];
    if (!u) throw new BoxError(404, 'not_found', `No user with id ${id}`);
    return u;
  }

  item(id: string): ItemRec | undefined {
    return Object.hasOwn(this.state.items, id) ? this.state.items[id] : undefined;
  }

  /** An active item of this type, or 404 (`trashed` when it sits in the trash). */
  active(type: ItemType, id: string): ItemRec {
    const it = this.item(id);
    if (!it || it.type !== type || it.status === 'deleted') throw notFound(`Could not find the specified resource (${type} ${id})`);
    if (it.status === 'trashed') throw new BoxError(404, 'trashed', `The ${type} ${id} is in the trash`);
    return it;
  }

  /**
   * An item a GET may show: active, or (files and web links only) in the trash, which Box answers with 200 and
   * `item_status: "trashed"`. A trashed folder stays 404 `trashed`, as on Box.
   */
  readable(type: ItemType, id: string): ItemRec {
    const it = this.item(id);
    if (type !== 'folder' && it && it.type === type && it.status === 'trashed') return it;
    return this.active(type, id);
  }

  /** Children by parent id, every status; dropped by `structureChanged` (inserts, moves, purges), rebuilt lazily. */
  private childIndex: Map<string, ItemRec[]> | null = null;

  private index(): Map<string, ItemRec[]> {
    if (this.childIndex) return this.childIndex;
    const idx = new Map<string, ItemRec[]>();
    for (const i of Object.values(this.state.items)) {
      if (i.parentId === null) continue;
      const list = idx.get(i.parentId);
      if (list) list.push(i);
      else idx.set(i.parentId, [i]);
    }
    this.childIndex = idx;
    return idx;
  }

  children(folderId: string): ItemRec[] {
    return (this.index().get(folderId) ?? []).filter((i) => i.status === 'active');
  }

  /** Folders from the root down to the item's parent. */
  ancestors(item: ItemRec): ItemRec[] {
    const out: ItemRec[] = [];
    let pid = item.parentId;
    while (pid !== null) {
      const p = this.item(pid);
      if (!p) break;
      out.unshift(p);
      pid = p.parentId;
    }
    return out;
  }

  isUnder(item: ItemRec, ancestorId: string): boolean {
    return item.id === ancestorId || this.ancestors(item).some((a) => a.id === ancestorId);
  }

  /** Items by parent id and name key, every status; same lifecycle as the child index. */
  private nameIndex: Map<string, Map<string, ItemRec[]>> | null = null;

  private names(): Map<string, Map<string, ItemRec[]>> {
    if (this.nameIndex) return this.nameIndex;
    const idx = new Map<string, Map<string, ItemRec[]>>();
    for (const i of Object.values(this.state.items)) addToNameIndex(idx, i);
    this.nameIndex = idx;
    return idx;
  }

  conflict(parentId: string, name: string, exceptId?: string): ItemRec | undefined {
    const same = this.names().get(parentId)?.get(nameKey(name)) ?? [];
    return same.find((c) => c.id !== exceptId && c.status === 'active' && c.parentId === parentId);
  }

  descendants(folderId: string, pred: (i: ItemRec) => boolean = () => true): ItemRec[] {
    const out: ItemRec[] = [];
    const idx = this.index();
    const walk = (id: string): void => {
      for (const c of idx.get(id) ?? []) {
        if (pred(c)) {
          out.push(c);
          if (c.type === 'folder') walk(c.id);
        }
      }
    };
    walk(folderId);
    return out;
  }

  inSynced(item: ItemRec): boolean {
    return [...this.ancestors(item), item].some((f) => f.type === 'folder' && f.syncState === 'synced');
  }

  currentVersion(file: ItemRec): VersionRec | null {
    return file.versions.find((v) => v.id === file.currentVersionId) ?? null;
  }

  /** The lock, unless it has expired (an expired lock ends by itself). */
  activeLock(item: ItemRec): LockRec | null {
    const l = item.lock;
    if (!l) return null;
    if (l.expiresAtMs !== null && l.expiresAtMs <= this.now()) return null;
    return l;
  }

  /** Throws 403 access_denied_item_locked when someone other than `userId` holds a live lock. */
  assertNotLockedByOther(item: ItemRec, userId: string): void {
    const l = this.activeLock(item);
    if (l && l.createdBy !== userId) throw new BoxError(403, 'access_denied_item_locked', `The file is locked by user ${l.createdBy}; nothing was changed`);
  }

  newId(): string {
    return String(this.state.nextId++);
  }

  newVersionId(): string {
    return String(this.state.nextVersionId++);
  }

  /** A change to the item itself: new etag and sequence_id, modified time and user. */
  touch(item: ItemRec, userId: string): void {
    this.changedIds.add(item.id);
    item.sequenceId += 1;
    item.modifiedAtMs = this.now();
    item.modifiedBy = userId;
    this.markDirty();
  }

  spaceUsed(userId: string): number {
    let sum = 0;
    for (const i of Object.values(this.state.items)) {
      if (i.type === 'file' && i.ownedBy === userId && i.status !== 'deleted') {
        for (const v of i.versions) sum += v.sizeBytes;
      }
    }
    return sum;
  }

  recordEvent(eventType: string, userId: string, item: ItemRec | null, sessionId: string): EventRec {
    const ev: EventRec = {
      position: this.state.nextPosition++,
      eventId: randomUUID(),
      eventType,
      createdAtMs: this.now(),
      createdBy: userId,
      sessionId,
      itemType: item?.type ?? null,
      itemId: item?.id ?? null,
      source: item ? standardItemJson(this, item) : null,
      ancestorIds: item ? this.ancestors(item).map((a) => a.id) : [],
      inSynced: item ? this.inSynced(item) || (eventType === 'ITEM_UNSYNC' && item.type === 'folder') : false,
    };
    this.state.events.push(ev);
    this.markDirty();
    this.bus.emit('event', ev);
    return ev;
  }

  markDirty(): void {
    this.dirty = true;
  }

  /** Item ids changed (or deleted) since the last flush: what the journal records. */
  private readonly changedIds = new Set<string>();

  /** Record that an item changed in place without `touch` (or was deleted). */
  changed(itemId: string): void {
    this.changedIds.add(itemId);
    this.dirty = true;
  }

  /** Add a new item to the tree. */
  insert(item: ItemRec): void {
    this.state.items[item.id] = item;
    this.changedIds.add(item.id);
    if (this.nameIndex) addToNameIndex(this.nameIndex, item);
    if (this.childIndex && item.parentId !== null) {
      const list = this.childIndex.get(item.parentId);
      if (list) list.push(item);
      else this.childIndex.set(item.parentId, [item]);
    }
    this.markDirty();
  }

  /** Call after changing an item's parent or deleting items: the child index is rebuilt on next use. */
  structureChanged(): void {
    this.childIndex = null;
    this.nameIndex = null;
    this.markDirty();
  }

  flush(): void {
    if (!this.dirty) return;
    this.dirty = false;
    this.persistence?.append(this.state, this.changedIds);
    this.changedIds.clear();
  }

  /** Fold everything into a fresh snapshot (start and clean shutdown). */
  snapshot(): void {
    this.dirty = false;
    this.changedIds.clear();
    this.persistence?.snapshot(this.state);
  }

  /** Drop blobs no version references any more. */
  collectBlob(blobId: string): void {
    for (const i of Object.values(this.state.items)) if (i.versions.some((v) => v.blobId === blobId)) return;
    this.blobs.remove(blobId);
  }
}

function addToNameIndex(idx: Map<string, Map<string, ItemRec[]>>, item: ItemRec): void {
  if (item.parentId === null) return;
  let byName = idx.get(item.parentId);
  if (!byName) {
    byName = new Map();
    idx.set(item.parentId, byName);
  }
  const key = nameKey(item.name);
  const list = byName.get(key);
  if (list) list.push(item);
  else byName.set(key, [item]);
}
