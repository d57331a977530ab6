/**
 * The questions every part of the sync asks about a local entry, each answered here once.
 *
 * - localUnchanged: is this file the one the journal (or a guard) last saw, so its recorded SHA-1 still holds and
 *   nothing needs hashing or uploading?
 * - sameItemMoved: is the entry at another path with a synced row's inode that item, moved there?
 * - mayBeMoved: might it be, so that a pass must look at both ends (the move-end walk)?
 */
import type { LocalEntry, SyncedEntry } from './model.js';

/** The part of a stat that says "the same file, untouched": what the journal records of a local entry. */
export interface StatSeen {
  readonly inode: number;
  readonly sizeBytes: number;
  readonly mtimeMs: number;
}

/** A node:fs Stats (or anything with its names) as a StatSeen. */
export function statSeen(st: { readonly ino: number; readonly size: number; readonly mtimeMs: number }): StatSeen {
  return { inode: st.ino, sizeBytes: st.size, mtimeMs: st.mtimeMs };
}

/**
 * Is the file `now` the one recorded as `seen`: same inode, same size, same mtime, all compared exactly?
 *
 * Why these three: the sync never hashes a file it can prove untouched, and a write that keeps the inode changes
 * the mtime (and usually the size), while a file replaced by a rename (what editors and our own downloads do)
 * is another inode. Why exactly: the journal keeps mtime as a REAL, so the double node's stat gave comes back
 * bit for bit, and the same stat of an untouched file gives the same double again. Rounding to the millisecond
 * (as some copies once did) would only add a way to miss an edit made within the same millisecond as the
 * recorded one with the same size; it never made an untouched file read as unchanged that otherwise would not.
 * Kinds are the caller's business (a folder has no size or mtime worth comparing).
 */
export function localUnchanged(seen: StatSeen, now: StatSeen): boolean {
  return seen.inode === now.inode && seen.sizeBytes === now.sizeBytes && seen.mtimeMs === now.mtimeMs;
}

/**
 * Is the local entry `l`, found at another path with the inode of the synced row `s`, that item moved there?
 *
 * Why not the inode alone: the file system reuses a freed inode at once (a file deleted, another written), so
 * the inode only says where to look. A folder is a folder (a rename of a folder carries its inode and nothing
 * else comparable). A file must have the size and mtime it had, compared exactly as localUnchanged does (a rename
 * keeps both, a new file written into a reused inode almost never has both), and, where both sides were hashed,
 * the same SHA-1. A moved file that was also edited is not this item moved: it reads as a deletion at the old
 * path and a new file at the new one, which loses nothing. A web link's link file is never followed through a
 * move: web links are download-only.
 *
 * This is the planner's rule (core/plan-index.ts) and also the rule the hinted scope uses to tell a move in sight
 * from a deletion and the move-end walk uses to take a move's far end, so that what a pass looks at and what the
 * planner then does agree.
 */
export function sameItemMoved(s: SyncedEntry, l: LocalEntry): boolean {
  if (s.kind === 'weblink') return false;
  if (s.kind === 'folder' || l.kind === 'folder') return s.kind === l.kind;
  if (l.kind !== 'file') return false;
  if (l.sizeBytes !== s.sizeBytes || l.mtimeMs !== s.mtimeMs) return false;
  return l.sha1 === null || s.sha1 === null || l.sha1 === s.sha1;
}

/**
 * Might the entry `l` at another path with the inode of the synced row `s` be that item moved: the same kind?
 *
 * This only decides what a pass looks at (the move-end walk takes a move's far end into the scope), never what
 * it does: the planner then asks sameItemMoved of the two ends it was given. So it is wider on purpose. Taking a
 * far end the planner then does not pair costs a larger scope; leaving out an end the planner pairs with something
 * it was given (a moved file also rewritten still carries the row's inode, which the planner checks at its target
 * path) plans the item from one end only, and a window (windows.ts) that saw one end uploads onto a name another
 * window still holds. Only a kind the inode could not keep (a folder where a file was) is no move at all.
 */
export function mayBeMoved(s: { readonly kind: string }, l: { readonly kind: string }): boolean {
  return (s.kind === 'folder') === (l.kind === 'folder');
}
