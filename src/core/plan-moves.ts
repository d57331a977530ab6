/**
 * Target checks for pending moves. PURE.
 *
 * A move proceeds when the destination folder exists on the side being changed and the destination name is
 * free there (or is the item itself: a case-only rename). When another item holds the name and is itself
 * leaving it in this pass, the move waits a pass. When something that stays holds it, both are kept: the
 * local one is renamed aside with a conflict-copy name, and the move follows on a later pass.
 * Moves can wait on each other in a cycle (a swap of names, or a folder renamed onto the name of a file that
 * moved into it): when a move waits on an item whose own move also waits, that item is first moved aside to a
 * free temporary name on the same side ("parked"), which frees the name; it reaches its place a pass later.
 */
import type { LocalEntry } from './model.js';
import type { ItemState } from './plan-index.js';
import { checkBoxName } from './names.js';
import { ancestorsOf, basename, foldKey, isAncestorFolded, parentOf } from './paths.js';
import { baseRowHolder, candidate, localGuard, localParentExists, remoteParentId, utf8Bytes, type Candidate, type PlanContext } from './plan-context.js';
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

/** A move's outcome this pass: an operation, nothing yet, or waiting on another item leaving the name. */
type Resolution = Candidate | null | { readonly blockedBy: ItemState };

function isBlocked(r: Resolution): r is { readonly blockedBy: ItemState } {
  return r !== null && 'blockedBy' in r;
}

export function resolveMoves(
  ctx: PlanContext,
  moves: readonly PendingMove[],
  vacated: Vacated,
): { readonly candidates: Candidate[]; readonly stuck: readonly PendingMove[] } {
  const results = moves.map((m) => ({ m, r: m.side === 'remote' ? resolveRemoteMove(ctx, m, vacated) : resolveLocalMove(ctx, m, vacated) }));
  const stuck = new Map<ItemState, PendingMove>();
  for (const { m, r } of results) if (r === null || isBlocked(r)) stuck.set(m.item, m);
  const out: Candidate[] = [];
  const parked = new Set<ItemState>();
  for (const { m, r } of results) {
    if (r === null) continue;
    if (!isBlocked(r)) {
      out.push(r);
      continue;
    }
    const other = stuck.get(r.blockedBy);
    // One parked item per cycle is enough: an item already being parked does not ask for another.
    if (other === undefined || other.side !== m.side || parked.has(r.blockedBy) || parked.has(m.item)) continue;
    parked.add(r.blockedBy);
    out.push(park(ctx, r.blockedBy, m.side));
  }
  return { candidates: out, stuck: [...stuck.values()].filter((m) => !parked.has(m.item)) };
}

/**
 * Last resort, used only when a pass would otherwise plan nothing but moves still wait. In order, for the
 * first waiting move (by base path) where it applies: park the synced item that holds the destination name
 * here, or the synced non-folder that holds the name of a destination folder; move an item moved here back
 * to where Box has it (moves on the two sides that contradict each other: the Box layout wins); park on Box an
 * item moved here whose Box name a new local entry needs; park an item whose base row is stale (neither side is at its path), which moves the row out of a new entry's way.
 */
export function breakDeadlock(ctx: PlanContext, stuck: readonly PendingMove[]): Candidate | null {
  const ordered = [...stuck].sort((a, b) => (a.item.synced.path < b.item.synced.path ? -1 : a.item.synced.path > b.item.synced.path ? 1 : 0));
  for (const m of ordered) {
    const it = m.item;
    if (m.side === 'local' && it.local !== null) {
      // Waiting on a name held here by another synced item that has nothing planned: park that one.
      const holder = (ctx.index.localByKey.get(foldKey(m.to)) ?? []).map((o) => ctx.index.localOwner.get(o.path)).find((o) => o !== undefined && o !== it);
      if (holder !== undefined) return park(ctx, holder, 'local');
      // Or on a folder to move into, whose name is held here by a synced non-folder (possibly itself).
      const blocker = [...ancestorsOf(m.to)].reverse().map((a) => ctx.index.localByKey.get(foldKey(a))).find((ls) => ls !== undefined);
      const owner = blocker && !blocker.some((l) => l.kind === 'folder') ? ctx.index.localOwner.get(blocker[0]!.path) : undefined;
      if (owner !== undefined) return park(ctx, owner, 'local');
      continue;
    }
    if (m.side !== 'remote' || !ctx.mayWriteLocal || it.remotePath === null || it.local === null) continue;
    const to = it.remotePath;
    if (!localParentExists(ctx, to) || ctx.index.localByKey.has(foldKey(to))) continue;
    return candidate({
      kind: 'local-move',
      root: ctx.root,
      remoteId: it.synced.remoteId,
      from: it.local.path,
      to,
      guard: localGuard(it.local),
      reason: `moved here to ${it.local.path}, but moves on Box contradict it (each side moved items into the other); the Box location wins`,
    }, it.synced.path);
  }
  // A Box item that must move (it moved here) but waits, while a new local entry needs its Box name.
  const holdsName = ordered.find(
    (m) => m.side === 'remote' && m.item.remotePath !== null && (ctx.index.localByKey.get(foldKey(m.item.remotePath)) ?? []).some((l) => !ctx.index.localOwner.has(l.path)),
  );
  if (holdsName && ctx.mayWriteRemote) return park(ctx, holdsName.item, 'remote');
  // An item whose base row sits where neither side has it any more can hold that name against a new entry:
  // parking it here moves the row along with it.
  const stale = ordered.find((m) => m.item.local !== null && m.item.synced.path !== m.item.localPath && m.item.synced.path !== m.item.remotePath);
  return stale && ctx.mayWriteLocal ? park(ctx, stale.item, 'local') : null;
}

