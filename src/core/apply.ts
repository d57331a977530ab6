/**
 * The successful outcome of an operation, as a model: what the executor does to each side and what the
 * reconciler then records as the merge base. PURE (no I/O); it changes only the world it is handed.
 *
 * It is the executable specification the property test drives, and the model the reconciler's commit step
 * should match:
 * - Every operation that leaves both sides in agreement about an item records the base from both observed
 *   entries (`baseFrom`): remote etag/SHA-1/version/size/url, local inode/mtime.
 * - Recording a base for a Box id that already has a row at another path first moves that row and the rows
 *   below it to the new path (one item, one row; a folder moved on both sides keeps its subtree's rows).
 * - remote-move / local-move move the base rows of the item's subtree to `to` and change nothing else (the
 *   etag is refreshed only when the Box content is still the agreed one): a content change made on either
 *   side before the move must still be seen on the next pass.
 * - remote-trash, local-trash and forget drop the base rows at and below the path.
 * - conflict-copy moves the local entry aside and drops the base rows at and below the original path, so
 *   the next pass sees the Box item as new there (download) and the copy as new here (upload).
 * - remote-restore makes the Box item active again where the operation says; the base row is kept as it was,
 *   so the next pass sees a local edit against it (upload-version).
 * - report changes nothing.
 */
import { type LocalEntry, type RelPath, type RemoteEntry, type RemoteId, type SyncedEntry } from './model.js';
import { assertNever, type Operation } from './operations.js';
import { isAncestor, isAncestorOrSelf, rebase } from './paths.js';

/** Both sides and the base of one root, mutable, for simulation. */
export interface World {
  readonly remote: Map<RemoteId, RemoteEntry>;
  readonly local: Map<RelPath, LocalEntry>;
  readonly synced: Map<RelPath, SyncedEntry>;
  readonly remoteTrashed: Set<RemoteId>;
  /** Local entries moved to the local trash, in order. */
  readonly localTrash: LocalEntry[];
  /** Earlier SHA-1s of each Box file (Box keeps previous versions when a new one is uploaded). */
  readonly remoteVersions: Map<RemoteId, string[]>;
}

/** Sources of fresh identities: Box ids, etags, inodes, and the content hash of a link file. */
export interface Allocator {
  remoteId(): RemoteId;
  etag(): string;
  inode(): number;
  /** SHA-1 standing for the bytes of a link file pointing at `url`. */
  weblinkSha1(url: string): string;
  nowMs(): number;
}

export function baseFrom(path: RelPath, r: RemoteEntry, l: LocalEntry): SyncedEntry {
  return {
    path,
    remoteId: r.id,
    kind: r.kind,
    etag: r.etag,
    sha1: r.sha1,
    versionId: r.versionId,
    sizeBytes: r.sizeBytes,
    inode: l.inode,
    mtimeMs: l.mtimeMs,
    url: r.url,
  };
}

function subtreeKeys<T>(map: Map<RelPath, T>, path: RelPath): RelPath[] {
  return [...map.keys()].filter((k) => isAncestorOrSelf(path, k));
}

function dropSubtree<T>(map: Map<RelPath, T>, path: RelPath): T[] {
  const gone: T[] = [];
  for (const k of subtreeKeys(map, path)) {
    gone.push(map.get(k)!);
    map.delete(k);
  }
  return gone;
}

function moveLocalSubtree(w: World, from: RelPath, to: RelPath): void {
  const moved = subtreeKeys(w.local, from).map((k) => w.local.get(k)!);
  for (const e of moved) w.local.delete(e.path);
  for (const e of moved) {
    const p = rebase(e.path, from, to);
    w.local.set(p, { ...e, path: p });
  }
}

function moveSyncedSubtree(w: World, from: RelPath, to: RelPath): void {
  if (from === to) return;
  const moved = subtreeKeys(w.synced, from).map((k) => w.synced.get(k)!);
  const clash = moved.map((e) => rebase(e.path, from, to)).find((k) => w.synced.has(k) && !isAncestorOrSelf(from, k));
  if (clash !== undefined) throw new Error(`apply: moving base rows ${from} -> ${to} would overwrite the row of ${clash}`);
  for (const e of moved) w.synced.delete(e.path);
  for (const e of moved) {
    const p = rebase(e.path, from, to);
    w.synced.set(p, { ...e, path: p });
  }
}

