/**
 * The scope of a hinted pass (a daemon pass, or syncing live changes between the windows of a full pass).
 *
 * The hinted paths are re-stat'ed (observe-local.ts restatLocal). The pass looks at the disk a little after the
 * watcher did, and sees a local move from one end only more often than one would think:
 * - a folder moved from `dir` to `other/dir` is hinted as `other` (its mtime moved) before `dir` is: a pass that
 *   sees `other/dir` but still holds the old row for `dir` would create a new folder on Box instead of moving
 *   the old one. So the far end of every local move that starts or ends in the scope (same inode, same kind) is
 *   re-stat'ed too and joins the scope, a bounded number of rounds.
 * - a file renamed in `dir` just before `dir` itself was moved (or `dir` hinted for an mtime change just before
 *   it was moved) is found gone, with nothing in the journal saying where it went: the watcher has not reported
 *   the move's other end yet. A pass acting on that would trash on Box what was only moved.
 * So a synced path found gone with no move end in sight (it reads as a deletion), and a folder above a hinted
 * path that vanished without a hint, are "settling": this pass defers them (the planner plans nothing at, below,
 * from or to them) until SETTLE_GONE_MS after they were first found gone, by when the watcher has reported where
 * they went (its delete hold is shorter), and the hint ledger hints them again then (scope/hint-ledger.ts). A real
 * deletion reaches Box that much later; a move is planned as a move.
 */
import { timeSlicer } from './time-slice.js';
import type { RelPath, RemoteId } from '../core/model.js';
import { sameItemMoved } from '../core/same-item.js';
import { journalMoveTrees, localMoveEnds as moveEndsOf, MAX_MOVE_ROUNDS, movedTo } from './scope/move-ends.js';
import { ancestorsOf, depth } from '../core/paths.js';
import type { Journal } from '../ports/journal.js';
import { restatLocal, type LocalObserverDeps } from './observe-local.js';
import { notCovered, topmost, type SnapshotScope } from './snapshot.js';

/**
 * How long a path found gone without a move end in sight is deferred: past the watcher's delete hold
 * (watcher-hint-batcher.ts, 600 ms) with room for a loaded machine.
 */
export const SETTLE_GONE_MS = 1_500;

/** Paths first found gone, per root (RelPath -> when), kept by the engine between passes. */
export type GoneSince = Map<RelPath, number>;

/** A settled entry is dropped this many settle times after it was first found gone. */
const KEEP_SETTLED_FACTOR = 4;

export async function hintedScope(
  deps: LocalObserverDeps,
  localPaths: readonly RelPath[],
  remoteIds: readonly RemoteId[],
  opts: { signal?: AbortSignal; goneSince?: GoneSince; nowMs?: number; settleMs?: number; slice?: () => Promise<void> } = {},
): Promise<SnapshotScope> {
  const { signal } = opts;
  // A burst of thousands of hints: the walks below give the event loop a turn between their steps.
  const slice = opts.slice ?? timeSlicer();
  const found = await restatLocal(deps, localPaths, signal);
  const taken: RelPath[] = [...localPaths, ...found];
  let round: RelPath[] = taken;
  for (let i = 0; i < MAX_MOVE_ROUNDS && round.length > 0; i++) {
    const ends = notCovered(await localMoveEnds(deps.journal, deps, round, slice), taken);
    if (ends.length === 0) break;
    const more = await restatLocal(deps, ends, signal);
    taken.push(...ends, ...more);
    round = [...ends, ...more];
  }
  const settleMs = opts.settleMs ?? SETTLE_GONE_MS;
  if (opts.goneSince === undefined || settleMs <= 0) return { kind: 'hinted', localPaths: taken, remoteIds };
  // A folder that vanished unhinted is re-stat'ed too, so the journal says it is gone like the rest.
  const vanished = await vanishedAncestors(deps, taken, slice);
  if (vanished.length > 0) taken.push(...vanished, ...(await restatLocal(deps, vanished, signal)));
  // Below a hinted folder, the re-scan may have listed a name just before it was renamed: gone too.
  const candidates = [...taken, ...(await goneBelow(deps.journal, deps, taken, slice))];
  await slice();
  const unsettled = await settling(opts.goneSince, (p) => readsAsDeleted(deps.journal, deps, p), candidates, opts.nowMs ?? Date.now(), settleMs, slice);
  return { kind: 'hinted', localPaths: taken, remoteIds, ...(unsettled.length > 0 ? { unsettled } : {}) };
}

/**
 * Updates the record of paths found gone (this pass's scope and those already recorded, looked at again): a
 * path that reads as deleted is recorded with the time it was first found so; one that is back, or whose move
 * is now in sight, is dropped. Returns every path still settling (found gone less than `settleMs` ago),
 * hinted in this pass or not: a pass run for a Box event must not act below a folder that is settling either.
 * An entry stays a while after it settled (and is no longer returned), so that the pass that takes it up again
 * acts on it rather than starting its wait over.
 */
