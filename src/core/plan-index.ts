/**
 * The planner's view of a Snapshot: every index it needs, built once in O(n log n), so that no decision
 * scans a tree. PURE.
 *
 * Items are identified the way the executor and the journal identify them:
 * - a synced item (merge-base row) is followed to its current remote entry by Box id, and to its current
 *   local entry either at the same path or, when that path is empty or taken by another item's move (a
 *   rotation), by inode (a local move, confirmed by size and mtime, and SHA-1 when known);
 * - remote entries without a synced row are "remote-new", local entries owned by no synced item are
 *   "local-new".
 * Remote paths are derived by walking parentId up to the root folder; an entry whose chain does not reach the
 * root (or passes a trashed/deleted folder) is outside the root, i.e. gone from it. A web link's local path
 * is its name plus '.url'.
 */
import type { LocalEntry, RelPath, RemoteEntry, RemoteId, Snapshot, SyncedEntry } from './model.js';
import { ancestorsOf, foldKey, joinPath } from './paths.js';
import { localUnchanged, sameItemMoved } from './same-item.js';

export interface ItemState {
  readonly synced: SyncedEntry;
  /** The active remote entry under the root, or null when it is gone from the root. */
  readonly remote: RemoteEntry | null;
  readonly remotePath: RelPath | null;
  /** The local entry that is this item now, or null when it is gone locally. */
  readonly local: LocalEntry | null;
  readonly localPath: RelPath | null;
  /** Local content or type differs from the base (files: stat and SHA-1; web link files: never). */
  readonly localChanged: boolean;
  readonly localTypeChanged: boolean;
  /** Remote content differs from the base (files: SHA-1, else etag; web links: URL). */
  readonly remoteChanged: boolean;
  /** The base's recorded stat/etag are stale although content agrees: a `link` refreshes them. */
  readonly baseStale: boolean;
}

export interface PlanIndex {
  readonly snapshot: Snapshot;
  readonly items: readonly ItemState[];
  readonly itemById: ReadonlyMap<RemoteId, ItemState>;
  /** Remote entries under the root by folded local-spelling path. */
  readonly remoteByKey: ReadonlyMap<string, RemoteEntry>;
  readonly remotePathOf: ReadonlyMap<RemoteId, RelPath>;
  /** Local entries by folded path (several when names differ only in case or normalization). */
  readonly localByKey: ReadonlyMap<string, readonly LocalEntry[]>;
  /** Which synced item a local path belongs to. */
  readonly localOwner: ReadonlyMap<RelPath, ItemState>;
  readonly localNew: readonly LocalEntry[];
  /** Merge-base rows by folded path: a new entry must not take a path whose row still belongs to another item. */
  readonly syncedByKey: ReadonlyMap<string, SyncedEntry>;
  readonly remoteNew: readonly RemoteEntry[];
  /**
   * Folded paths that have a changed, moved or new entry strictly below them on either side: a folder
   * with such a key must not be trashed whole, because the trash would take that change with it.
   */
  readonly dirtyBelow: ReadonlySet<string>;
  isDeferred(path: RelPath): boolean;
}

const weblinkSuffix = '.url';

export function localNameOfRemote(entry: RemoteEntry): string {
  return entry.kind === 'weblink' ? entry.name + weblinkSuffix : entry.name;
}

function resolveRemotePaths(snapshot: Snapshot): Map<RemoteId, RelPath> {
  const rootId = snapshot.root.remoteId;
  // null marks "known not to be under the root".
  const memo = new Map<RemoteId, RelPath | '' | null>([[rootId, '']]);
  const limit = snapshot.remote.size + 1;
  for (const start of snapshot.remote.keys()) {
    if (memo.has(start)) continue;
    const chain: RemoteEntry[] = [];
    let cursor: RemoteId | null = start;
    let base: RelPath | '' | null = null;
    while (cursor !== null) {
      const known = memo.get(cursor);
      if (known !== undefined) {
        base = known;
        break;
      }
      const e = snapshot.remote.get(cursor);
      if (!e || e.status !== 'active' || chain.length > limit) break;
      chain.push(e);
      cursor = e.parentId;
    }
    for (let i = chain.length - 1; i >= 0; i--) {
      const e = chain[i]!;
      base = base === null ? null : joinPath(base, localNameOfRemote(e));
      memo.set(e.id, base);
    }
  }
  const out = new Map<RemoteId, RelPath>();
  for (const [id, path] of memo) if (path !== null && path !== '' && id !== rootId) out.set(id, path);
  return out;
}

function sameLocalKind(s: SyncedEntry, l: LocalEntry): boolean {
  return s.kind === 'folder' ? l.kind === 'folder' : l.kind === 'file';
}

function localContentChanged(s: SyncedEntry, l: LocalEntry): boolean {
  if (s.kind !== 'file') return false;
  const statSame = localUnchanged(s, l);
  // Another size is another content, whatever SHA-1 the row carries: a hash read while a checkout rewrote the file
  // can pair the old content's SHA-1 with the new size, and a refresh of the base (a link) never settled that.
  if (l.sizeBytes !== s.sizeBytes) return true;
  if (l.sha1 !== null && s.sha1 !== null) return l.sha1 !== s.sha1;
  return !statSame;
}

function localStatStale(s: SyncedEntry, l: LocalEntry): boolean {
  if (l.kind === 'folder') return l.inode !== s.inode;
  return !localUnchanged(s, l);
}