function syncedPathOf(w: World, id: RemoteId): RelPath | undefined {
  for (const s of w.synced.values()) if (s.remoteId === id) return s.path;
  return undefined;
}

/** Record the base for `path` from both sides, re-keying an existing row of the same Box id first. */
function recordBase(w: World, path: RelPath, id: RemoteId): void {
  const old = syncedPathOf(w, id);
  const here = w.synced.get(path);
  if (here !== undefined && here.remoteId !== id) throw new Error(`apply: recording ${path} for ${id} would overwrite the row of ${here.remoteId}`);
  if (old !== undefined && old !== path) moveSyncedSubtree(w, old, path);
  const r = w.remote.get(id);
  const l = w.local.get(path);
  if (!r || !l) throw new Error(`apply: cannot record a base for ${path}: ${!r ? 'remote' : 'local'} side missing`);
  w.synced.set(path, baseFrom(path, r, l));
}

/**
 * After a move only the location is agreed on: the row (and its subtree) moves to `to`, and the etag is
 * refreshed only when the Box content is still the agreed one, so that a content change on either side made
 * before the move is still seen on the next pass.
 */
function relocateBase(w: World, to: RelPath, id: RemoteId): void {
  const old = syncedPathOf(w, id);
  if (old === undefined) throw new Error(`apply: no base row for moved item ${id}`);
  moveSyncedSubtree(w, old, to);
  const s = w.synced.get(to)!;
  const r = w.remote.get(id);
  if (r && r.sha1 === s.sha1 && r.url === s.url) w.synced.set(to, { ...s, etag: r.etag });
}

function requireRemote(w: World, id: RemoteId): RemoteEntry {
  const r = w.remote.get(id);
  if (!r) throw new Error(`apply: unknown remote id ${id}`);
  return r;
}

function requireLocal(w: World, path: RelPath): LocalEntry {
  const l = w.local.get(path);
  if (!l) throw new Error(`apply: no local entry at ${path}`);
  return l;
}

function remoteIdAt(w: World, parentId: RemoteId, name: string): boolean {
  const k = name.normalize('NFC').toLowerCase();
  for (const r of w.remote.values()) if (r.status === 'active' && r.parentId === parentId && r.name.normalize('NFC').toLowerCase() === k) return true;
  return false;
}

/**
 * Apply the successful outcome of `op`. Throws when the operation could not have succeeded against this world
 * (its target missing or occupied): a planner bug the property test must see, never something to paper over.
 */
