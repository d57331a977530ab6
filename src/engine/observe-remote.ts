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
 *
 * This file holds the cursor policy and the root guards; the walk is in remote-listing.ts, the hints in
 * remote-hints.ts.
 */
import type { RemoteId, RootId, SyncRoot } from '../core/model.js';
import { isSyncError } from '../core/errors.js';
import { escapeText } from '../core/escape.js';
import { applyHints, cursorName } from './remote-hints.js';
import type { RemoteObserverDeps } from './remote-observer-deps.js';
import type { StreamType } from '../ports/remote-changes.js';
import { clearListingProblems, hasListingProblems, listSubtree } from './remote-listing.js';

export type { RemoteObserverDeps } from './remote-observer-deps.js';
export { LIST_CONCURRENCY, listSubtree, type ListingProblems, type SubtreeResult } from './remote-listing.js';

/** A root the observer refuses to sync this run (a safety guard: guard-id.ts), with the reason. */
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


export interface ObserveRemoteOptions {
  readonly full: boolean;
  readonly extraIds: readonly RemoteId[];
  /** The user confirmed that this root's Box folder really is empty now (a released guard). */
  readonly allowEmpty?: (root: RootId) => boolean;
  readonly signal?: AbortSignal;
  /**
   * List in full when items refused by an earlier listing are parked (a process's first pass): a parked item
   * is retried after every restart, not only when an event names it.
   */
  readonly relistParked?: boolean;
  /** A hinted daemon pass: stop reading events at a short page (the daemon's long poll catches what follows). */
  readonly stopAtShortPage?: boolean;
  /**
   * A full listing with no cursor stored yet stores this earlier position (the daemon's, taken before its first
   * pass) instead of its own: the events between the two are read by the next incremental observation.
   */
  readonly since?: string;
}

/**
 * Streams whose events hold every change a sync needs, so that another stream can start where their cursor is:
 * 'changes' and 'all'. Not 'sync': it covers only folders marked synced while it ran.
 */
const CATCH_UP_STREAMS: readonly StreamType[] = ['changes', 'all'];

/**
 * No cursor of the stream in use, but one of a stream that holds every change (CATCH_UP_STREAMS): the daemon
 * (stream 'sync' by default) started on a mirror `sync --once` (stream 'changes') made or kept. The journal is
 * current up to that cursor, so the pass catches up from it instead of listing every folder again (at a million
 * files, 100,000 listings and a whole plan: 1,038 s).
 */
function catchUpCursor(deps: RemoteObserverDeps): { readonly stream: StreamType; readonly cursor: string } | null {
  for (const stream of CATCH_UP_STREAMS) {
    if (stream === deps.streamType) continue;
    const cursor = deps.journal.getCursor(cursorName(stream));
    if (cursor !== undefined) return { stream, cursor };
  }
  return null;
}

export async function observeRemote(deps: RemoteObserverDeps, opts: ObserveRemoteOptions): Promise<RemoteObservation> {
  const own = deps.journal.getCursor(cursorName(deps.streamType));
  const other = own === undefined && !opts.full ? catchUpCursor(deps) : null;
  const cursor = own ?? other?.cursor;
  if (opts.full || cursor === undefined) return listEverything(deps, opts);
  if (opts.relistParked && hasListingProblems(deps.journal, deps.roots)) {
    deps.logger.info('items refused by an earlier listing are parked: listing again in full to retry them');
    return listEverything(deps, opts);
  }
  // Reading the other stream: the position of the stream in use is taken first (the daemon's, from before its first
  // pass), and becomes its cursor once the other stream is read to its end, so that nothing between the two is lost.
  const ownStart = other === null ? null : (opts.since ?? (await deps.changes.now(deps.streamType)));
  const read = other === null ? deps : { ...deps, streamType: other.stream };
  let batch;
  try {
    batch = await deps.changes.fetch(read.streamType, cursor, { stopAtShortPage: other === null && opts.stopAtShortPage === true });
  } catch (e) {
    if (isSyncError(e) && e.code === 'stream_position_invalid') {
      deps.logger.warn({ stream: read.streamType }, 'stored event position is too old; listing everything again');
      return listEverything(deps, opts);
    }
    throw e;
  }
  const touched = await applyHints(read, batch.hints, opts.extraIds, batch.nextPosition, opts.signal);
  // The other stream's cursor moved only when every hinted item was observed: else the next pass reads it again.
  if (other !== null && ownStart !== null && deps.journal.getCursor(cursorName(other.stream)) === batch.nextPosition) {
    deps.journal.setCursor(cursorName(deps.streamType), ownStart);
    deps.logger.info({ stream: deps.streamType, from: other.stream }, `caught up from the stored '${other.stream}' event position; no full listing`);
  }
  // A root new to the journal (added to the configuration since the cursor was stored) has content older than
  // the cursor, which no event will ever replay: list it in full.
  const refusals: RootRefusal[] = [];
  for (const root of deps.roots) {
    if (deps.journal.getRemote(root.remoteId) !== undefined) continue;
    deps.logger.info({ root: root.id, folderId: root.remoteId }, 'new root: listing its Box folder in full');
    const r = await listRoot(deps, root, opts.allowEmpty?.(root.id) === true, opts.signal);
    if (r.refusal) refusals.push(r.refusal);
  }
  return { full: false, touchedIds: touched, refusals };
}

