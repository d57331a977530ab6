/**
 * The planner: `plan(snapshot)` compares, per item, the local tree (L), the remote tree (R) and the merge base
 * (S) of one root and returns one batch of independent operations. PURE: no I/O, no clock, no randomness;
 * the same snapshot and options always give the same plan. O(n log n) in the snapshot size: every lookup
 * goes through indexes built once (plan-index.ts).
 *
 * The reconciler runs the batch, commits each outcome, observes again and calls `plan` again, until the
 * plan is quiescent. An operation that needs another one first (a download into a folder not created yet,
 * a move onto a name another item is leaving) is simply not planned in this pass; the operation it waits
 * for is in this batch, so every pass makes progress.
 *
 * Contracts the engine relies on:
 * - Partial snapshots. The planner decides only about what it is given. A deletion is planned only for a
 *   merge-base row that is in `snapshot.synced` and whose counterpart is absent from the snapshot on one
 *   side; so, for every synced row it passes, the engine must pass the local entry (if any, including one a
 *   local move carried elsewhere, found by inode) and the remote entry with its ancestors (if any). Entries
 *   not in the snapshot are never deleted, moved or trashed. A folder is trashed as a whole only when nothing
 *   below it in the snapshot has changed, so on a folder deletion the engine must pass the folder's subtree
 *   on the surviving side (the observer has it: it is the subtree of a hinted path).
 * - Deferred paths (`snapshot.deferred`): nothing is planned at, below, from or to them. They do not hold
 *   quiescence: `quiescent` means "no operation other than reports", so `sync --once` ends while items wait
 *   for their backoff, and the failures table says so.
 * - Reports (`kind: 'report'`) are emitted on every pass while the problem lasts; they never change anything
 *   and do not count against quiescence. The engine records them (disposition skip).
 * - Mass deletes: `countDeletions(plan)` counts the trash operations of a batch for the guard.
 * - Conflict-copy names take their time from `PlanOptions.nowMs` (default 0 = 1970-01-01, for tests).
 * - Recording outcomes: src/core/apply.ts is the executable model of what each successful operation does to
 *   both sides and to the merge base; the reconciler's commit must match it. In particular the base row of a
 *   Box id follows that id (a `link`, `download` or `upload-version` at another path re-keys it, and a move
 *   relocates the rows of the subtree without touching content fields), `conflict-copy` drops the rows at
 *   its path, and no operation is planned onto a path whose base row still belongs to another item.
 * - Moves that wait on each other (swaps, a folder renamed onto the name of something that moved into it)
 *   are untangled by moving one item aside to a free conflict-copy-style name for one pass ("parking");
 *   contradicting moves on the two sides are resolved in favour of the Box layout. Both happen only when
 *   nothing else can progress, or for the items directly involved.
 *
 * Decisions worth knowing (details in plan-synced.ts, plan-new.ts, plan-moves.ts):
 * - An edit beats a deletion on either side. Edited here + trashed on Box: restore from the Box trash, then
 *   upload the new version. Edited on Box + deleted here: download again.
 * - Both changed with different content: the local version becomes a conflict copy next to the original,
 *   the Box version takes the original name, then the copy is uploaded. Equal SHA-1 is not a conflict.
 * - Both moved to different places: the Box location wins (the local entry is moved there).
 * - Web links are download-only. A link file deleted here is written again on the next pass (deleting a
 *   shortcut is not a request to delete the Box web link, and a pure planner has no tombstone to remember a
 *   "forget this one" choice); edits to a link file are kept until the target URL changes on Box, which
 *   rewrites it; a link file moved here is treated as deleted (written again at the Box location) and the
 *   moved file becomes an ordinary new file.
 * - download-only: never writes to Box. Local edits, deletions, moves and new local entries stay local and
 *   untouched until the Box side of the same item changes; then the Box version wins, and a local edit of
 *   that same file is first moved aside as a conflict copy (so a local edit is never overwritten).
 * - upload-only: never writes locally. Box follows the local tree: local edits overwrite (Box keeps the old
 *   version), local deletions trash on Box, items removed from Box are uploaded again; items new on Box and
 *   Box-side edits and moves are left alone.
 */
import type { Snapshot } from './model.js';
import type { Operation, Plan } from './operations.js';
import { buildIndex } from './plan-index.js';
import type { Candidate, PlanContext } from './plan-context.js';
import { decideSynced, type PendingMove } from './plan-synced.js';
import { breakDeadlock, resolveMoves, vacatedBy } from './plan-moves.js';
import { planLocalNew, planRemoteNew } from './plan-new.js';
import { selectBatch } from './plan-batch.js';

export interface PlanOptions {
  /** Wall-clock time of this pass, epoch ms; used only for conflict-copy names. */
  readonly nowMs?: number;
}

export function plan(snapshot: Snapshot, opts: PlanOptions = {}): Plan {
  const index = buildIndex(snapshot);
  const direction = snapshot.root.direction;
  const ctx: PlanContext = {
    index,
    root: snapshot.root.id,
    direction,
    nowMs: opts.nowMs ?? 0,
    mayWriteRemote: direction !== 'download-only',
    mayWriteLocal: direction !== 'upload-only',
  };

  const candidates: Candidate[] = [];
  const moves: PendingMove[] = [];
  for (const item of index.items) {
    const d = decideSynced(ctx, item);
    if (d.kind === 'ops') candidates.push(...d.candidates);
    else if (d.kind === 'move') moves.push(d.move);
  }
  const vacated = vacatedBy(candidates, moves);
  const resolved = resolveMoves(ctx, moves, vacated);
  candidates.push(...resolved.candidates, ...planLocalNew(ctx), ...planRemoteNew(ctx));
  if (resolved.stuck.length > 0 && candidates.every((c) => c.op.kind === 'report')) {
    const unlock = breakDeadlock(ctx, resolved.stuck);
    if (unlock) candidates.push(unlock);
  }

  const ops = selectBatch(candidates);
  return { ops, quiescent: ops.every((op) => op.kind === 'report') };
}

/** Trash operations in a batch, per side, for the mass-delete guard. */
export function countDeletions(p: Plan): { readonly local: number; readonly remote: number } {
  let local = 0;
  let remote = 0;
  for (const op of p.ops) {
    if (op.kind === 'local-trash') local++;
    else if (op.kind === 'remote-trash') remote++;
  }
  return { local, remote };
}
