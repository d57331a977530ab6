/**
 * Target checks for pending moves. PURE.
 *
 * A move proceeds when the destination folder exists on the side being changed and the destination name is
 * free there (or is the item itself: a case-only rename). When another item holds the name and is itself
 * leaving it in this pass, the move waits a pass. When something that stays holds it, both are kept: the
 * local one is renamed aside with a conflict-copy name, and the move follows on a later pass.
 * A swap (two items exchanging names on one side) waits forever; it is reported by nothing and left for a
 * full rescan. It is rare, and breaking it needs a temporary name the Operation vocabulary has no op for.
 */
import type { LocalEntry } from './model.js';
import { checkBoxName } from './names.js';
import { basename, foldKey } from './paths.js';
import { candidate, localGuard, localParentExists, remoteParentId, utf8Bytes, type Candidate, type PlanContext } from './plan-context.js';
import { conflictCopy, report } from './plan-ops.js';
import { conflictPath, type PendingMove } from './plan-synced.js';

/** Folded paths that some decision of this pass empties, per side. */
export interface Vacated {
  readonly local: ReadonlySet<string>;
  readonly remote: ReadonlySet<string>;
}

export function vacatedBy(candidates: readonly Candidate[], moves: readonly PendingMove[]): Vacated {
  const local = new Set<string>();
  const remote = new Set<string>();
  for (const { op } of candidates) {
    switch (op.kind) {
      case 'remote-trash':
        remote.add(foldKey(op.path));
        break;
      case 'remote-move':
        remote.add(foldKey(op.from));
        break;
      case 'local-trash':
      case 'conflict-copy':
        local.add(foldKey(op.path));
        break;
      case 'local-move':
        local.add(foldKey(op.from));
        break;
      default:
        break;
    }
  }
  for (const m of moves) {
    if (m.side === 'remote' && m.item.remotePath) remote.add(foldKey(m.item.remotePath));
    if (m.side === 'local' && m.item.localPath) local.add(foldKey(m.item.localPath));
  }
  return { local, remote };
}

export function resolveMove(ctx: PlanContext, m: PendingMove, vacated: Vacated): Candidate | null {
  return m.side === 'remote' ? resolveRemoteMove(ctx, m, vacated) : resolveLocalMove(ctx, m, vacated);
}

function resolveRemoteMove(ctx: PlanContext, m: PendingMove, vacated: Vacated): Candidate | null {
  const it = m.item;
  const r = it.remote!;
  const name = basename(m.to);
  const check = checkBoxName(name);
  if (!check.ok) return report(ctx, m.to, check.problem, `moved here to a name Box refuses: ${check.message}`);
  const parentId = remoteParentId(ctx, m.to);
  if (parentId === null) return null;
  const occupant = ctx.index.remoteByKey.get(foldKey(m.to));
  if (occupant !== undefined && occupant.id !== r.id) {
    if (vacated.remote.has(foldKey(m.to)) || !ctx.mayWriteLocal) return null;
    const to = conflictPath(ctx, m.to);
    return conflictCopy(ctx, it.local!, to, `moved here to "${name}", but Box has a different item under that name; keeping both: this one is renamed to "${basename(to)}"`);
  }
  if (r.kind === 'weblink') return null;
  return candidate({
    kind: 'remote-move',
    root: ctx.root,
    remoteId: r.id,
    itemKind: r.kind,
    from: it.remotePath!,
    to: m.to,
    parentId,
    name,
    ifMatch: r.etag,
    reason: m.reason,
  });
}

function resolveLocalMove(ctx: PlanContext, m: PendingMove, vacated: Vacated): Candidate | null {
  const it = m.item;
  const l = it.local!;
  const name = basename(m.to);
  if (utf8Bytes(name) > 255) return report(ctx, m.to, 'name-too-long', `renamed on Box to a name longer than the 255 bytes Linux allows; not moved here`);
  if (!localParentExists(ctx, m.to)) return null;
  const occupants = (ctx.index.localByKey.get(foldKey(m.to)) ?? []).filter((o) => o.path !== l.path);
  if (occupants.length > 0) {
    if (vacated.local.has(foldKey(m.to))) return null;
    const stranger = occupants.find((o) => !ctx.index.localOwner.has(o.path) && movable(o));
    if (stranger === undefined) return null;
    const to = conflictPath(ctx, stranger.path);
    return conflictCopy(ctx, stranger, to, `"${name}" is needed here for an item moved on Box; keeping both: the local one moves to "${basename(to)}"`);
  }
  return candidate({ kind: 'local-move', root: ctx.root, remoteId: it.synced.remoteId, from: l.path, to: m.to, guard: localGuard(l), reason: m.reason });
}

function movable(l: LocalEntry): boolean {
  return l.kind === 'file' || l.kind === 'folder';
}
