/**
 * The successful outcome of an operation, as a model: what the executor does to each side, simulated on
 * in-memory maps. PURE (no I/O); it changes only the world it is handed. The property tests drive it.
 *
 * Two halves: `simulate` plays the executor (checks the operation could have succeeded, and says what Box
 * answered and what the local stat shows), and the merge-base rules of core/tree-effects.ts say what that
 * outcome changes in the three trees, the same rules the reconciler's commit applies to the journal.
 */
import type { LocalEntry, RelPath, RemoteEntry, RemoteId, SyncedEntry } from './model.js';
import { assertNever, type Operation } from './operations.js';
import { isAncestor, isAncestorOrSelf, rebase } from './paths.js';
import { effectsOf, type OutcomeEntries, type TreeEffect, type TreesBefore } from './tree-effects.js';

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

function subtreeKeys<T>(map: Map<RelPath, T>, path: RelPath): RelPath[] {
  return [...map.keys()].filter((k) => isAncestorOrSelf(path, k));
}

/** Move the rows at and below `from` to `to`; throws rather than overwrite a row outside the moved subtree. */
function moveSubtree<T extends { readonly path: RelPath }>(map: Map<RelPath, T>, from: RelPath, to: RelPath, tree: string): void {
  if (from === to) return;
  if (isAncestor(from, to)) throw new Error(`apply: cannot move ${from} into itself (${to})`);
  const moved = subtreeKeys(map, from).map((k) => map.get(k)!);
  const clash = moved.map((e) => rebase(e.path, from, to)).find((k) => map.has(k) && !isAncestorOrSelf(from, k));
  if (clash !== undefined) throw new Error(`apply: moving ${tree} rows ${from} -> ${to} would overwrite the row of ${clash}`);
  for (const e of moved) map.delete(e.path);
  for (const e of moved) {
    const p = rebase(e.path, from, to);
    map.set(p, { ...e, path: p });
  }
}

function deleteSubtree<T>(map: Map<RelPath, T>, path: RelPath): void {
  for (const k of subtreeKeys(map, path)) map.delete(k);
}

/** An item of the live remote tree: active, and every folder above it active up to the root. */
function liveRemote(w: World, id: RemoteId): RemoteEntry | undefined {
  const entry = w.remote.get(id);
  for (let cur = entry, hops = 0; cur !== undefined && hops < 10_000; cur = w.remote.get(cur.parentId!), hops++) {
    if (cur.status !== 'active') return undefined;
    if (cur.parentId === null) return entry;
  }
  return undefined;
}

function syncedOf(w: World, id: RemoteId): SyncedEntry | undefined {
  for (const s of w.synced.values()) if (s.remoteId === id) return s;
  return undefined;
}

/** The world read the way the journal holds it: the remote tree is what is live on Box. */
export function worldTrees(w: World): TreesBefore {
  return { remote: (id) => liveRemote(w, id), local: (path) => w.local.get(path), syncedOf: (id) => syncedOf(w, id) };
}

function putSynced(w: World, entry: SyncedEntry): void {
  const here = w.synced.get(entry.path);
  if (here !== undefined && here.remoteId !== entry.remoteId) throw new Error(`apply: recording ${entry.path} for ${entry.remoteId} would overwrite the row of ${here.remoteId}`);
  const elsewhere = syncedOf(w, entry.remoteId);
  if (elsewhere !== undefined && elsewhere.path !== entry.path) throw new Error(`apply: ${entry.remoteId} already has a base row at ${elsewhere.path}`);
  w.synced.set(entry.path, entry);
}

