/**
 * Building the planner's Snapshot from the journal.
 *
 * Strategy:
 * - Full scope (sync --once, first run, full rescan): the whole root. Remote rows are walked breadth-first from
 *   the root folder, so only items below the root are included and paths come from the walk itself.
 * - Hinted scope (daemon passes): only the subtrees the hints touched, plus their ancestors, so the cost grows
 *   with the change rather than with the tree. A touched path contributes its own subtree on all three trees
 *   and the chain of ancestors up to the root; a touched remote id contributes its current subtree and the old
 *   path its synced row had, so a move is seen from both ends. The planner never plans deletions for entries
 *   it was not given, so a partial snapshot is safe, with one rule to keep it so: a folder the planner could
 *   delete, move or replace as a whole (a synced folder gone, moved or of another kind on either side) is never
 *   given without its subtree. A path below such a folder is taken from the folder (wholeFolderAbove).
 *
 * In both scopes ignored paths are left out of all three trees: an exclusion added later "re-baselines"
 * (stops syncing) rather than reading as a deletion on either side.
 */
import type { LocalEntry, RelPath, RemoteEntry, RemoteId, Snapshot, SyncRoot, SyncedEntry } from '../core/model.js';
import type { Journal } from '../ports/journal.js';
import { journalMoveTrees, localMoveEnds, MAX_MOVE_ROUNDS, type MoveTrees } from './scope/move-ends.js';
import { deferredPaths } from './failures.js';
import type { IsIgnored } from './observe-local.js';
import { ancestorsOf, basename, joinPath, parentOf } from '../core/paths.js';
import { MAX_TREE_DEPTH } from '../core/path-limits.js';
import { remotePathOf, walkRemote, type RemoteChildren } from './remote-tree.js';
import { caseTwinsOnTheWaySteps } from './windows.js';
import { syncedByRemoteIds } from './snapshot-rows.js';

export type SnapshotScope =
  | { readonly kind: 'full' }
  | {
      readonly kind: 'hinted';
      readonly localPaths: readonly RelPath[];
      readonly remoteIds: readonly RemoteId[];
      /** A planning window of a full pass (windows.ts): also take the other end of every move seen. */
      readonly closeMoves?: boolean;
      /** Paths found gone with no move in sight, still settling (hinted-scope.ts): deferred for this pass. */
      readonly unsettled?: readonly RelPath[];
    };

type Trees = { remote: Map<RemoteId, RemoteEntry>; local: Map<RelPath, LocalEntry>; synced: Map<RelPath, SyncedEntry> };

export interface SnapshotArgs {
  readonly journal: Journal;
  readonly root: SyncRoot;
  readonly isIgnored: IsIgnored;
  readonly nowMs: number;
  readonly scope: SnapshotScope;
  /** Where a hinted scope's remote subtrees are walked from: the journal, or a windowed pass's rows (window-rows.ts). */
  readonly remoteRows?: RemoteChildren;
}

export type IgnoredAnywhere = (path: RelPath, isDir: boolean) => boolean;

/**
 * Is a path ignored, or inside an ignored folder? The answer for each folder is remembered for the life of one
 * snapshot, so a file costs one matcher call rather than one per ancestor.
 */
export function ignoredAnywhere(isIgnored: IsIgnored): IgnoredAnywhere {
  const folders = new Map<RelPath, boolean>();
  const folder = (p: RelPath): boolean => {
    let ignored = folders.get(p);
    if (ignored === undefined) {
      const parent = parentOf(p);
      ignored = (parent !== '' && folder(parent)) || isIgnored(p, true);
      folders.set(p, ignored);
    }
    return ignored;
  };
  return (path, isDir) => {
    const parent = parentOf(path);
    return (parent !== '' && folder(parent)) || (isDir ? folder(path) : isIgnored(path, false));
  };
}

export function buildSnapshot(args: SnapshotArgs): Snapshot {
  const steps = snapshotSteps(args);
  for (;;) {
    const step = steps.next();
    if (step.done === true) return step.value;
  }
}

/**
 * The same snapshot, giving the event loop a turn (`slice`, engine/time-slice.ts) between its steps: a pass over a
 * big scope (a full pass, a burst of thousands of hints) reads tens of thousands of rows, which would otherwise hold
 * the daemon (status, the watcher) for seconds. Rows of one path are read within one step; what another task
 * changes meanwhile is caught where it always is, by the executor's checks before each operation (guards, planned
 * stats), as for any change made after planning.
 */
