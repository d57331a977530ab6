/**
 * A simulated root for planner tests: both sides and the base in one World (src/core/apply.ts), user edits on
 * either side by path, and the Snapshot the observer would hand the planner. File content is a short string
 * that doubles as its SHA-1, so tests can say which content ended up where.
 */
import { applyOutcome, type Allocator, type World } from '../../src/core/apply.js';
import { baseFrom } from '../../src/core/tree-effects.js';
import {
  asRelPath,
  asRemoteId,
  asRootId,
  type LocalEntry,
  type RelPath,
  type RemoteEntry,
  type RemoteId,
  type Snapshot,
  type SyncDirection,
  type SyncRoot,
} from '../../src/core/model.js';
import type { Operation } from '../../src/core/operations.js';
import { basename, isAncestorOrSelf, parentOf, rebase } from '../../src/core/paths.js';

export const ROOT_ID = asRemoteId('100');
export const p = asRelPath;

export class Sim {
  readonly world: World = { remote: new Map(), local: new Map(), synced: new Map(), remoteTrashed: new Set(), localTrash: [], remoteVersions: new Map() };
  readonly root: SyncRoot;
  readonly deferred = new Set<RelPath>();
  private counter = 1000;
  clockMs = Date.UTC(2026, 10, 22, 13, 45, 1);

  readonly alloc: Allocator = {
    remoteId: () => asRemoteId(String(++this.counter)),
    etag: () => `e${++this.counter}`,
    inode: () => ++this.counter,
    weblinkSha1: (url) => `link:${url}`,
    nowMs: () => (this.clockMs += 1000),
  };

  constructor(direction: SyncDirection = 'two-way') {
    this.root = { id: asRootId('r1'), remoteId: ROOT_ID, localPath: '/tmp/sim', direction, exclude: [] };
    this.world.remote.set(ROOT_ID, {
      id: ROOT_ID,
      kind: 'folder',
      parentId: null,
      name: 'Root',
      etag: '0',
      sequenceId: '0',
      sha1: null,
      sizeBytes: 0,
      modifiedAtMs: 0,
      versionId: null,
      url: null,
      status: 'active',
    });
  }

  /** Create items in sync on both sides: a string is file content, null a folder. Parents first. */
  seed(entries: Record<string, string | null>): this {
    // Parents created by this call, so that big seeds do not resolve the remote tree once per entry.
    const made = new Map<string, RemoteId>();
    for (const [path, content] of Object.entries(entries)) {
      const parent = parentOf(p(path));
      const parentId = parent === '' ? ROOT_ID : (made.get(parent) ?? this.remoteParent(path));
      const r = content === null ? this.remoteMkdir(path, parentId) : this.remoteCreate(path, content, parentId);
      made.set(path, r.id);
      const l = content === null ? this.localMkdir(path) : this.localWrite(path, content);
      this.world.synced.set(p(path), baseFrom(p(path), r, l));
    }
    return this;
  }

  seedWeblink(path: string, url: string): this {
    const r = this.remoteWeblink(path, url);
    const lp = p(`${path}.url`);
    const l: LocalEntry = { path: lp, kind: 'file', inode: this.alloc.inode(), sizeBytes: url.length + 24, mtimeMs: this.alloc.nowMs(), sha1: `link:${url}` };
    this.world.local.set(lp, l);
    this.world.synced.set(lp, baseFrom(lp, r, l));
    return this;
  }

  // ---- remote side (Box) ----

  remotePath(id: RemoteId): RelPath | null {
    const parts: string[] = [];
    let cur = this.world.remote.get(id);
    for (let guard = 0; cur && guard < 1000; guard++) {
      if (cur.id === ROOT_ID) return parts.length ? p(parts.reverse().join('/')) : null;
      if (cur.status !== 'active' || cur.parentId === null) return null;
      parts.push(cur.kind === 'weblink' ? `${cur.name}.url` : cur.name);
      cur = this.world.remote.get(cur.parentId);
    }
    return null;
  }

  /** Live remote entries by local-spelling path. */
  remoteTree(): Map<RelPath, RemoteEntry> {
    const out = new Map<RelPath, RemoteEntry>();
    for (const r of this.world.remote.values()) {
      const path = this.remotePath(r.id);
      if (path !== null) out.set(path, r);
    }
    return out;
  }

  remoteAt(path: string): RemoteEntry | undefined {
    return this.remoteTree().get(p(path));
  }

  private remoteParent(path: string): RemoteId {
    const parent = parentOf(p(path));
    if (parent === '') return ROOT_ID;
    const r = this.remoteAt(parent);
    if (!r || r.kind !== 'folder') throw new Error(`sim: no remote folder ${parent}`);
    return r.id;
  }

  remoteWrite(path: string, content: string): RemoteEntry {
    const existing = this.remoteAt(path);
    if (existing?.sha1) this.world.remoteVersions.set(existing.id, [...(this.world.remoteVersions.get(existing.id) ?? []), existing.sha1]);
    const base = existing ?? {
      id: this.alloc.remoteId(),
      kind: 'file' as const,
      parentId: this.remoteParent(path),
      name: basename(p(path)),
      sequenceId: '0',
      url: null,
      status: 'active' as const,
    };
    const r: RemoteEntry = {
      ...base,
      etag: this.alloc.etag(),
      sha1: content,
      sizeBytes: content.length,
      modifiedAtMs: this.alloc.nowMs(),
      versionId: this.alloc.etag(),
    };
    this.world.remote.set(r.id, r);
    return r;
  }