async function settling(
  goneSince: GoneSince,
  deleted: (p: RelPath) => boolean,
  scope: readonly RelPath[],
  nowMs: number,
  settleMs: number,
  slice: () => Promise<void>,
): Promise<RelPath[]> {
  for (const [p, t] of goneSince) if (nowMs - t > KEEP_SETTLED_FACTOR * settleMs) goneSince.delete(p);
  // Shallowest first: below a path that reads as deleted, the rest is deferred with it and not looked at.
  const candidates = [...new Set([...scope, ...goneSince.keys()])].sort((a, b) => depth(a) - depth(b));
  const gone = new Set<RelPath>();
  for (const p of candidates) {
    await slice();
    if (ancestorsOf(p).some((a) => gone.has(a))) continue;
    if (!deleted(p)) {
      goneSince.delete(p);
      continue;
    }
    gone.add(p);
    if (!goneSince.has(p)) goneSince.set(p, nowMs);
  }
  return [...goneSince].filter(([, t]) => nowMs - t < settleMs).map(([p]) => p);
}

/**
 * A path gone from the disk (no local row after the re-stat) that holds synced rows none of which the journal
 * sees anywhere else (same inode): to the planner it reads as a deletion.
 */
function readsAsDeleted(journal: Journal, deps: Pick<LocalObserverDeps, 'root'>, p: RelPath): boolean {
  const root = deps.root.id;
  if (journal.getLocal(root, p) !== undefined) return false;
  let synced = false;
  const trees = journalMoveTrees(journal, root);
  for (const s of selfAndBelow(journal.getSynced(root, p), journal.syncedUnder(root, p))) {
    synced = true;
    const now = movedTo(trees, s);
    if (now && sameItemMoved(s, now)) return false;
  }
  return synced;
}

/** Synced paths below the scope's folders that have no local row (any longer). */
async function goneBelow(journal: Journal, deps: Pick<LocalObserverDeps, 'root'>, paths: readonly RelPath[], slice: () => Promise<void>): Promise<RelPath[]> {
  const root = deps.root.id;
  const out: RelPath[] = [];
  for (const base of topmost(paths)) {
    await slice();
    if (journal.getLocal(root, base)?.kind !== 'folder') continue;
    for (const s of journal.syncedUnder(root, base)) if (journal.getLocal(root, s.path) === undefined) out.push(s.path);
  }
  return out;
}

/**
 * Folders that vanished without being hinted, above hinted paths found gone: the topmost one the journal still
 * holds (same inode) that the disk no longer has.
 */
async function vanishedAncestors(deps: LocalObserverDeps, paths: readonly RelPath[], slice: () => Promise<void>): Promise<RelPath[]> {
  const { journal, root, fs } = deps;
  const hinted = new Set(paths);
  const checked = new Map<RelPath, boolean>();
  const out = new Set<RelPath>();
  for (const p of hinted) {
    await slice();
    if (journal.getLocal(root.id, p) !== undefined) continue;
    for (const a of ancestorsOf(p).reverse()) {
      if (hinted.has(a)) break;
      let gone = checked.get(a);
      if (gone === undefined) {
        const row = journal.getLocal(root.id, a);
        // One that cannot be looked at (EACCES, ENAMETOOLONG) is unknown, never gone.
        const now = row ? await fs.stat(a).catch(() => row) : undefined;
        gone = row !== undefined && (now === undefined || now.kind !== 'folder' || now.inode !== row.inode);
        checked.set(a, gone);
      }
      if (gone) {
        out.add(a);
        break;
      }
    }
  }
  return [...out];
}

/**
 * The other ends of the local moves the journal shows at or below `paths`: for a local entry whose inode a
 * synced row at another path has, that path (where it came from); for a synced row whose local entry is gone
 * or is another inode, where the journal saw its inode last (where it went).
 */
export async function localMoveEnds(
  journal: Journal,
  deps: Pick<LocalObserverDeps, 'root'>,
  paths: readonly RelPath[],
  slice: () => Promise<void>,
): Promise<RelPath[]> {
  const root = deps.root.id;
  const trees = journalMoveTrees(journal, root);
  const out: RelPath[] = [];
  // A base per turn check: a burst's thousands of bases are thousands of journal reads (25,000 of them held the
  // event loop for 0.75 s in one stretch before this loop was sliced).
  for (const base of topmost(paths)) {
    await slice();
    out.push(
      ...moveEndsOf(trees, selfAndBelow(journal.getLocal(root, base), journal.localUnder(root, base)), selfAndBelow(journal.getSynced(root, base), journal.syncedUnder(root, base))),
    );
  }
  return out;
}

/** An entry (when there is one) and then the entries below it. */
export function* selfAndBelow<T>(self: T | undefined, below: Iterable<T>): Iterable<T> {
  if (self !== undefined) yield self;
  yield* below;
}