export async function buildSnapshotSliced(args: SnapshotArgs, slice: () => Promise<void>): Promise<Snapshot> {
  const steps = snapshotSteps(args);
  for (;;) {
    const step = steps.next();
    if (step.done === true) return step.value;
    await slice();
  }
}

/** The snapshot's reads, one path (or row) a step: a step is where a sliced build may let the event loop in. */
function* snapshotSteps(args: SnapshotArgs): Generator<void, Snapshot, void> {
  const { journal, root, isIgnored } = args;
  const isIgnoredAnywhere = ignoredAnywhere(isIgnored);
  const remote = new Map<RemoteId, RemoteEntry>();
  const local = new Map<RelPath, LocalEntry>();
  const synced = new Map<RelPath, SyncedEntry>();
  // A window's move ends past MAX_MOVE_ROUNDS: deferred below.
  const cutOff: RelPath[] = [];
  const rootEntry = journal.getRemote(root.remoteId);
  if (rootEntry) remote.set(rootEntry.id, rootEntry);

  if (args.scope.kind === 'full') {
    for (const { entry } of walkRemote(journal, root.remoteId, '', (p, e) => !isIgnored(p, e.kind === 'folder'))) {
      remote.set(entry.id, entry);
      yield;
    }
    for (const e of journal.localUnder(root.id, '')) {
      if (!isIgnoredAnywhere(e.path, e.kind === 'folder')) local.set(e.path, e);
      yield;
    }
    for (const s of journal.syncedUnder(root.id, '')) {
      if (!isIgnoredAnywhere(s.path, s.kind === 'folder')) synced.set(s.path, s);
      yield;
    }
  } else {
    const bases = new Set<RelPath>(args.scope.localPaths);
    for (const id of args.scope.remoteIds) {
      const now = remotePathOf(journal, root, id);
      if (now !== null && now !== '') bases.add(now);
      const was = journal.syncedByRemoteId(root.id, id);
      if (was) bases.add(was.path);
    }
    const into = { remote, local, synced };
    const taken: RelPath[] = [];
    const wholeFrom = wholeFolderAbove(journal, root);
    let round = topmost([...bases].map(wholeFrom));
    // A window (closeMoves) also takes the far end of every move that starts or ends in it, and the far ends of
    // those, a bounded number of times: a chain longer than that is finished by the window that holds its other
    // end (the planner never deletes what it was not given). The far ends left over when the bound is reached are
    // deferred in this snapshot: a move onto one of them would land on a name whose occupant the planner was not
    // shown (the executor refuses it, and the window would fail it again on every pass).
    const memo: AddMemo = { ancestorsTaken: new Set(), remoteAt: new Map(), rows: args.remoteRows ?? journal };
    for (let i = 0; round.length > 0 && i < MAX_MOVE_ROUNDS; i++) {
      for (const base of round) {
        if (isIgnoredAnywhere(base, false)) continue;
        addPath(journal, root, base, into, isIgnored, isIgnoredAnywhere, memo);
        yield;
      }
      taken.push(...round);
      yield* addContract(journal, root, into);
      if (args.scope.closeMoves !== true) break;
      const ends = notCovered(moveEnds(journal, root, into), taken);
      const twins: RelPath[] = [];
      // Paused between two pages of each parent's children (a big folder's are not one statement).
      for (const e of ends) twins.push(...(yield* caseTwinsOnTheWaySteps(journal, root, e)));
      round = notCovered([...ends, ...twins].map(wholeFrom), taken);
    }
    if (args.scope.closeMoves === true) for (const p of round) cutOff.push(p);
  }

  const remoteTrashed = new Set<RemoteId>();
  for (const s of synced.values()) {
    if (!remote.has(s.remoteId) && journal.isTrashed(s.remoteId)) remoteTrashed.add(s.remoteId);
    yield;
  }
  const deferred = deferredPaths(journal, root.id, args.nowMs);
  if (args.scope.kind === 'hinted') for (const p of args.scope.unsettled ?? []) deferred.add(p);
  for (const p of cutOff) deferred.add(p);
  return { root, remote, local, synced, remoteTrashed, deferred };
}