  private remoteCreate(path: string, content: string, parentId: RemoteId): RemoteEntry {
    return this.remoteNew('file', path, parentId, undefined, () => ({ sha1: content, sizeBytes: content.length, versionId: this.alloc.etag() }));
  }

  remoteMkdir(path: string, parentId: RemoteId = this.remoteParent(path)): RemoteEntry {
    return this.remoteNew('folder', path, parentId);
  }

  /** A Box web link named `name` (its local path is `name.url`). */
  remoteWeblink(path: string, url: string): RemoteEntry {
    const existing = this.remoteAt(`${path}.url`);
    return this.remoteNew('weblink', path, this.remoteParent(path), existing?.id, () => ({ url }));
  }

  /** A new Box item at `path`: its id (unless given), etag and time allocated in this order, then `more` filled in. */
  private remoteNew(kind: RemoteEntry['kind'], path: string, parentId: RemoteId, id?: RemoteId, more: () => Partial<RemoteEntry> = () => ({})): RemoteEntry {
    const r: RemoteEntry = {
      id: id ?? this.alloc.remoteId(),
      kind,
      parentId,
      name: basename(p(path)),
      etag: this.alloc.etag(),
      sequenceId: '0',
      sha1: null,
      sizeBytes: 0,
      modifiedAtMs: this.alloc.nowMs(),
      versionId: null,
      url: null,
      status: 'active',
      ...more(),
    };
    this.world.remote.set(r.id, r);
    return r;
  }

  remoteMove(from: string, to: string): void {
    const r = this.remoteAt(from);
    if (!r) throw new Error(`sim: no remote ${from}`);
    this.world.remote.set(r.id, { ...r, parentId: this.remoteParent(to), name: basename(p(to)), etag: this.alloc.etag() });
  }

  remoteTrash(path: string): void {
    const r = this.remoteAt(path);
    if (!r) throw new Error(`sim: no remote ${path}`);
    this.world.remote.set(r.id, { ...r, status: 'trashed' });
    this.world.remoteTrashed.add(r.id);
  }

  remoteDelete(path: string): void {
    const r = this.remoteAt(path);
    if (!r) throw new Error(`sim: no remote ${path}`);
    this.world.remote.delete(r.id);
  }

  // ---- local side (disk) ----

  localWrite(path: string, content: string, opts: { atomic?: boolean } = {}): LocalEntry {
    const existing = this.world.local.get(p(path));
    const l: LocalEntry = {
      path: p(path),
      kind: 'file',
      inode: existing && !opts.atomic ? existing.inode : this.alloc.inode(),
      sizeBytes: content.length,
      mtimeMs: this.alloc.nowMs(),
      sha1: content,
    };
    this.world.local.set(l.path, l);
    return l;
  }

  localMkdir(path: string): LocalEntry {
    const l: LocalEntry = { path: p(path), kind: 'folder', inode: this.alloc.inode(), sizeBytes: 0, mtimeMs: this.alloc.nowMs(), sha1: null };
    this.world.local.set(l.path, l);
    return l;
  }

  localSpecial(path: string, kind: 'symlink' | 'other'): void {
    this.world.local.set(p(path), { path: p(path), kind, inode: this.alloc.inode(), sizeBytes: 0, mtimeMs: this.alloc.nowMs(), sha1: null });
  }

  localMove(from: string, to: string): void {
    const moved = [...this.world.local.values()].filter((l) => isAncestorOrSelf(p(from), l.path));
    if (moved.length === 0) throw new Error(`sim: no local ${from}`);
    for (const l of moved) this.world.local.delete(l.path);
    for (const l of moved) {
      const np = rebase(l.path, p(from), p(to));
      this.world.local.set(np, { ...l, path: np });
    }
  }

  localDelete(path: string): void {
    for (const k of [...this.world.local.keys()]) if (isAncestorOrSelf(p(path), k)) this.world.local.delete(k);
  }

  // ---- what the planner sees ----

  /**
   * The snapshot the observer would build. Like the scanner, local SHA-1 is left null for a file whose stat
   * matches its base row (the scanner does not re-hash it).
   */
  snapshot(): Snapshot {
    const local = new Map<RelPath, LocalEntry>();
    for (const l of this.world.local.values()) {
      const s = this.world.synced.get(l.path);
      const unchanged = s && s.inode === l.inode && s.mtimeMs === l.mtimeMs && s.sizeBytes === l.sizeBytes;
      local.set(l.path, { ...l, sha1: l.kind === 'file' && !unchanged ? l.sha1 : null });
    }
    return {
      root: this.root,
      remote: new Map(this.world.remote),
      local,
      synced: new Map(this.world.synced),
      remoteTrashed: new Set(this.world.remoteTrashed),
      deferred: new Set(this.deferred),
    };
  }

  apply(op: Operation): void {
    applyOutcome(this.world, op, this.alloc);
  }
}

