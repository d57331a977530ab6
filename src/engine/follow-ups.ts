/**
 * Chained creation within one pass. A pass's batch never holds a folder and something inside it (plan-batch.ts),
 * and the planner puts nothing into a folder that is not yet on both sides (plan-context.ts, parentInSync). So a
 * chain of new folders used to take one pass per level: 150 nested folders met the pass limit (50) and took
 * four runs to converge.
 *
 * Now, as soon as a folder created by the pass (on Box or here) is committed, the pass plans that folder's
 * subtree at once (the same pure planner, over a snapshot scoped to that folder, chained on the id just
 * committed) and runs what it finds there alongside the rest of the batch; the folders those operations create
 * are followed the same way. Only operations that create something (folders, uploads, downloads, web-link files,
 * links of what exists on both sides) and that touch nothing but paths strictly inside the new folder are taken:
 * no other operation of the batch can be at those paths (the batch held the folder itself), and nothing is
 * deleted, moved or trashed outside the normal passes (the mass-delete guard sees every deletion). Anything else
 * the subtree needs waits for the next pass, as before. A new folder with more than FOLLOW_UP_MAX_ROWS rows below
 * it (on either side) is not followed: its subtree is left to the next pass, whose windows keep the snapshots of a
 * big tree bounded; only a smaller one is planned whole at once.
 */
import { opPath, pathsTouched, type Operation } from '../core/operations.js';
import type { RelPath, SyncRoot } from '../core/model.js';
import { isAncestorOrSelf } from '../core/paths.js';
import { plan } from '../core/plan.js';
import type { Journal } from '../ports/journal.js';
import type { IsIgnored } from './observe-local.js';
import { buildSnapshot, type SnapshotScope } from './snapshot.js';
import type { RemoteChildren } from './remote-tree.js';

/** The largest subtree (rows below the new folder, per side) planned at once when its folder is created. */
export const FOLLOW_UP_MAX_ROWS = 10_000;

const CREATES: ReadonlySet<Operation['kind']> = new Set(['create-remote-folder', 'create-local-folder', 'upload', 'download', 'write-weblink', 'link']);

/** True for an operation after whose commit the folder it made is planned at once (see followUps). */
export function createsFolder(op: Operation): boolean {
  return op.kind === 'create-remote-folder' || op.kind === 'create-local-folder';
}

export interface FollowUpArgs {
  readonly journal: Journal;
  readonly root: SyncRoot;
  readonly isIgnored: IsIgnored;
  readonly nowMs: number;
  /** The scope of the pass: its settling paths stay deferred. */
  readonly scope: SnapshotScope;
  /** The folder the pass just created and committed. */
  readonly folder: RelPath;
  /** Operations the pass must not run (failed once this run). */
  readonly skip: (op: Operation) => boolean;
  /** Where the snapshot walks remote subtrees (a windowed pass's rows: window-rows.ts); the journal by default. */
  readonly remoteRows?: RemoteChildren;
}

/** The creations that the folder just made allows inside it (strictly below it), planned from the journal now. */
export function followUps(a: FollowUpArgs): Operation[] {
  const remoteId = a.journal.getSynced(a.root.id, a.folder)?.remoteId;
  if (remoteId === undefined) return [];
  const limit = FOLLOW_UP_MAX_ROWS + 1;
  if (a.journal.countLocalUnder(a.root.id, a.folder, limit) > FOLLOW_UP_MAX_ROWS || a.journal.countRemoteBelow(remoteId, limit) > FOLLOW_UP_MAX_ROWS) return [];
  const unsettled = a.scope.kind === 'hinted' && a.scope.unsettled !== undefined ? { unsettled: a.scope.unsettled } : {};
  const rows = a.remoteRows ? { remoteRows: a.remoteRows } : {};
  // closeMoves: an entry moved into the new folder is seen with its other end, so it is planned as a move (which
  // touches a path outside the folder and waits for the next pass), never uploaded or downloaded as a new item.
  const snapshot = buildSnapshot({ journal: a.journal, root: a.root, isIgnored: a.isIgnored, nowMs: a.nowMs, scope: { kind: 'hinted', localPaths: [a.folder], remoteIds: [], closeMoves: true, ...unsettled }, ...rows });
  return creationsInside(plan(snapshot, { nowMs: a.nowMs }).ops, [a.folder]).filter((op) => !snapshot.deferred.has(opPath(op)) && !a.skip(op));
}

/** Of a plan's operations, the creations that touch only paths strictly inside one of `folders`. */
function creationsInside(ops: readonly Operation[], folders: readonly RelPath[]): Operation[] {
  const inside = (p: RelPath): boolean => folders.some((f) => p !== f && isAncestorOrSelf(f, p));
  return ops.filter((op) => CREATES.has(op.kind) && pathsTouched(op).every(inside));
}