/**
 * Where a base must be taken from so that the planner never deletes more than it sees: the topmost ancestor that
 * is a synced folder no longer the same on all three trees (gone, moved, or another kind on either side), with
 * its whole subtree, else the base itself. The planner would delete, move or replace such a folder as a whole, so
 * it must see everything below it: a window that held only the far end of a move (`e/a`) and its gone parent `e`
 * would trash `e` on Box with an edit of `e/e` it was not given. planWindows never splits such a folder either.
 * Answers are remembered per ancestor for one snapshot.
 */
function wholeFolderAbove(journal: Journal, root: SyncRoot): (base: RelPath) => RelPath {
  // Per folder: its remote item found by name (undefined when there is none), and whether it is whole-only.
  const seen = new Map<RelPath, { remoteId: RemoteId | undefined; whole: boolean }>();
  const look = (folder: RelPath): { remoteId: RemoteId | undefined; whole: boolean } => {
    let known = seen.get(folder);
    if (known) return known;
    const parent = parentOf(folder);
    const parentId = parent === '' ? root.remoteId : look(parent).remoteId;
    const r = parentId === undefined ? undefined : journal.remoteChildNamed(parentId, basename(folder));
    const s = journal.getSynced(root.id, folder);
    let whole = false;
    if (s) {
      const l = journal.getLocal(root.id, folder);
      whole = s.kind !== 'folder' || l?.kind !== 'folder' || l.inode !== s.inode || r?.id !== s.remoteId;
    }
    known = { remoteId: r?.kind === 'folder' ? r.id : undefined, whole };
    seen.set(folder, known);
    return known;
  };
  return (base) => {
    for (const a of ancestorsOf(base).reverse()) if (look(a).whole) return a;
    return base;
  };
}

/** The paths that have no ancestor among the others: a set lookup per ancestor, not a scan of the kept ones. */
export function topmost(paths: readonly RelPath[]): RelPath[] {
  const all = new Set(paths);
  return [...all].filter((p) => !ancestorsOf(p).some((a) => all.has(a))).sort();
}

/**
 * What one snapshot already read, so that the bases of a big hinted scope (thousands of files in a few folders)
 * do not each read their shared ancestors again: the ancestors whose rows are in the snapshot, and each folder
 * path resolved by name on the remote tree. Within one synchronous build the journal does not change, so a row
 * read once is the row every base would read.
 */
interface AddMemo {
  readonly ancestorsTaken: Set<RelPath>;
  readonly remoteAt: Map<string, RemoteEntry | undefined>;
  /** Where the remote subtrees are read (the journal, or the rows a windowed pass keeps: window-rows.ts). */
  readonly rows: RemoteChildren;
}

function addPath(
  journal: Journal,
  root: SyncRoot,
  base: RelPath,
  into: { remote: Map<RemoteId, RemoteEntry>; local: Map<RelPath, LocalEntry>; synced: Map<RelPath, SyncedEntry> },
  isIgnored: IsIgnored,
  isIgnoredAnywhere: IgnoredAnywhere,
  memo: AddMemo,
): void {
  for (const p of [base, ...ancestorsOf(base)]) {
    if (p !== base) {
      // An ancestor taken for an earlier base has its rows in the snapshot, and so have all of its ancestors.
      if (memo.ancestorsTaken.has(p)) break;
      memo.ancestorsTaken.add(p);
    }
    const l = journal.getLocal(root.id, p);
    if (l) into.local.set(p, l);
    const s = journal.getSynced(root.id, p);
    if (s) {
      into.synced.set(p, s);
      const r = journal.getRemote(s.remoteId);
      if (r) into.remote.set(r.id, r);
    }
  }
  for (const l of journal.localUnder(root.id, base)) if (!isIgnoredAnywhere(l.path, l.kind === 'folder')) into.local.set(l.path, l);
  for (const s of journal.syncedUnder(root.id, base)) if (!isIgnoredAnywhere(s.path, s.kind === 'folder')) into.synced.set(s.path, s);
  // Resolve the base on the remote tree by name, collecting the ancestor chain, then take its subtree.
  let parentId: RemoteId = root.remoteId;
  let found: RemoteEntry | undefined;
  let prefix = '';
  for (const name of base.split('/')) {
    prefix = prefix === '' ? name : `${prefix}/${name}`;
    if (memo.remoteAt.has(prefix)) found = memo.remoteAt.get(prefix);
    else {
      found = journal.remoteChildNamed(parentId, name);
      memo.remoteAt.set(prefix, found);
    }
    if (!found) return;
    into.remote.set(found.id, found);
    parentId = found.id;
  }
  if (found?.kind === 'folder') {
    for (const { entry } of walkRemote(memo.rows, found.id, base, (p, e) => !isIgnored(p, e.kind === 'folder'))) into.remote.set(entry.id, entry);
  }
}

