/**
 * Planning windows: how a full pass over a big root is cut into bounded pieces, so that a
 * full pass never holds the whole root in memory.
 *
 * A window is a list of base paths; the snapshot of a window holds each base's subtree on all three trees and
 * the chain of ancestors up to the root (the hinted-scope machinery of snapshot.ts), plus the other end of every
 * move that starts or ends in it (`closeMoves`), so that a move between windows is planned as a move (the Box id
 * is kept, nothing is transferred again) whichever window sees it first. The far ends are followed MAX_MOVE_ROUNDS
 * deep; the ends left past that are deferred in that window (nothing is planned at or onto them), and the window
 * that holds them plans the rest of the chain.
 *
 * The root is walked top-down through the journal, never loaded whole. A child of a folder becomes a base
 * (whole subtree) when its subtree holds at most `maxEntries` rows on every tree, or when it must be planned as
 * one piece: a folder deleted, moved or changed in kind on either side (the planner trashes a folder as a whole
 * only when it sees everything below it). Otherwise, a folder that is the same on all three trees, or new on
 * one or both sides, is split: it is walked in turn, and it reaches the snapshots of its children's windows as an
 * ancestor (where the planner creates or links it first). Names that Box would treat as the same name (case and
 * Unicode twins) stay in one window. Bases are packed into windows of about `maxEntries` rows.
 *
 * Memory: the walk holds one folder's children per level of depth plus the window being packed.
 */
import type { LocalEntry, RelPath, RemoteEntry, RemoteId, SyncRoot, SyncedEntry } from '../core/model.js';
import { ancestorsOf, basename, foldKey, joinPath, parentOf } from '../core/paths.js';
import type { Journal } from '../ports/journal.js';
import type { IsIgnored } from './observe-local.js';
import { ROWS_PER_STEP, runWhole, type Steps } from '../core/slices.js';

/**
 * Rows per planning window by default: a small snapshot and plan, and a live change waits for at most one window
 * of transfers (the daemon syncs hints between windows). Measured while the daemon mirrored 10,000 small files:
 * windows of 1,000 gave a p50 of about 2 s for a live change either way, windows of 300 about 0.7-1 s, for a
 * first mirror 4 s (13 %) longer.
 */
export const DEFAULT_WINDOW_ENTRIES = 300;

export type WindowJournal = Pick<
  Journal,
  | 'localChildren'
  | 'syncedChildren'
  | 'remoteChildren'
  | 'countLocalUnder'
  | 'countSyncedUnder'
  | 'countRemoteBelow'
  | 'syncedByInode'
  | 'syncedByRemoteId'
>;

interface Child {
  local?: LocalEntry;
  synced?: SyncedEntry;
  remote?: RemoteEntry;
}

/** True when the whole root holds at most `maxEntries` rows on every tree: one full snapshot is fine. */
export function fitsOneWindow(journal: WindowJournal, root: SyncRoot, maxEntries: number): boolean {
  const limit = maxEntries + 1;
  return (
    journal.countLocalUnder(root.id, '', limit) <= maxEntries &&
    journal.countSyncedUnder(root.id, '', limit) <= maxEntries &&
    journal.countRemoteBelow(root.remoteId, limit) <= maxEntries
  );
}

/**
 * The windows of a full pass, lazily: each is computed from the journal as it is when the previous window has
 * been reconciled, so a window never plans from rows an earlier window already changed.
 */
export function* planWindows(journal: WindowJournal, root: SyncRoot, isIgnored: IsIgnored, maxEntries: number): Generator<RelPath[]> {
  const limit = maxEntries + 1;
  const sizeOf = (path: RelPath, c: Child): number => {
    const folder = c.local?.kind === 'folder' || c.synced?.kind === 'folder' || c.remote?.kind === 'folder';
    if (!folder) return 1;
    const remote = c.remote?.kind === 'folder' ? journal.countRemoteBelow(c.remote.id, limit) : 0;
    return 1 + Math.max(journal.countLocalUnder(root.id, path, limit), journal.countSyncedUnder(root.id, path, limit), remote);
  };
  const stack: { path: RelPath | ''; remoteId: RemoteId | undefined }[] = [{ path: '', remoteId: root.remoteId }];
  let pack: RelPath[] = [];
  let packed = 0;
  while (stack.length > 0) {
    const { path, remoteId } = stack.pop()!;
    const groups = new Map<string, Map<string, Child>>();
    const at = (name: string): Child => {
      const key = foldKey(name);
      let group = groups.get(key);
      if (!group) groups.set(key, (group = new Map()));
      let child = group.get(name);
      if (!child) group.set(name, (child = {}));
      return child;
    };
    for (const l of journal.localChildren(root.id, path)) at(basename(l.path)).local = l;
    for (const s of journal.syncedChildren(root.id, path)) at(basename(s.path)).synced = s;
    if (remoteId !== undefined) for (const r of journal.remoteChildren(remoteId)) at(r.name).remote ??= r;
    const descend: { path: RelPath; remoteId: RemoteId | undefined }[] = [];
    for (const key of [...groups.keys()].sort()) {
      const group = groups.get(key)!;
      const members = [...group].map(([name, c]) => ({ path: joinPath(path, name), c }));
      const only = members.length === 1 ? members[0]! : undefined;
      const bases: RelPath[] = [];
      let groupSize = 0;
      for (const m of members) {
        const isDir = m.c.local?.kind === 'folder' || m.c.remote?.kind === 'folder' || m.c.synced?.kind === 'folder';
        if (isIgnored(m.path, isDir)) continue;
        const size = sizeOf(m.path, m.c);
        if (only && size > maxEntries && splittable(journal, root, only.c)) {
          descend.push({ path: m.path, remoteId: m.c.remote?.kind === 'folder' ? m.c.remote.id : undefined });
          continue;
        }
        bases.push(m.path);
        groupSize += size;
      }
      if (bases.length === 0) continue;
      // A group that would not fit beside what is packed starts the next window.
      if (packed > 0 && packed + groupSize > maxEntries) {
        yield pack;
        pack = [];
        packed = 0;
      }
      pack.push(...bases);
      packed += groupSize;
    }
    // Walked in name order: the last pushed is popped first, so push in reverse.
    for (let i = descend.length - 1; i >= 0; i--) stack.push(descend[i]!);
  }
  if (pack.length > 0) yield pack;
}

