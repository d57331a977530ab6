/**
 * Remote observation: turns Box into rows of the journal's remote tree.
 *
 * Full listing (first run, `fullRescan`, or a stream position Box no longer accepts): take `now` on the event
 * stream FIRST, then list every root breadth-first, committing each page in its own transaction (memory stays
 * bounded by one page plus the folder queue), and only when every root is listed store the position as the
 * cursor. Changes made during the listing therefore replay on the next run instead of being lost.
 *
 * Incremental: fetch the events since the cursor. They are hints: each hinted item is re-fetched, folders new
 * to us (created, moved in, restored) are listed, vanished items are dropped (and remembered as trashed when
 * the event said so), and the new cursor is saved in the same transaction as those observations.
 */
import { isSyncError } from '../core/errors.js';
import type { RemoteEntry, RemoteId, RootId, SyncRoot } from '../core/model.js';
import type { Journal } from '../ports/journal.js';
import type { RemoteChanges, RemoteHint, StreamType } from '../ports/remote-changes.js';
import type { RemoteStore } from '../ports/remote-store.js';
import type { Logger } from 'pino';
import { locateRemote } from './remote-tree.js';

export interface RemoteObserverDeps {
  readonly journal: Journal;
  readonly remote: RemoteStore;
  readonly changes: RemoteChanges;
  readonly roots: readonly SyncRoot[];
  readonly streamType: StreamType;
  readonly logger: Logger;
}

/** A root the observer refuses to sync this run (SYNC-LESSONS #1), with the reason. */
export interface RootRefusal {
  readonly root: RootId;
  readonly code: 'remote-root-missing' | 'remote-root-empty';
  readonly message: string;
}

export interface RemoteObservation {
  /** True when every root was listed in full (the planner gets whole roots). */
  readonly full: boolean;
  /** Ids re-fetched from hints (incremental runs): the planner scope of a hinted pass. */
  readonly touchedIds: readonly RemoteId[];
  readonly refusals: readonly RootRefusal[];
}

const cursorName = (stream: StreamType): string => `events:${stream}`;

export interface ObserveRemoteOptions {
  readonly full: boolean;
  readonly extraIds: readonly RemoteId[];
  /** The user confirmed that this root's Box folder really is empty now (a released guard). */
  readonly allowEmpty?: (root: RootId) => boolean;
  readonly signal?: AbortSignal;
}

export async function observeRemote(deps: RemoteObserverDeps, opts: ObserveRemoteOptions): Promise<RemoteObservation> {
  const cursor = deps.journal.getCursor(cursorName(deps.streamType));
  if (opts.full || cursor === undefined) return listEverything(deps, opts);
  let batch;
  try {
    batch = await deps.changes.fetch(deps.streamType, cursor);
  } catch (e) {
    if (isSyncError(e) && e.code === 'stream_position_invalid') {
      deps.logger.warn({ stream: deps.streamType }, 'stored event position is too old; listing everything again');
      return listEverything(deps, opts);
    }
    throw e;
  }
  const touched = await applyHints(deps, batch.hints, opts.extraIds, batch.nextPosition, opts.signal);
  // A root new to the journal (added to the configuration since the cursor was stored) has content older than
  // the cursor, which no event will ever replay: list it in full.
  const refusals: RootRefusal[] = [];
  for (const root of deps.roots) {
    if (deps.journal.getRemote(root.remoteId) !== undefined) continue;
    deps.logger.info({ root: root.id, folderId: root.remoteId }, 'new root: listing its Box folder in full');
    const refusal = await listRoot(deps, root, opts.allowEmpty?.(root.id) === true, opts.signal);
    if (refusal) refusals.push(refusal);
  }
  return { full: false, touchedIds: touched, refusals };
}

async function listEverything(deps: RemoteObserverDeps, opts: ObserveRemoteOptions): Promise<RemoteObservation> {
  const position = await deps.changes.now(deps.streamType);
  const refusals: RootRefusal[] = [];
  for (const root of deps.roots) {
    const refusal = await listRoot(deps, root, opts.allowEmpty?.(root.id) === true, opts.signal);
    if (refusal) refusals.push(refusal);
  }
  deps.journal.setCursor(cursorName(deps.streamType), position);
  return { full: true, touchedIds: [], refusals };
}

async function listRoot(deps: RemoteObserverDeps, root: SyncRoot, allowEmpty: boolean, signal?: AbortSignal): Promise<RootRefusal | null> {
  const entry = await deps.remote.getItem(root.remoteId, 'folder');
  const synced = deps.journal.countSynced(root.id);
  const hadContent = synced.files + synced.folders > 0 && !allowEmpty;
  if (!entry) {
    return {
      root: root.id,
      code: 'remote-root-missing',
      message: `the Box folder ${root.remoteId} of ${root.localPath} is gone or not visible; nothing was changed, check the folder and the account`,
    };
  }
  deps.journal.putRemote(entry);
  const emptyRoot = await listSubtree(deps, root.remoteId, signal, { refuseEmpty: hadContent });
  if (emptyRoot) {
    return {
      root: root.id,
      code: 'remote-root-empty',
      message: `the Box folder ${root.remoteId} of ${root.localPath} is suddenly empty while ${synced.files} files were in sync; refusing to delete them locally. Check Box; if it is meant to be empty, confirm this guard (boxsync daemon) and the mass-delete guard decides next`,
    };
  }
  return null;
}