function park(ctx: PlanContext, it: ItemState, side: 'remote' | 'local'): Candidate {
  const from = side === 'local' ? it.localPath! : it.remotePath!;
  const to = conflictPath(ctx, from);
  const reason = `moved aside to "${basename(to)}" for now, to free its name for another move that waits on it; it moves to its place on a later pass`;
  if (side === 'local') {
    return candidate({ kind: 'local-move', root: ctx.root, remoteId: it.synced.remoteId, from, to, guard: localGuard(it.local), reason }, it.synced.path);
  }
  const r = it.remote!;
  return candidate({
    kind: 'remote-move',
    root: ctx.root,
    remoteId: r.id,
    itemKind: r.kind === 'folder' ? 'folder' : 'file',
    from,
    to,
    parentId: r.parentId ?? ctx.index.snapshot.root.remoteId,
    name: basename(to),
    ifMatch: r.etag,
    reason,
  }, it.synced.path);
}

function resolveRemoteMove(ctx: PlanContext, m: PendingMove, vacated: Vacated): Resolution {
  const it = m.item;
  const r = it.remote!;
  const name = basename(m.to);
  const check = checkBoxName(name);
  if (!check.ok) return report(ctx, m.to, check.problem, `moved here to a name Box refuses: ${check.message}`);
  if (it.remotePath !== null && isAncestorFolded(it.remotePath, m.to)) return park(ctx, it, 'remote');
  const parentId = remoteParentId(ctx, m.to);
  if (parentId === null) return parentIsSelf(ctx, m, 'remote') ? park(ctx, it, 'remote') : null;
  const rowHolder = baseRowHolder(ctx, m.to, r.id);
  if (rowHolder !== undefined) return { blockedBy: rowHolder };
  const occupant = ctx.index.remoteByKey.get(foldKey(m.to));
  if (occupant !== undefined && occupant.id !== r.id) {
    const owner = ctx.index.itemById.get(occupant.id);
    if (vacated.remote.has(foldKey(m.to))) return owner ? { blockedBy: owner } : null;
    if (!ctx.mayWriteLocal) return null;
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
  }, it.synced.path);
}

function resolveLocalMove(ctx: PlanContext, m: PendingMove, vacated: Vacated): Resolution {
  const it = m.item;
  const l = it.local!;
  const name = basename(m.to);
  if (utf8Bytes(name) > 255) return report(ctx, m.to, 'name-too-long', `renamed on Box to a name longer than the 255 bytes Linux allows; not moved here`);
  // Into its own subtree (the Box layout nests it under something now inside it), or under a new Box folder whose
  // name differs from its own only in case (Box sees one name, so that folder waits for this one to leave): step
  // aside first.
  if (isAncestorFolded(l.path, m.to)) return park(ctx, it, 'local');
  if (!localParentExists(ctx, m.to)) return parentIsSelf(ctx, m, 'local') ? park(ctx, it, 'local') : null;
  const rowHolder = baseRowHolder(ctx, m.to, it.synced.remoteId);
  if (rowHolder !== undefined) return { blockedBy: rowHolder };
  const occupants = (ctx.index.localByKey.get(foldKey(m.to)) ?? []).filter((o) => o.path !== l.path);
  if (occupants.length > 0) {
    if (vacated.local.has(foldKey(m.to))) {
      const owner = occupants.map((o) => ctx.index.localOwner.get(o.path)).find((o) => o !== undefined);
      return owner ? { blockedBy: owner } : null;
    }
    const stranger = occupants.find((o) => !ctx.index.localOwner.has(o.path) && movable(o));
    if (stranger === undefined) return null;
    const to = conflictPath(ctx, stranger.path);
    return conflictCopy(ctx, stranger, to, `"${name}" is needed here for an item moved on Box; keeping both: the local one moves to "${basename(to)}"`);
  }
  return candidate(
    { kind: 'local-move', root: ctx.root, remoteId: it.synced.remoteId, from: l.path, to: m.to, guard: localGuard(l), reason: m.reason },
    it.synced.path,
  );
}

/** The destination's parent is the item itself (a folder took its name and it moves into that folder). */
function parentIsSelf(ctx: PlanContext, m: PendingMove, side: 'remote' | 'local'): boolean {
  const parent = parentOf(m.to);
  if (parent === '') return false;
  const own = side === 'remote' ? m.item.remotePath : m.item.localPath;
  return own !== null && foldKey(own) === foldKey(parent);
}

function movable(l: LocalEntry): boolean {
  return l.kind === 'file' || l.kind === 'folder';
}