async function listEverything(deps: RemoteObserverDeps, opts: ObserveRemoteOptions): Promise<RemoteObservation> {
  const stored = deps.journal.getCursor(cursorName(deps.streamType)) !== undefined;
  const position = opts.since !== undefined && !stored ? opts.since : await deps.changes.now(deps.streamType);
  const refusals: RootRefusal[] = [];
  // Problems found by an earlier listing are found again (or not) by this one.
  clearListingProblems(deps.journal, deps.roots);
  let complete = true;
  for (const root of deps.roots) {
    const r = await listRoot(deps, root, opts.allowEmpty?.(root.id) === true, opts.signal);
    if (r.refusal) refusals.push(r.refusal);
    if (!r.complete) complete = false;
  }
  // A listing that was not complete does not move the cursor: what it could not see must not be skipped by the
  // next incremental pass (the old cursor, or none, makes the next pass look again).
  if (complete) deps.journal.setCursor(cursorName(deps.streamType), position);
  else deps.logger.warn('part of the Box tree could not be listed; the next pass lists again, and nothing unseen was taken as deleted');
  return { full: true, touchedIds: [], refusals };
}

async function listRoot(
  deps: RemoteObserverDeps,
  root: SyncRoot,
  allowEmpty: boolean,
  signal?: AbortSignal,
): Promise<{ refusal: RootRefusal | null; complete: boolean }> {
  const entry = await deps.remote.getItem(root.remoteId, 'folder');
  // Whether any row is synced: a bounded count (the whole aggregate took 130 ms at a million rows).
  const hadContent = deps.journal.countSyncedUnder(root.id, '', 1) > 0 && !allowEmpty;
  if (!entry) {
    return {
      complete: false,
      refusal: {
        root: root.id,
        code: 'remote-root-missing',
        message: `the Box folder ${root.remoteId} of ${escapeText(root.localPath)} is gone or not visible; nothing was changed, check the folder and the account`,
      },
    };
  }
  // The root's own parent is not ours to follow (a root moved below one of its own folders would be a cycle).
  deps.journal.putRemote({ ...entry, parentId: null });
  const r = await listSubtree({ ...deps, nowMs: () => Date.now() }, root.remoteId, signal, { refuseEmpty: hadContent });
  const complete = r.problems.incomplete.length === 0;
  if (r.refused) {
    // Counted only for the message: a refusal is rare.
    const synced = deps.journal.countSynced(root.id);
    return {
      complete,
      refusal: {
        root: root.id,
        code: 'remote-root-empty',
        message: `the Box folder ${root.remoteId} of ${escapeText(root.localPath)} is suddenly empty while ${synced.files} files were in sync; refusing to delete them locally. Check Box; if it is meant to be empty, confirm this guard (boxsync daemon) and the mass-delete guard decides next`,
      },
    };
  }
  return { refusal: null, complete };
}
