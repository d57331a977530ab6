/**
 * What the journal says is not in sync under a root: the paths whose local row, merge base (synced row) and
 * remote row disagree. Read from the journal only (no disk, no Box), in one walk of each tree, so it costs about
 * what a status count costs times three.
 *
 * The daemon reads it when it goes idle (throttled) to keep its promise that no path is forgotten: a path out of
 * sync must either have a failure row (retried or parked with a reason) or be planned by a pass it has
 * scheduled. The simulation checks the same at quiescence (test/sim/invariants.ts).
 */
import { asRelPath, type RelPath, type SyncRoot } from '../core/model.js';
import { ancestorsOf } from '../core/paths.js';
import type { Journal } from '../ports/journal.js';
import type { IsIgnored } from './observe-local.js';
import { walkRemote } from './remote-tree.js';
import { localUnchanged } from '../core/same-item.js';

export interface OutOfSyncPath {
  readonly path: RelPath;
  readonly why: string;
}

/** At most `limit` paths, in no particular order (a big change is told by its first ones). */
export function outOfSync(journal: Journal, root: SyncRoot, isIgnored: IsIgnored, limit = 100): OutOfSyncPath[] {
  const out: OutOfSyncPath[] = [];
  const add = (path: RelPath, why: string): boolean => {
    out.push({ path, why });
    return out.length >= limit;
  };
  const ignored = (p: RelPath, isDir: boolean): boolean => isIgnored(p, isDir) || ancestorsOf(p).some((a) => a !== '' && isIgnored(a, true));
  const synced = new Set<RelPath>();
  for (const s of journal.syncedUnder(root.id, '')) {
    if (ignored(s.path, s.kind === 'folder')) continue;
    synced.add(s.path);
    const l = journal.getLocal(root.id, s.path);
    if (l === undefined) {
      if (add(s.path, 'deleted locally')) return out;
    } else if (s.kind === 'folder' ? l.kind !== 'folder' : l.kind !== 'file' || !localUnchanged(s, l)) {
      if (add(s.path, 'changed locally')) return out;
    }
  }
  for (const l of journal.localUnder(root.id, '')) {
    if (synced.has(l.path) || l.kind === 'symlink' || l.kind === 'other' || ignored(l.path, l.kind === 'folder')) continue;
    if (add(l.path, 'new locally')) return out;
  }
  const onBox = new Set<RelPath>();
  for (const walked of walkRemote(journal, root.remoteId, '', (p, e) => !isIgnored(p, e.kind === 'folder'))) {
    const { entry } = walked;
    // A web link lives here as NAME.url (its merge base is at that path).
    const path = entry.kind === 'weblink' ? asRelPath(walked.path + '.url') : walked.path;
    onBox.add(path);
    const s = journal.getSynced(root.id, path);
    if (s === undefined) {
      if (add(path, 'new on Box')) return out;
    } else if (s.remoteId !== entry.id || (entry.kind !== 'folder' && s.etag !== entry.etag)) {
      if (add(path, 'changed on Box')) return out;
    }
  }
  for (const p of synced) if (!onBox.has(p) && add(p, 'gone from Box')) return out;
  return out;
}