/**
 * List a folder and everything below it into the journal, dropping rows Box no longer has. With
 * `refuseEmpty`, a top folder that lists empty while the journal knows children is left untouched and the
 * function returns true. With `onlyNewFolders`, child folders already in the journal are not descended into
 * (a one-level refresh that still fills in folders it had never seen). The top folder is listed first; the
 * folders below it are then listed up to LIST_CONCURRENCY at a time (each folder's pages in order, each page
 * in its own transaction). The first error stops new listings, lets the ones in flight end, and is thrown.
 */
export async function listSubtree(
  deps: Pick<RemoteObserverDeps, 'journal' | 'remote' | 'logger'>,
  folderId: RemoteId,
  signal?: AbortSignal,
  opts: { refuseEmpty?: boolean; onlyNewFolders?: boolean } = {},
): Promise<boolean> {
  const queue: RemoteId[] = [];
  const top = await listOneFolder(deps, folderId, true, opts, signal);
  if (top === 'refused') return true;
  for (const c of top) queue.push(c);
  const running = new Set<Promise<void>>();
  let failure: { readonly error: unknown } | undefined;
  let head = 0;
  while ((failure === undefined && head < queue.length) || running.size > 0) {
    while (failure === undefined && head < queue.length && running.size < LIST_CONCURRENCY) {
      const id = queue[head]!;
      // Listed ids are let go as the queue advances: it holds only the folders still to list.
      if (++head >= 1024) {
        queue.splice(0, head);
        head = 0;
      }
      const task: Promise<void> = listOneFolder(deps, id, false, opts, signal)
        .then(
          (children) => {
            if (children !== 'refused') for (const c of children) queue.push(c);
          },
          (error: unknown) => {
            failure ??= { error };
          },
        )
        .finally(() => running.delete(task));
      running.add(task);
    }
    if (running.size > 0) await Promise.race(running);
  }
  if (failure !== undefined) throw failure.error;
  return false;
}

/** Folders listed at once below the top of a listing: Box answers each page in tens of milliseconds. */
export const LIST_CONCURRENCY = 4;

/** One folder: its pages into the journal, its vanished children out. Returns the child folders to list next. */
async function listOneFolder(
  deps: Pick<RemoteObserverDeps, 'journal' | 'remote'>,
  id: RemoteId,
  isTop: boolean,
  opts: { refuseEmpty?: boolean; onlyNewFolders?: boolean },
  signal?: AbortSignal,
): Promise<RemoteId[] | 'refused'> {
  const { journal, remote } = deps;
  signal?.throwIfAborted();
  const before = new Set(journal.remoteChildren(id).map((e) => e.id));
  const seen = new Set<RemoteId>();
  const next: RemoteId[] = [];
  try {
    for await (const { entries: page } of remote.listFolder(id)) {
      const known = new Set(page.filter((c) => journal.getRemote(c.id) !== undefined).map((c) => c.id));
      journal.transaction(() => {
        for (const child of page) {
          journal.putRemote(child);
          journal.markTrashed(child.id, false);
          seen.add(child.id);
        }
      });
      for (const child of page) if (child.kind === 'folder' && !(opts.onlyNewFolders && known.has(child.id))) next.push(child.id);
    }
  } catch (e) {
    if (isSyncError(e) && e.code === 'not_found' && !isTop) {
      journal.transaction(() => {
        journal.deleteRemoteSubtree(id);
        journal.deleteRemote(id);
      });
      return [];
    }
    throw e;
  }
  if (isTop && opts.refuseEmpty && seen.size === 0 && before.size > 0) return 'refused';
  const stale = [...before].filter((x) => !seen.has(x));
  if (stale.length > 0) {
    journal.transaction(() => {
      for (const x of stale) {
        journal.deleteRemoteSubtree(x);
        journal.deleteRemote(x);
      }
    });
  }
  return next;
}

/** One item to re-fetch: the hint (when it came from the stream) or a bare id (daemon hints). */
interface Wanted {
  readonly id: RemoteId;
  readonly kind: 'file' | 'folder' | 'weblink' | null;
  readonly trashedHint: boolean;
}

