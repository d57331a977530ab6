/**
 * Reading the journal's remote tree (keyed by Box id, linked by parentId) as paths under a sync root.
 * Paths are resolved on demand by walking parents, which is what makes a remote folder rename one row update.
 */
import type { RelPath, RemoteEntry, RemoteId, SyncRoot } from '../core/model.js';
import type { Journal } from '../ports/journal.js';
import { joinPath } from '../core/paths.js';
import { MAX_TREE_DEPTH } from '../core/path-limits.js';

/** Bound on parent walks, so a corrupt parent cycle cannot hang the engine: as deep as a mirror can go. */
const MAX_DEPTH = MAX_TREE_DEPTH;

/**
 * The path of a remote item under `root`: '' for the root folder itself, null when the item is unknown or
 * not below the root (moved out, or its parent chain is not in the journal).
 */
export function remotePathOf(journal: Journal, root: SyncRoot, id: RemoteId): RelPath | '' | null {
  if (id === root.remoteId) return '';
  const names: string[] = [];
  let cur = journal.getRemote(id);
  for (let depth = 0; cur && depth < MAX_DEPTH; depth++) {
    names.push(cur.name);
    if (cur.parentId === null) return null;
    if (cur.parentId === root.remoteId) {
      let path: RelPath | '' = '';
      for (let i = names.length - 1; i >= 0; i--) path = joinPath(path, names[i]!);
      return path;
    }
    cur = journal.getRemote(cur.parentId);
  }
  return null;
}

/** The root of `roots` that contains a remote item, with its path there. */
export function locateRemote(
  journal: Journal,
  roots: readonly SyncRoot[],
  id: RemoteId,
): { root: SyncRoot; path: RelPath | '' } | null {
  for (const root of roots) {
    const path = remotePathOf(journal, root, id);
    if (path !== null) return { root, path };
  }
  return null;
}

/**
 * Breadth-first walk of the remote rows below a folder, yielding each entry with its path. `include` decides
 * whether an entry (and, for a folder, its subtree) is visited: ignored ones are not.
 */
export function* walkRemote(
  journal: Journal,
  startId: RemoteId,
  startPath: RelPath | '',
  include: (path: RelPath, entry: RemoteEntry) => boolean,
): Generator<{ path: RelPath; entry: RemoteEntry }> {
  const queue: { id: RemoteId; path: RelPath | '' }[] = [{ id: startId, path: startPath }];
  // A corrupt parent cycle in the journal (never written by the observer, but the journal is a file on disk)
  // must not turn the walk into an endless one: each folder is walked once.
  const walked = new Set<RemoteId>([startId]);
  for (let head = 0; head < queue.length; head++) {
    const { id, path } = queue[head]!;
    for (const entry of journal.remoteChildren(id)) {
      if (entry.kind === 'folder' && walked.has(entry.id)) continue;
      const childPath = joinPath(path, entry.name);
      if (!include(childPath, entry)) continue;
      yield { path: childPath, entry };
      if (entry.kind === 'folder') {
        walked.add(entry.id);
        queue.push({ id: entry.id, path: childPath });
      }
    }
  }
}