export function applyOutcome(w: World, op: Operation, alloc: Allocator): void {
  switch (op.kind) {
    case 'download': {
      if (op.guard.state === 'absent' && w.local.has(op.path)) throw new Error(`apply: download onto occupied ${op.path}`);
      const r = requireRemote(w, op.remoteId);
      w.local.set(op.path, { path: op.path, kind: 'file', inode: alloc.inode(), sizeBytes: r.sizeBytes, mtimeMs: r.modifiedAtMs, sha1: r.sha1 });
      recordBase(w, op.path, r.id);
      return;
    }
    case 'upload': {
      const l = requireLocal(w, op.path);
      if (remoteIdAt(w, op.parentId, op.name)) throw new Error(`apply: upload onto an existing Box name ${op.path}`);
      const id = alloc.remoteId();
      w.remote.set(id, {
        id,
        kind: 'file',
        parentId: op.parentId,
        name: op.name,
        etag: alloc.etag(),
        sequenceId: '0',
        sha1: l.sha1,
        sizeBytes: l.sizeBytes,
        modifiedAtMs: l.mtimeMs,
        versionId: alloc.etag(),
        url: null,
        status: 'active',
      });
      recordBase(w, op.path, id);
      return;
    }
    case 'upload-version': {
      const l = requireLocal(w, op.path);
      const r = requireRemote(w, op.remoteId);
      if (r.etag !== op.ifMatch) throw new Error(`apply: If-Match ${op.ifMatch} does not match ${r.etag} for ${op.path}`);
      if (r.sha1 !== null) w.remoteVersions.set(r.id, [...(w.remoteVersions.get(r.id) ?? []), r.sha1]);
      w.remote.set(r.id, { ...r, etag: alloc.etag(), sha1: l.sha1, sizeBytes: l.sizeBytes, modifiedAtMs: l.mtimeMs, versionId: alloc.etag() });
      recordBase(w, op.path, r.id);
      return;
    }
    case 'create-remote-folder': {
      requireLocal(w, op.path);
      if (remoteIdAt(w, op.parentId, op.name)) throw new Error(`apply: folder onto an existing Box name ${op.path}`);
      const id = alloc.remoteId();
      w.remote.set(id, {
        id,
        kind: 'folder',
        parentId: op.parentId,
        name: op.name,
        etag: alloc.etag(),
        sequenceId: '0',
        sha1: null,
        sizeBytes: 0,
        modifiedAtMs: alloc.nowMs(),
        versionId: null,
        url: null,
        status: 'active',
      });
      recordBase(w, op.path, id);
      return;
    }
    case 'create-local-folder': {
      if (w.local.has(op.path)) throw new Error(`apply: folder onto occupied ${op.path}`);
      w.local.set(op.path, { path: op.path, kind: 'folder', inode: alloc.inode(), sizeBytes: 0, mtimeMs: alloc.nowMs(), sha1: null });
      recordBase(w, op.path, op.remoteId);
      return;
    }
    case 'remote-move': {
      const r = requireRemote(w, op.remoteId);
      if (isAncestor(op.from, op.to)) throw new Error(`apply: cannot move ${op.from} into itself (${op.to})`);
      if (r.etag !== op.ifMatch) throw new Error(`apply: If-Match failed for move of ${op.from}`);
      w.remote.set(r.id, { ...r, parentId: op.parentId, name: op.name, etag: alloc.etag() });
      relocateBase(w, op.to, r.id);
      return;
    }
    case 'local-move': {
      requireLocal(w, op.from);
      if (isAncestor(op.from, op.to)) throw new Error(`apply: cannot move ${op.from} into itself (${op.to})`);
      if (w.local.has(op.to) && op.to !== op.from) throw new Error(`apply: local move onto occupied ${op.to}`);
      moveLocalSubtree(w, op.from, op.to);
      relocateBase(w, op.to, op.remoteId);
      return;
    }
    case 'remote-trash': {
      const r = requireRemote(w, op.remoteId);
      if (r.etag !== op.ifMatch) throw new Error(`apply: If-Match failed for trash of ${op.path}`);
      w.remote.set(r.id, { ...r, status: 'trashed' });
      w.remoteTrashed.add(r.id);
      dropSubtree(w.synced, op.path);
      return;
    }
    case 'local-trash': {
      requireLocal(w, op.path);
      w.localTrash.push(...dropSubtree(w.local, op.path));
      dropSubtree(w.synced, op.path);
      return;
    }
    case 'remote-restore': {
      const r = requireRemote(w, op.remoteId);
      w.remote.set(r.id, { ...r, status: 'active', parentId: op.parentId, name: op.name });
      w.remoteTrashed.delete(r.id);
      return;
    }
    case 'conflict-copy': {
      requireLocal(w, op.path);
      if (w.local.has(op.to)) throw new Error(`apply: conflict copy onto occupied ${op.to}`);
      moveLocalSubtree(w, op.path, op.to);
      dropSubtree(w.synced, op.path);
      return;
    }
    case 'link':
      recordBase(w, op.path, op.remoteId);
      return;
    case 'forget':
      dropSubtree(w.synced, op.path);
      return;
    case 'write-weblink': {
      const size = op.url.length + 24;
      w.local.set(op.path, { path: op.path, kind: 'file', inode: alloc.inode(), sizeBytes: size, mtimeMs: alloc.nowMs(), sha1: alloc.weblinkSha1(op.url) });
      recordBase(w, op.path, op.remoteId);
      return;
    }
    case 'report':
      return;
    default:
      assertNever(op);
  }
}
