/**
 * The remote rows a pass's snapshot already read, walked again without the journal (issue 29 point 4: each row
 * read once per window). A windowed first mirror read each remote row five times a window (the lookahead, the
 * snapshot, the pass's own prefetch announcement, the follow-up's snapshot, the second pass); the announcement of
 * the files below the folders a pass creates (reconciler.ts, prefetchFiles) now walks the snapshot's rows instead.
 *
 * Only for what a snapshot holds whole: the whole root of a full scope, or a path at or below a base of a hinted
 * scope (snapshot.ts walks each base's remote subtree, ignored entries left out). Elsewhere (a new folder that is
 * only an ancestor of the window, whose subtree the snapshot holds in part) the caller reads the journal.
 * A prefetch announcement is a guess (the downloads themselves are planned from the trees), so rows a few
 * milliseconds old cost nothing but bytes when they are wrong.
 */
import type { RelPath, RemoteEntry, RemoteId, SyncRoot, SyncedEntry } from '../core/model.js';
import { ancestorsOf } from '../core/paths.js';
import type { Journal } from '../ports/journal.js';
import type { RemoteChildren } from './remote-tree.js';

/** The snapshot's remote rows as children lists by parent id, in the journal's order (name, then id). */
export function snapshotChildren(remote: ReadonlyMap<RemoteId, RemoteEntry>): RemoteChildren {
  const byParent = new Map<RemoteId, RemoteEntry[]>();
  for (const e of remote.values()) {
    if (e.parentId === null) continue;
    let list = byParent.get(e.parentId);
    if (list === undefined) byParent.set(e.parentId, (list = []));
    list.push(e);
  }
  const order = (a: RemoteEntry, b: RemoteEntry): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  for (const list of byParent.values()) list.sort(order);
  return { remoteChildrenPaged: (id) => (byParent.get(id) ?? [])[Symbol.iterator]() };
}

/** Does a snapshot of this scope hold the whole remote subtree at `path` (see above)? */
export function holdsWhole(scope: { readonly kind: 'full' } | { readonly kind: 'hinted'; readonly localPaths: readonly RelPath[] }, path: RelPath): boolean {
  if (scope.kind === 'full') return true;
  const bases = new Set(scope.localPaths);
  return bases.has(path) || ancestorsOf(path).some((a) => bases.has(a));
}

/**
 * The base rows of those of `ids` that have one, by Box id: one statement a few hundred ids where the journal can
 * (Journal.syncedByRemoteIds), else one lookup an id. A window's snapshot and its lookahead ask this of every remote
 * row without a base row in sight; on a first mirror that was a lookup a file, each finding nothing.
 */
export function syncedByRemoteIds(journal: Pick<Journal, 'syncedByRemoteId' | 'syncedByRemoteIds'>, root: SyncRoot, ids: readonly RemoteId[]): ReadonlyMap<RemoteId, SyncedEntry> {
  if (ids.length === 0) return new Map();
  if (journal.syncedByRemoteIds !== undefined) return journal.syncedByRemoteIds(root.id, ids);
  const out = new Map<RemoteId, SyncedEntry>();
  for (const id of ids) {
    const s = journal.syncedByRemoteId(root.id, id);
    if (s !== undefined) out.set(id, s);
  }
  return out;
}