function wantedFrom(journal: Journal, roots: readonly SyncRoot[], hints: readonly RemoteHint[], extraIds: readonly RemoteId[]): Wanted[] {
  const rootIds = new Set<RemoteId>(roots.map((r) => r.remoteId));
  const byId = new Map<RemoteId, Wanted>();
  for (const h of hints) {
    // Worth a fetch only when it is (or was) ours: known, a root, or named as a child of a folder we know. The
    // `changes` stream covers the whole account; everything else is someone else's business.
    const relevant =
      journal.getRemote(h.id) !== undefined ||
      rootIds.has(h.id) ||
      (h.parentId !== null && (rootIds.has(h.parentId) || journal.getRemote(h.parentId) !== undefined));
    if (!relevant) continue;
    const trashedHint = h.status === 'trashed' || h.status === 'deleted' || /TRASH|DELETE/.test(h.eventType);
    const prev = byId.get(h.id);
    // The last event of an item decides whether it went to the trash (a restore after a trash is not trashed).
    byId.set(h.id, { id: h.id, kind: h.kind, trashedHint: trashedHint || (prev?.trashedHint === true && !/UNDELETE|RESTORE/.test(h.eventType)) });
  }
  for (const id of extraIds) if (!byId.has(id)) byId.set(id, { id, kind: journal.getRemote(id)?.kind ?? null, trashedHint: false });
  return [...byId.values()];
}

async function fetchItem(remote: RemoteStore, w: Wanted): Promise<RemoteEntry | null> {
  if (w.kind !== null) return remote.getItem(w.id, w.kind);
  return (await remote.getItem(w.id, 'file')) ?? (await remote.getItem(w.id, 'folder'));
}

async function applyHints(
  deps: RemoteObserverDeps,
  hints: readonly RemoteHint[],
  extraIds: readonly RemoteId[],
  nextPosition: string,
  signal?: AbortSignal,
): Promise<RemoteId[]> {
  const { journal, roots } = deps;
  const wanted = wantedFrom(journal, roots, hints, extraIds);
  const fetched: { w: Wanted; entry: RemoteEntry | null }[] = [];
  // A few at a time, in hint order: a burst of events costs round trips in parallel rather than in turn.
  for (let i = 0; i < wanted.length; i += LIST_CONCURRENCY) {
    signal?.throwIfAborted();
    const chunk = wanted.slice(i, i + LIST_CONCURRENCY);
    const entries = await Promise.all(chunk.map((w) => fetchItem(deps.remote, w)));
    chunk.forEach((w, k) => fetched.push({ w, entry: entries[k] ?? null }));
  }
  const rootIds = new Set<RemoteId>(roots.map((r) => r.remoteId));
  const present = fetched.flatMap((f) => (f.entry ? [f.entry] : []));
  const presentIds = new Set(present.map((e) => e.id));
  // A folder is inside our roots when its parent is a root, is already known, or is itself a hinted folder that is.
  const inside = new Set<RemoteId>();
  for (let changed = true; changed; ) {
    changed = false;
    for (const e of present) {
      if (inside.has(e.id) || e.parentId === null) continue;
      if (rootIds.has(e.id) || rootIds.has(e.parentId) || inside.has(e.parentId) || (!presentIds.has(e.parentId) && journal.getRemote(e.parentId) !== undefined)) {
        inside.add(e.id);
        changed = true;
      }
    }
  }
  for (const e of present) if (rootIds.has(e.id)) inside.add(e.id);
  // Folders new to the journal (created, moved in from outside, restored) are listed before the cursor moves.
  for (const e of present) {
    if (e.kind === 'folder' && inside.has(e.id) && !rootIds.has(e.id) && journal.getRemote(e.id) === undefined) {
      await listSubtree(deps, e.id, signal);
    }
  }
  journal.transaction(() => {
    for (const { w, entry } of fetched) {
      if (entry && inside.has(entry.id)) {
        journal.putRemote(entry);
        journal.markTrashed(entry.id, false);
      } else if (journal.getRemote(w.id) !== undefined || w.trashedHint) {
        journal.deleteRemoteSubtree(w.id);
        journal.deleteRemote(w.id);
        if (!entry && w.trashedHint) journal.markTrashed(w.id, true);
      }
    }
    journal.setCursor(cursorName(deps.streamType), nextPosition);
  });
  clearParkedFailures(journal, roots, fetched.map((f) => f.w.id));
  return fetched.map((f) => f.w.id);
}

/** A changed item gets a fresh chance: parked ('skip') failures at its old or new path are cleared. */
function clearParkedFailures(journal: Journal, roots: readonly SyncRoot[], ids: readonly RemoteId[]): void {
  for (const id of ids) {
    const at = locateRemote(journal, roots, id);
    if (at && at.path !== '' && journal.getFailure(at.root.id, at.path)?.disposition === 'skip') journal.clearFailure(at.root.id, at.path);
    for (const root of roots) {
      const s = journal.syncedByRemoteId(root.id, id);
      if (s && journal.getFailure(root.id, s.path)?.disposition === 'skip') journal.clearFailure(root.id, s.path);
    }
  }
}
