/**
 * What the journal says is not in sync under a root: the paths whose local row, merge base (synced row) and
 * remote row disagree. Read from the journal only (no disk, no Box), in one walk of each tree, so it costs about
 * what a status count costs times three.
 *
 * The daemon reads it when it goes idle (throttled) to keep its promise that no path is forgotten: a path out of
 * sync must either have a failure row (retried or parked with a reason) or be planned by a pass it has
 * scheduled. The simulation checks the same at quiescence (test/sim/invariants.ts).
 */
import { asRelPath, type LocalEntry, type RelPath, type SyncedEntry, type SyncRoot } from '../core/model.js';
import { ancestorsOf } from '../core/paths.js';
import type { Journal } from '../ports/journal.js';
import type { IsIgnored } from './observe-local.js';
import { walkRemote } from './remote-tree.js';
import { localUnchanged } from '../core/same-item.js';

export interface OutOfSyncPath {
  readonly path: RelPath;
  readonly why: string;
}

/**
 * Code point order, which is SQLite's BINARY order of the UTF-8 paths: the order of the trees' keyset pages
 * (journal `localUnder`, `syncedUnder`). UTF-16 order differs from it only where a surrogate meets a unit from
 * U+E000 up; a surrogate stands for a code point above U+FFFF, so it sorts last.
 */
export function comparePaths(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    return xs === ys ? x - y : xs ? 1 : -1;
  }
  return a.length - b.length;
}

type Ignored = (p: RelPath, isDir: boolean) => boolean;

/** What the local rows and the merge base say: found (deleted or changed locally, then new locally) and the synced rows counted. */
interface LocalSide {
  readonly found: OutOfSyncPath[];
  /** Synced rows not ignored. */
  readonly synced: number;
}

const newHere = (l: LocalEntry, ignored: Ignored): boolean => l.kind !== 'symlink' && l.kind !== 'other' && !ignored(l.path, l.kind === 'folder');

function changedHere(s: SyncedEntry, l: LocalEntry | undefined): string | null {
  if (l === undefined) return 'deleted locally';
  return (s.kind === 'folder' ? l.kind !== 'folder' : l.kind !== 'file' || !localUnchanged(s, l)) ? 'changed locally' : null;
}

/**
 * The local tree against the merge base in one merge of the two trees' pages (both in path order): no lookup per
 * row and no set of every path (at a million rows the lookups took seconds and the set tens of MB). null when a
 * tree did not come in the order comparePaths expects (then localSideByLookup answers).
 */
function localSideMerged(journal: Journal, root: SyncRoot, ignored: Ignored, limit: number): LocalSide | null {
  const found: OutOfSyncPath[] = [];
  const fresh: OutOfSyncPath[] = [];
  let synced = 0;
  const locals = journal.localUnder(root.id, '')[Symbol.iterator]();
  let l: LocalEntry | undefined;
  let lastLocal: string | null = null;
  const nextLocal = (): boolean => {
    const r = locals.next();
    l = r.done ? undefined : r.value;
    if (l !== undefined && lastLocal !== null && comparePaths(lastLocal, l.path) >= 0) return false;
    if (l !== undefined) lastLocal = l.path;
    return true;
  };
  const onlyHere = (e: LocalEntry): void => {
    if (fresh.length < limit && newHere(e, ignored)) fresh.push({ path: e.path, why: 'new locally' });
  };
  if (!nextLocal()) return null;
  let lastSynced: string | null = null;
  for (const s of journal.syncedUnder(root.id, '')) {
    if (lastSynced !== null && comparePaths(lastSynced, s.path) >= 0) return null;
    lastSynced = s.path;
    while (l !== undefined && comparePaths(l.path, s.path) < 0) {
      onlyHere(l);
      if (!nextLocal()) return null;
    }
    let at: LocalEntry | undefined;
    if (l !== undefined && l.path === s.path) {
      at = l;
      if (!nextLocal()) return null;
    }
    if (ignored(s.path, s.kind === 'folder')) {
      if (at !== undefined) onlyHere(at);
      continue;
    }
    synced++;
    const why = changedHere(s, at);
    if (why !== null && found.push({ path: s.path, why }) >= limit) return { found, synced };
  }
  while (l !== undefined && fresh.length < limit) {
    onlyHere(l);
    if (!nextLocal()) return null;
  }
  return { found: [...found, ...fresh.slice(0, limit - found.length)], synced };
}

/** The same as localSideMerged, by a lookup of each synced row's local row and a set of the synced paths. */
function localSideByLookup(journal: Journal, root: SyncRoot, ignored: Ignored, limit: number): LocalSide {
  const found: OutOfSyncPath[] = [];
  const synced = new Set<RelPath>();
  for (const s of journal.syncedUnder(root.id, '')) {
    if (ignored(s.path, s.kind === 'folder')) continue;
    synced.add(s.path);
    const why = changedHere(s, journal.getLocal(root.id, s.path));
    if (why !== null && found.push({ path: s.path, why }) >= limit) return { found, synced: synced.size };
  }
  for (const l of journal.localUnder(root.id, '')) {
    if (synced.has(l.path) || !newHere(l, ignored)) continue;
    if (found.push({ path: l.path, why: 'new locally' }) >= limit) break;
  }
  return { found, synced: synced.size };
}

/** At most `limit` paths, in no particular order (a big change is told by its first ones). */
export function outOfSync(journal: Journal, root: SyncRoot, isIgnored: IsIgnored, limit = 100): OutOfSyncPath[] {
  const ignored: Ignored = (p, isDir) => isIgnored(p, isDir) || ancestorsOf(p).some((a) => a !== '' && isIgnored(a, true));
  const here = localSideMerged(journal, root, ignored, limit) ?? localSideByLookup(journal, root, ignored, limit);
  const out = here.found;
  if (out.length >= limit) return out;
  const add = (path: RelPath, why: string): boolean => {
    out.push({ path, why });
    return out.length >= limit;
  };
  // Synced rows (not ignored) whose item Box still has at their path: when that is every one, none is gone from
  // Box, and no set of every path is needed. Each synced row names one Box id, so none is counted twice.
  let matched = 0;
  for (const walked of walkRemote(journal, root.remoteId, '', (p, e) => !isIgnored(p, e.kind === 'folder'))) {
    const { entry } = walked;
    // A web link lives here as NAME.url (its merge base is at that path).
    const path = entry.kind === 'weblink' ? asRelPath(walked.path + '.url') : walked.path;
    const s = journal.getSynced(root.id, path);
    if (s === undefined) {
      if (add(path, 'new on Box')) return out;
    } else if (s.remoteId !== entry.id || (entry.kind !== 'folder' && s.etag !== entry.etag)) {
      if (add(path, 'changed on Box')) return out;
    }
    // The walk skipped what is ignored and everything below it: only a web link's NAME.url (or a row of another
    // kind) may still be ignored where its item is not.
    if (s !== undefined && s.remoteId === entry.id && ((entry.kind !== 'weblink' && s.kind === entry.kind) || !ignored(s.path, s.kind === 'folder'))) matched++;
  }
  if (matched === here.synced) return out;
  const onBox = new Set<RelPath>();
  for (const { entry, path } of walkRemote(journal, root.remoteId, '', (p, e) => !isIgnored(p, e.kind === 'folder'))) onBox.add(entry.kind === 'weblink' ? asRelPath(path + '.url') : path);
  for (const s of journal.syncedUnder(root.id, '')) if (!onBox.has(s.path) && !ignored(s.path, s.kind === 'folder') && add(s.path, 'gone from Box')) return out;
  return out;
}
