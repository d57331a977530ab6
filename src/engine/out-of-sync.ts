/**
 * What the journal says is not in sync under a root: the paths whose local row, merge base (synced row) and
 * remote row disagree. Read from the journal only (no disk, no Box), in one walk of each tree, so it costs about
 * what a status count costs times three.
 *
 * The daemon reads it when it goes idle (throttled) to keep its promise that no path is forgotten: a path out of
 * sync must either have a failure row (retried or parked with a reason) or be planned by a pass it has
 * scheduled. The simulation checks the same at quiescence (test/sim/invariants.ts).
 */
import { asRelPath, type LocalEntry, type RelPath, type RemoteEntry, type SyncedEntry, type SyncRoot } from '../core/model.js';
import { ancestorsOf } from '../core/paths.js';
import type { Journal } from '../ports/journal.js';
import type { IsIgnored } from './observe-local.js';
import { walkRemote } from './remote-tree.js';
import { localUnchanged } from '../core/same-item.js';
import { ROWS_PER_STEP, runWhole, type Steps } from '../core/slices.js';
import { comparePaths } from '../core/path-order.js';

export interface OutOfSyncPath {
  readonly path: RelPath;
  readonly why: string;
}

export { comparePaths } from '../core/path-order.js';

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
 * row and no set of every path (at a million rows the lookups took seconds and the set tens of MB). The journal
 * gives each tree in comparePaths order, or reports it damaged (core/path-order.ts, journal/path-table.ts).
 */
function* localSideMerged(journal: Journal, root: SyncRoot, ignored: Ignored, limit: number): Steps<LocalSide> {
  const found: OutOfSyncPath[] = [];
  const fresh: OutOfSyncPath[] = [];
  let synced = 0;
  const locals = journal.localUnder(root.id, '')[Symbol.iterator]();
  let l: LocalEntry | undefined;
  const nextLocal = (): void => {
    const r = locals.next();
    l = r.done ? undefined : r.value;
  };
  const onlyHere = (e: LocalEntry): void => {
    if (fresh.length < limit && newHere(e, ignored)) fresh.push({ path: e.path, why: 'new locally' });
  };
  nextLocal();
  let rows = 0;
  for (const s of journal.syncedUnder(root.id, '')) {
    if (++rows % ROWS_PER_STEP === 0) yield;
    while (l !== undefined && comparePaths(l.path, s.path) < 0) {
      onlyHere(l);
      nextLocal();
      if (++rows % ROWS_PER_STEP === 0) yield;
    }
    let at: LocalEntry | undefined;
    if (l !== undefined && l.path === s.path) {
      at = l;
      nextLocal();
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
    nextLocal();
    if (++rows % ROWS_PER_STEP === 0) yield;
  }
  return { found: [...found, ...fresh.slice(0, limit - found.length)], synced };
}

const ignoredWith =
  (isIgnored: IsIgnored): Ignored =>
  (p, isDir) =>
    isIgnored(p, isDir) || ancestorsOf(p).some((a) => a !== '' && isIgnored(a, true));

/** At most `limit` paths, in no particular order (a big change is told by its first ones). */
export function outOfSync(journal: Journal, root: SyncRoot, isIgnored: IsIgnored, limit = 100): OutOfSyncPath[] {
  return runWhole(outOfSyncSteps(journal, root, isIgnored, limit));
}

/**
 * outOfSync as work that may be paused every ROWS_PER_STEP rows (core/slices.ts): the daemon's idle check runs it
 * in slices. Each tree is read in keyset pages, so a pause costs nothing and the walk resumes where it stopped;
 * but rows a pass wrote during a pause may be read before or after it, so what a paused walk found is told again
 * by pathOutOfSync before it is acted on (daemon/lifecycle/convergence-watch.ts).
 */
export function* outOfSyncSteps(journal: Journal, root: SyncRoot, isIgnored: IsIgnored, limit = 100): Steps<OutOfSyncPath[]> {
  const ignored = ignoredWith(isIgnored);
  const here = yield* localSideMerged(journal, root, ignored, limit);
  const out = here.found;
  if (out.length >= limit) return out;
  const add = (path: RelPath, why: string): boolean => {
    out.push({ path, why });
    return out.length >= limit;
  };
  // Synced rows (not ignored) whose item Box still has at their path: when that is every one, none is gone from
  // Box, and no set of every path is needed. Each synced row names one Box id, so none is counted twice.
  let matched = 0;
  let rows = 0;
  for (const walked of walkRemote(journal, root.remoteId, '', (p, e) => !isIgnored(p, e.kind === 'folder'))) {
    if (++rows % ROWS_PER_STEP === 0) yield;
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
  for (const { entry, path } of walkRemote(journal, root.remoteId, '', (p, e) => !isIgnored(p, e.kind === 'folder'))) {
    onBox.add(entry.kind === 'weblink' ? asRelPath(path + '.url') : path);
    if (++rows % ROWS_PER_STEP === 0) yield;
  }
  for (const s of journal.syncedUnder(root.id, '')) {
    if (!onBox.has(s.path) && !ignored(s.path, s.kind === 'folder') && add(s.path, 'gone from Box')) return out;
    if (++rows % ROWS_PER_STEP === 0) yield;
  }
  return out;
}

/**
 * Whether one path is out of sync now, by lookups (no walk): the first of the reasons outOfSync would give it
 * (local side first), or null when it is in sync. What a walk paused across a pass found is checked again by it.
 */
export function pathOutOfSync(journal: Journal, root: SyncRoot, isIgnored: IsIgnored, path: RelPath): string | null {
  const ignored = ignoredWith(isIgnored);
  const s = journal.getSynced(root.id, path);
  const l = journal.getLocal(root.id, path);
  const kept = s !== undefined && !ignored(s.path, s.kind === 'folder');
  if (kept) {
    const why = changedHere(s, l);
    if (why !== null) return why;
  } else if (l !== undefined && newHere(l, ignored)) return 'new locally';
  const r = remoteSeenAt(journal, root, isIgnored, path);
  if (r === undefined) return kept ? 'gone from Box' : null;
  if (s === undefined) return 'new on Box';
  return s.remoteId !== r.id || (r.kind !== 'folder' && s.etag !== r.etag) ? 'changed on Box' : null;
}

/** The remote row walkRemote would yield at a path (a web link's at NAME.url), by names from the root down. */
function remoteSeenAt(journal: Journal, root: SyncRoot, isIgnored: IsIgnored, path: RelPath): RemoteEntry | undefined {
  const at = (names: readonly string[]): RemoteEntry | undefined => {
    let cur = journal.getRemote(root.remoteId);
    let p = '';
    for (const name of names) {
      if (cur === undefined) return undefined;
      cur = journal.remoteChildNamed(cur.id, name);
      p = p === '' ? name : `${p}/${name}`;
      if (cur !== undefined && isIgnored(asRelPath(p), cur.kind === 'folder')) return undefined;
    }
    return cur;
  };
  const names = path.split('/');
  const r = at(names);
  if (r !== undefined && r.kind !== 'weblink') return r;
  const last = names[names.length - 1]!;
  if (!last.endsWith('.url') || last === '.url') return undefined;
  const link = at([...names.slice(0, -1), last.slice(0, -'.url'.length)]);
  return link?.kind === 'weblink' ? link : undefined;
}