/**
 * The planner's partial-snapshot contract: every synced row comes with its local entry (found by inode when a
 * local move carried it elsewhere) and its remote entry with all ancestors.
 */
function* addContract(journal: Journal, root: SyncRoot, into: Trees): Generator<void, void, void> {
  for (const s of into.synced.values()) {
    if (!into.local.has(s.path)) {
      const moved = journal.localByInode(root.id, s.inode);
      if (moved) into.local.set(moved.path, moved);
    }
    addRemoteWithAncestors(journal, root, s.remoteId, into.remote);
    yield;
  }
}

/**
 * The paths at the other end of the moves a snapshot shows: the local ends from the one move-end walk
 * (scope/move-ends.ts); for a remote item with no base row, the path of the base row it had (same Box id); for a
 * base row, where its remote item is now. Remote paths come from the snapshot's own remote map where it can.
 */
function moveEnds(journal: Journal, root: SyncRoot, into: Trees): RelPath[] {
  const trees: MoveTrees = { ...journalMoveTrees(journal, root.id), localAt: (p) => into.local.get(p), syncedAt: (p) => into.synced.get(p) };
  const out: RelPath[] = localMoveEnds(trees, into.local.values(), into.synced.values());
  const pathOf = remotePaths(journal, root, into.remote);
  const syncedIds = new Set<RemoteId>();
  for (const s of into.synced.values()) {
    syncedIds.add(s.remoteId);
    const now = into.remote.has(s.remoteId) ? pathOf(s.remoteId) : null;
    if (now !== null && now !== '' && now !== s.path) out.push(now);
  }
  const unseen: RemoteId[] = [];
  for (const r of into.remote.values()) if (r.id !== root.remoteId && !syncedIds.has(r.id)) unseen.push(r.id);
  // One statement for a few hundred ids (snapshot-rows.ts); the order does not matter (the caller sorts).
  for (const was of syncedByRemoteIds(journal, root, unseen).values()) out.push(was.path);
  return out;
}

/** Paths of the remote items of a map, from the map itself (memoized), else from the journal. */
function remotePaths(journal: Journal, root: SyncRoot, remote: ReadonlyMap<RemoteId, RemoteEntry>): (id: RemoteId) => RelPath | '' | null {
  const memo = new Map<RemoteId, RelPath | '' | null>([[root.remoteId, '']]);
  const pathOf = (id: RemoteId, depth: number): RelPath | '' | null => {
    const known = memo.get(id);
    if (known !== undefined) return known;
    const e = remote.get(id);
    let p: RelPath | '' | null;
    if (!e || e.parentId === null || depth > MAX_TREE_DEPTH) p = remotePathOf(journal, root, id);
    else {
      const parent = pathOf(e.parentId, depth + 1);
      p = parent === null ? null : joinPath(parent, e.name);
    }
    memo.set(id, p);
    return p;
  };
  return (id) => pathOf(id, 0);
}

/** The paths not inside (nor equal to) one already taken, topmost first. */
export function notCovered(paths: readonly RelPath[], taken: readonly RelPath[]): RelPath[] {
  const have = new Set(taken);
  const covered = (p: RelPath): boolean => have.has(p) || ancestorsOf(p).some((a) => have.has(a));
  return topmost(paths.filter((p) => !covered(p)));
}

function addRemoteWithAncestors(journal: Journal, root: SyncRoot, id: RemoteId, into: Map<RemoteId, RemoteEntry>): void {
  // Already in (with its ancestors, or stopped at one already in): the loop below would read it only to stop.
  if (into.has(id)) return;
  let cur = journal.getRemote(id);
  for (let depth = 0; cur && !into.has(cur.id) && depth < MAX_TREE_DEPTH; depth++) {
    into.set(cur.id, cur);
    if (cur.id === root.remoteId || cur.parentId === null) return;
    cur = journal.getRemote(cur.parentId);
  }
}
