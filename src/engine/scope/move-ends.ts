/**
 * The one walk that finds the other ends of local moves, for both scopes that must see a move from both ends:
 * a window of a full pass (snapshot.ts, closeMoves) and a hinted pass (hinted-scope.ts). A pass that sees
 * `other/dir` but still holds the old row for `dir` would create a new folder on Box instead of moving the old
 * one, so each takes the far ends it is shown, then the far ends of those, at most MAX_MOVE_ROUNDS times.
 */
import type { LocalEntry, RelPath, RootId, SyncedEntry } from '../../core/model.js';
import { mayBeMoved } from '../../core/same-item.js';
import type { Journal } from '../../ports/journal.js';

/** Rounds of "take the other end of each move": a move of a move of a move is rare. */
export const MAX_MOVE_ROUNDS = 4;

/** What the walk reads: the entries at a path, and where the journal last saw an inode. */
export interface MoveTrees {
  localAt(path: RelPath): LocalEntry | undefined;
  syncedAt(path: RelPath): SyncedEntry | undefined;
  localByInode(inode: number): LocalEntry | undefined;
  syncedByInode(inode: number): SyncedEntry | undefined;
}

/**
 * Where the synced row `s` went: the local entry elsewhere with its inode, when its own path holds no entry with
 * that inode and the kind allows a move (core/same-item.ts mayBeMoved). Undefined when it did not move.
 */
export function movedTo(trees: MoveTrees, s: SyncedEntry): LocalEntry | undefined {
  if (trees.localAt(s.path)?.inode === s.inode) return undefined;
  const now = trees.localByInode(s.inode);
  return now && now.path !== s.path && mayBeMoved(s, now) ? now : undefined;
}

/**
 * The other ends of the local moves shown by `local` and `synced`: for a local entry whose inode a synced row at
 * another path has (and its own path's row has not), that path (where it came from); for a synced row whose
 * local entry is gone or is another inode, where the journal saw its inode last (where it went).
 */
export function localMoveEnds(trees: MoveTrees, local: Iterable<LocalEntry>, synced: Iterable<SyncedEntry>): RelPath[] {
  const out: RelPath[] = [];
  for (const l of local) {
    if (trees.syncedAt(l.path)?.inode === l.inode) continue;
    const was = trees.syncedByInode(l.inode);
    if (was && was.path !== l.path && mayBeMoved(was, l)) out.push(was.path);
  }
  for (const s of synced) {
    const now = movedTo(trees, s);
    if (now) out.push(now.path);
  }
  return out;
}

/** The walk over the journal's trees of one root. */
export function journalMoveTrees(journal: Journal, rootId: RootId): MoveTrees {
  return {
    localAt: (p) => journal.getLocal(rootId, p),
    syncedAt: (p) => journal.getSynced(rootId, p),
    localByInode: (inode) => journal.localByInode(rootId, inode),
    syncedByInode: (inode) => journal.syncedByInode(rootId, inode),
  };
}