/**
 * May this folder be planned piecewise? Yes when it is the same folder on all three trees, or new (no base row)
 * on one or both sides and not the far end of a move. No when it was deleted, moved or changed kind: the planner
 * must see it whole.
 */
function splittable(journal: WindowJournal, root: SyncRoot, c: Child): boolean {
  const { local, synced, remote } = c;
  if (local && local.kind !== 'folder') return false;
  if (remote && remote.kind !== 'folder') return false;
  if (synced) {
    return synced.kind === 'folder' && local !== undefined && local.inode === synced.inode && remote !== undefined && remote.id === synced.remoteId;
  }
  if (local && journal.syncedByInode(root.id, local.inode) !== undefined) return false;
  if (remote && journal.syncedByRemoteId(root.id, remote.id) !== undefined) return false;
  return true;
}

/**
 * The names beside `path` that Box would treat as the same name (case and Unicode twins), on any of the three
 * trees. A window that takes a path it did not start with (the far end of a move, a path an operation touched)
 * takes these too, so the planner sees the clash a whole-root snapshot would show. One scan of the parent's
 * children per path: only for the few paths moves add.
 */
export function caseTwins(journal: TwinJournal, root: SyncRoot, path: RelPath): RelPath[] {
  return runWhole(caseTwinsSteps(journal, root, path));
}

/**
 * caseTwins as work that may be paused (core/slices.ts) between two pages of the parent's children, on each tree:
 * a live change beside 20,000 siblings read them in one statement per tree (17-61 ms of CPU each, more on a loaded
 * machine, three trees in one turn of the event loop).
 */
export function* caseTwinsSteps(journal: TwinJournal, root: SyncRoot, path: RelPath): Steps<RelPath[]> {
  const parent = parentOf(path);
  const name = basename(path);
  const key = foldKey(name);
  const out = new Set<RelPath>();
  const consider = (childName: string): void => {
    if (childName !== name && foldKey(childName) === key) out.add(joinPath(parent, childName));
  };
  for (const page of journal.localChildrenPages?.(root.id, parent) ?? [journal.localChildren(root.id, parent)]) {
    for (const l of page) consider(basename(l.path));
    yield;
  }
  for (const page of journal.syncedChildrenPages?.(root.id, parent) ?? [journal.syncedChildren(root.id, parent)]) {
    for (const s of page) consider(basename(s.path));
    yield;
  }
  let folder: RemoteId | undefined = root.remoteId;
  if (parent !== '') for (const seg of parent.split('/')) folder = folder === undefined ? undefined : journal.remoteChildNamed(folder, seg)?.id;
  if (folder !== undefined) {
    let n = 0;
    for (const r of journal.remoteChildrenPaged(folder)) {
      consider(r.name);
      if (++n % ROWS_PER_STEP === 0) yield;
    }
  }
  return [...out];
}

/** The twins of a path and of each of its ancestors (a new folder on the way may clash as well). */
export function caseTwinsOnTheWay(journal: TwinJournal, root: SyncRoot, path: RelPath): RelPath[] {
  return runWhole(caseTwinsOnTheWaySteps(journal, root, path));
}

/** caseTwinsOnTheWay in steps (caseTwinsSteps). */
export function* caseTwinsOnTheWaySteps(journal: TwinJournal, root: SyncRoot, path: RelPath): Steps<RelPath[]> {
  const out: RelPath[] = [];
  for (const p of [path, ...ancestorsOf(path)]) out.push(...(yield* caseTwinsSteps(journal, root, p)));
  return out;
}

export type TwinJournal = Pick<Journal, 'localChildren' | 'syncedChildren' | 'localChildrenPages' | 'syncedChildrenPages' | 'remoteChildrenPaged' | 'remoteChildNamed'>;