/** Apply the edits of core/tree-effects.ts to the world's maps. Throws where the journal would silently replace a row. */
export function applyEffects(w: World, effects: readonly TreeEffect[]): void {
  for (const e of effects) {
    switch (e.edit) {
      case 'put':
        if (e.tree === 'remote') {
          w.remote.set(e.entry.id, e.entry);
          w.remoteTrashed.delete(e.entry.id);
        } else if (e.tree === 'local') w.local.set(e.entry.path, e.entry);
        else putSynced(w, e.entry);
        break;
      case 'trash': {
        const r = w.remote.get(e.id);
        if (r) w.remote.set(e.id, { ...r, status: 'trashed' });
        w.remoteTrashed.add(e.id);
        break;
      }
      case 'delete':
        if (e.tree === 'local') deleteSubtree(w.local, e.path);
        else deleteSubtree(w.synced, e.path);
        break;
      case 'move':
        if (e.tree === 'local') moveSubtree(w.local, e.from, e.to, 'local');
        else moveSubtree(w.synced, e.from, e.to, 'base');
        break;
      default:
        assertNever(e);
    }
  }
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

function requireBase(w: World, id: RemoteId): void {
  if (!syncedOf(w, id)) throw new Error(`apply: no base row for moved item ${id}`);
}

function requireFree(w: World, path: RelPath, what: string): void {
  if (w.local.has(path)) throw new Error(`apply: ${what} onto occupied ${path}`);
}

function remoteIdAt(w: World, parentId: RemoteId, name: string): boolean {
  const k = name.normalize('NFC').toLowerCase();
  for (const r of w.remote.values()) if (r.status === 'active' && r.parentId === parentId && r.name.normalize('NFC').toLowerCase() === k) return true;
  return false;
}

function newRemote(alloc: Allocator, fields: Pick<RemoteEntry, 'kind' | 'parentId' | 'name' | 'sha1' | 'sizeBytes' | 'modifiedAtMs'>): RemoteEntry {
  const id = alloc.remoteId();
  return { id, ...fields, etag: alloc.etag(), sequenceId: '0', versionId: fields.kind === 'file' ? alloc.etag() : null, url: null, status: 'active' };
}

/**
 * Play the executor: throw when the operation could not have succeeded against this world (its target missing
 * or occupied; a planner bug the property test must see, never something to paper over), else return what Box
 * answered and what the local stat shows. Changes only what lies outside the three trees (the local trash, Box
 * version history).
 */
export function simulate(w: World, op: Operation, alloc: Allocator): OutcomeEntries {
  switch (op.kind) {
    case 'download': {
      if (op.guard.state === 'absent') requireFree(w, op.path, 'download');
      const r = requireRemote(w, op.remoteId);
      return { local: { path: op.path, kind: 'file', inode: alloc.inode(), sizeBytes: r.sizeBytes, mtimeMs: r.modifiedAtMs, sha1: r.sha1 } };
    }
    case 'upload': {
      const l = requireLocal(w, op.path);
      if (remoteIdAt(w, op.parentId, op.name)) throw new Error(`apply: upload onto an existing Box name ${op.path}`);
      const r = newRemote(alloc, { kind: 'file', parentId: op.parentId, name: op.name, sha1: l.sha1, sizeBytes: l.sizeBytes, modifiedAtMs: l.mtimeMs });
      return { remote: r, local: l };
    }
    case 'upload-version': {
      const l = requireLocal(w, op.path);
      const r = requireRemote(w, op.remoteId);
      if (r.etag !== op.ifMatch) throw new Error(`apply: If-Match ${op.ifMatch} does not match ${r.etag} for ${op.path}`);
      if (r.sha1 !== null) w.remoteVersions.set(r.id, [...(w.remoteVersions.get(r.id) ?? []), r.sha1]);
      return { remote: { ...r, etag: alloc.etag(), sha1: l.sha1, sizeBytes: l.sizeBytes, modifiedAtMs: l.mtimeMs, versionId: alloc.etag() }, local: l };
    }
    case 'create-remote-folder': {
      const l = requireLocal(w, op.path);
      if (remoteIdAt(w, op.parentId, op.name)) throw new Error(`apply: folder onto an existing Box name ${op.path}`);
      return { remote: newRemote(alloc, { kind: 'folder', parentId: op.parentId, name: op.name, sha1: null, sizeBytes: 0, modifiedAtMs: alloc.nowMs() }), local: l };
    }
    case 'create-local-folder':
      requireFree(w, op.path, 'folder');
      return { local: { path: op.path, kind: 'folder', inode: alloc.inode(), sizeBytes: 0, mtimeMs: alloc.nowMs(), sha1: null } };
    case 'remote-move': {
      const r = requireRemote(w, op.remoteId);
      if (isAncestor(op.from, op.to)) throw new Error(`apply: cannot move ${op.from} into itself (${op.to})`);
      if (r.etag !== op.ifMatch) throw new Error(`apply: If-Match failed for move of ${op.from}`);
      requireBase(w, r.id);
      return { remote: { ...r, parentId: op.parentId, name: op.name, etag: alloc.etag() } };
    }
    case 'local-move': {
      const l = requireLocal(w, op.from);
      if (isAncestor(op.from, op.to)) throw new Error(`apply: cannot move ${op.from} into itself (${op.to})`);
      if (op.to !== op.from) requireFree(w, op.to, 'local move');
      requireBase(w, op.remoteId);
      return { local: { ...l, path: op.to } };
    }
    case 'remote-trash': {
      const r = requireRemote(w, op.remoteId);
      if (r.etag !== op.ifMatch) throw new Error(`apply: If-Match failed for trash of ${op.path}`);
      return {};
    }
    case 'local-trash':
      requireLocal(w, op.path);
      w.localTrash.push(...subtreeKeys(w.local, op.path).map((k) => w.local.get(k)!));
      return {};
    case 'remote-restore': {
      const r = requireRemote(w, op.remoteId);
      return { remote: { ...r, status: 'active', parentId: op.parentId, name: op.name } };
    }
    case 'conflict-copy': {
      const l = requireLocal(w, op.path);
      requireFree(w, op.to, 'conflict copy');
      return { local: { ...l, path: op.to } };
    }
    case 'link':
    case 'forget':
    case 'report':
      return {};
    case 'write-weblink': {
      const size = op.url.length + 24;
      return { local: { path: op.path, kind: 'file', inode: alloc.inode(), sizeBytes: size, mtimeMs: alloc.nowMs(), sha1: alloc.weblinkSha1(op.url) } };
    }
    default:
      return assertNever(op);
  }
}

/** Apply the successful outcome of `op`: simulate the executor, then record it by the merge-base rules. */
export function applyOutcome(w: World, op: Operation, alloc: Allocator): void {
  applyEffects(w, effectsOf(op, simulate(w, op, alloc), worldTrees(w)));
}
