/**
 * Reading the journal's remote tree (keyed by Box id, linked by parentId) as paths under a sync root.
 * Paths are resolved on demand by walking parents, which is what makes a remote folder rename one row update.
 */
import type { RelPath, RemoteEntry, RemoteId, SyncRoot } from '../core/model.js';
import type { Journal } from '../ports/journal.js';
import type { PrefetchFile } from '../ports/remote-store.js';
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

/** Where a walk reads a folder's children: the journal, or rows already read (engine/snapshot-rows.ts). */
export type RemoteChildren = Pick<Journal, 'remoteChildrenPaged'>;

/**
 * Breadth-first walk of the remote rows below a folder, yielding each entry with its path. `include` decides
 * whether an entry (and, for a folder, its subtree) is visited: ignored ones are not.
 */
export function* walkRemote(
  journal: RemoteChildren,
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
    // In pages: the idle check walks in slices (engine/out-of-sync.ts), and one folder of 100,000 items read in one
    // statement held the event loop for 0.7-1.1 s on a loaded machine.
    for (const entry of journal.remoteChildrenPaged(id)) {
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

/** The remote row at a path under a root, by names from the root down (undefined when Box holds nothing there). */
export function remoteAtPath(journal: Journal, root: SyncRoot, path: RelPath): RemoteEntry | undefined {
  let cur: RemoteEntry | undefined = journal.getRemote(root.remoteId);
  for (const name of path.split('/')) {
    if (!cur) return undefined;
    cur = journal.remoteChildNamed(cur.id, name);
  }
  return cur;
}

/** A file's download announcement (RemoteStore.prefetch). */
export function prefetchFileOf(entry: RemoteEntry): PrefetchFile {
  return { id: entry.id, name: entry.name, sha1: entry.sha1, sizeBytes: entry.sizeBytes };
}

/**
 * The files below a remote folder that `keep` takes, as download announcements (RemoteStore.prefetch), and how many
 * rows were walked. Ignored entries are left out, with their subtrees. Bounded: at most `maxRows` rows walked and
 * `maxFiles` files taken, and each folder is walked once (walkRemote), so a corrupt parent cycle in the journal
 * ends too.
 */
export function remoteFilesBelow(
  journal: RemoteChildren,
  folder: { readonly id: RemoteId; readonly path: RelPath },
  isIgnored: (path: RelPath, isFolder: boolean) => boolean,
  limits: { readonly maxRows: number; readonly maxFiles: number },
  keep: (entry: RemoteEntry) => boolean = () => true,
): { files: PrefetchFile[]; rows: number } {
  const files: PrefetchFile[] = [];
  let rows = 0;
  for (const { entry } of walkRemote(journal, folder.id, folder.path, (p, e) => !isIgnored(p, e.kind === 'folder'))) {
    if (rows >= limits.maxRows || files.length >= limits.maxFiles) break;
    rows += 1;
    if (entry.kind === 'file' && keep(entry)) files.push(prefetchFileOf(entry));
  }
  return { files, rows };
}