function remoteContentChanged(s: SyncedEntry, r: RemoteEntry): boolean {
  switch (r.kind) {
    case 'file':
      return r.sha1 !== null && s.sha1 !== null ? r.sha1 !== s.sha1 : r.etag !== s.etag;
    case 'weblink':
      return r.url !== s.url;
    case 'folder':
      return false;
    default:
      return r.kind satisfies never;
  }
}

export function buildIndex(snapshot: Snapshot): PlanIndex {
  const remotePathOf = resolveRemotePaths(snapshot);
  const remoteByKey = new Map<string, RemoteEntry>();
  for (const [id, path] of remotePathOf) remoteByKey.set(foldKey(path), snapshot.remote.get(id)!);

  const localByKey = new Map<string, LocalEntry[]>();
  const localByInode = new Map<number, LocalEntry | 'many'>();
  for (const l of snapshot.local.values()) {
    const k = foldKey(l.path);
    const list = localByKey.get(k);
    if (list) list.push(l);
    else localByKey.set(k, [l]);
    if (l.inode > 0) localByInode.set(l.inode, localByInode.has(l.inode) ? 'many' : l);
  }

  // Local moves: the old path is empty (or taken by another item's move: a rotation) and exactly one local
  // entry carries the old inode elsewhere. A worklist, so a chain of moves is found in O(n).
  const movedTo = new Map<RelPath, LocalEntry>();
  const claimedByMove = new Set<RelPath>();
  const tryMove = (s: SyncedEntry): SyncedEntry | undefined => {
    if (s.inode <= 0 || movedTo.has(s.path)) return undefined;
    if (snapshot.local.has(s.path) && !claimedByMove.has(s.path)) return undefined;
    const l = localByInode.get(s.inode);
    if (l === undefined || l === 'many' || l.path === s.path || claimedByMove.has(l.path)) return undefined;
    const atTarget = snapshot.synced.get(l.path);
    if (atTarget && atTarget.inode === l.inode) return undefined;
    if (!sameItemMoved(s, l)) return undefined;
    movedTo.set(s.path, l);
    claimedByMove.add(l.path);
    // The item whose base path this move took may itself have moved away.
    return atTarget;
  };
  for (const s of snapshot.synced.values()) {
    for (let next = tryMove(s); next !== undefined; next = tryMove(next));
  }

  const items: ItemState[] = [];
  const itemById = new Map<RemoteId, ItemState>();
  const localOwner = new Map<RelPath, ItemState>();
  for (const s of snapshot.synced.values()) {
    const here = snapshot.local.get(s.path);
    const local = movedTo.get(s.path) ?? (here && !claimedByMove.has(here.path) ? here : undefined) ?? null;
    const r = snapshot.remote.get(s.remoteId);
    const remotePath = r ? (remotePathOf.get(r.id) ?? null) : null;
    const remote = remotePath !== null ? r! : null;
    const localTypeChanged = local !== null && !sameLocalKind(s, local);
    const localChanged = local !== null && !localTypeChanged && localContentChanged(s, local);
    const remoteChanged = remote !== null && remoteContentChanged(s, remote);
    const baseStale =
      (local !== null && !localTypeChanged && !localChanged && localStatStale(s, local)) ||
      (remote !== null && !remoteChanged && remote.etag !== s.etag);
    const item: ItemState = {
      synced: s,
      remote,
      remotePath,
      local,
      localPath: local ? local.path : null,
      localChanged,
      localTypeChanged,
      remoteChanged,
      baseStale,
    };
    items.push(item);
    itemById.set(s.remoteId, item);
    if (local) localOwner.set(local.path, item);
  }

  const syncedByKey = new Map<string, SyncedEntry>();
  for (const s of snapshot.synced.values()) syncedByKey.set(foldKey(s.path), s);
  const localNew = [...snapshot.local.values()].filter((l) => !localOwner.has(l.path));
  const remoteNew: RemoteEntry[] = [];
  for (const id of remotePathOf.keys()) if (!itemById.has(id)) remoteNew.push(snapshot.remote.get(id)!);

  const dirtyBelow = new Set<string>();
  const markDirty = (path: RelPath): void => {
    for (const a of ancestorsOf(path)) {
      const k = foldKey(a);
      if (dirtyBelow.has(k)) break;
      dirtyBelow.add(k);
    }
  };
  for (const it of items) {
    const moved = (it.localPath !== null && it.localPath !== it.synced.path) || (it.remotePath !== null && it.remotePath !== it.synced.path);
    if (moved || it.localChanged || it.localTypeChanged || it.remoteChanged) {
      markDirty(it.synced.path);
      if (it.localPath) markDirty(it.localPath);
      if (it.remotePath) markDirty(it.remotePath);
    }
  }
  for (const l of localNew) markDirty(l.path);
  for (const r of remoteNew) markDirty(remotePathOf.get(r.id)!);
  for (const d of snapshot.deferred) markDirty(d);

  const deferred = [...snapshot.deferred];
  const deferredKeys = new Set(deferred);
  const isDeferred = (path: RelPath): boolean => {
    if (deferredKeys.size === 0) return false;
    if (deferredKeys.has(path)) return true;
    for (const a of ancestorsOf(path)) if (deferredKeys.has(a)) return true;
    return false;
  };

  return {
    snapshot,
    items,
    itemById,
    remoteByKey,
    remotePathOf,
    localByKey,
    localOwner,
    localNew,
    syncedByKey,
    remoteNew,
    dirtyBelow,
    isDeferred,
  };
}
