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
import PQueue from 'p-queue';
import { isSyncError, type SyncError } from '../core/errors.js';
import { escapeText } from '../core/escape.js';
import type { RelPath, RemoteEntry, RemoteId, RootId, SyncRoot } from '../core/model.js';
import { joinPath } from '../core/paths.js';
import type { Journal } from '../ports/journal.js';
import type { RemoteChanges, RemoteHint, StreamType } from '../ports/remote-changes.js';
import type { RejectedItem, RemoteStore } from '../ports/remote-store.js';
import { PARKED_MS } from './failures.js';
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
  /**
   * List in full when items refused by an earlier listing are parked (a process's first pass): a parked item
   * is retried after every restart, not only when an event names it.
   */
  readonly relistParked?: boolean;
  /** A hinted daemon pass: stop reading events at a short page (the daemon's long poll catches what follows). */
  readonly stopAtShortPage?: boolean;
}

export async function observeRemote(deps: RemoteObserverDeps, opts: ObserveRemoteOptions): Promise<RemoteObservation> {
  const cursor = deps.journal.getCursor(cursorName(deps.streamType));
  if (opts.full || cursor === undefined) return listEverything(deps, opts);
  if (opts.relistParked && hasListingProblems(deps.journal, deps.roots)) {
    deps.logger.info('items refused by an earlier listing are parked: listing again in full to retry them');
    return listEverything(deps, opts);
  }
  let batch;
  try {
    batch = await deps.changes.fetch(deps.streamType, cursor, { stopAtShortPage: opts.stopAtShortPage === true });
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
    const r = await listRoot(deps, root, opts.allowEmpty?.(root.id) === true, opts.signal);
    if (r.refusal) refusals.push(r.refusal);
  }
  return { full: false, touchedIds: touched, refusals };
}

async function listEverything(deps: RemoteObserverDeps, opts: ObserveRemoteOptions): Promise<RemoteObservation> {
  const position = await deps.changes.now(deps.streamType);
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

function hasListingProblems(journal: Journal, roots: readonly SyncRoot[]): boolean {
  return roots.some((r) => journal.failures(r.id).some((f) => f.code === REJECTED_CODE || f.code === INCOMPLETE_CODE));
}

function clearListingProblems(journal: Journal, roots: readonly SyncRoot[]): void {
  journal.transaction(() => {
    for (const root of roots) {
      for (const f of journal.failures(root.id)) if (f.code === REJECTED_CODE || f.code === INCOMPLETE_CODE) journal.clearFailure(root.id, f.path);
    }
  });
}

async function listRoot(
  deps: RemoteObserverDeps,
  root: SyncRoot,
  allowEmpty: boolean,
  signal?: AbortSignal,
): Promise<{ refusal: RootRefusal | null; complete: boolean }> {
  const entry = await deps.remote.getItem(root.remoteId, 'folder');
  const synced = deps.journal.countSynced(root.id);
  const hadContent = synced.files + synced.folders > 0 && !allowEmpty;
  if (!entry) {
    return {
      complete: false,
      refusal: {
        root: root.id,
        code: 'remote-root-missing',
        message: `the Box folder ${root.remoteId} of ${root.localPath} is gone or not visible; nothing was changed, check the folder and the account`,
      },
    };
  }
  // The root's own parent is not ours to follow (a root moved below one of its own folders would be a cycle).
  deps.journal.putRemote({ ...entry, parentId: null });
  const r = await listSubtree({ ...deps, nowMs: () => Date.now() }, root.remoteId, signal, { refuseEmpty: hadContent });
  const complete = r.problems.incomplete.length === 0;
  if (r.refused) {
    return {
      complete,
      refusal: {
        root: root.id,
        code: 'remote-root-empty',
        message: `the Box folder ${root.remoteId} of ${root.localPath} is suddenly empty while ${synced.files} files were in sync; refusing to delete them locally. Check Box; if it is meant to be empty, confirm this guard (boxsync daemon) and the mass-delete guard decides next`,
      },
    };
  }
  return { refusal: null, complete };
}

/** What a walk found wrong without stopping: items the adapter refused, cycles, and folders listed in part. */
export interface ListingProblems {
  readonly rejected: RejectedItem[];
  /** Folders whose listing could not be proven complete: nothing under them was taken as deleted. */
  readonly incomplete: { readonly folderId: RemoteId; readonly error: SyncError }[];
}

export interface SubtreeResult {
  /** The top folder listed empty while the journal knew children (`refuseEmpty`): nothing was changed. */
  readonly refused: boolean;
  readonly problems: ListingProblems;
}

type ListingDeps = Pick<RemoteObserverDeps, 'journal' | 'remote' | 'logger'> & {
  /** When given, problems are parked in the failures table under their root and path (recordListingProblems). */
  readonly roots?: readonly SyncRoot[];
  readonly nowMs?: () => number;
};

/**
 * List a folder and everything below it into the journal, dropping rows Box no longer has. With
 * `refuseEmpty`, a top folder that lists empty while the journal knows children is left untouched and the
 * result says `refused`. With `onlyNewFolders`, child folders already in the journal are not descended into
 * (a one-level refresh that still fills in folders it had never seen). The top folder is listed first; the
 * folders below it are then listed up to LIST_CONCURRENCY at a time (each folder's pages in order, each page
 * in its own transaction).
 *
 * One bad folder never stops the walk: a folder whose listing fails (incomplete, malformed, a server error
 * after its retries) keeps every row the journal had below it and is reported; a folder id met twice in one
 * walk (a cycle: a folder listing itself, an ancestor, or the root) is refused as an item and not descended
 * into. Only an abort or a fatal error (revoked token) stops the walk, and is thrown.
 */
export async function listSubtree(
  deps: ListingDeps,
  folderId: RemoteId,
  signal?: AbortSignal,
  opts: { refuseEmpty?: boolean; onlyNewFolders?: boolean } = {},
): Promise<SubtreeResult> {
  const problems: ListingProblems = { rejected: [], incomplete: [] };
  const visited = new Set<RemoteId>([folderId]);
  for (const r of deps.roots ?? []) visited.add(r.remoteId);
  const run = async (id: RemoteId, isTop: boolean): Promise<RemoteId[] | 'refused'> => {
    try {
      return await listOneFolder(deps, id, isTop, opts, visited, problems, signal);
    } catch (e) {
      if (signal?.aborted || !isSyncError(e) || e.disposition === 'fatal' || e.code === 'aborted') throw e;
      deps.logger.warn({ folderId: id, code: e.code }, `${e.message}; the rest of the tree is still synced`);
      problems.incomplete.push({ folderId: id, error: e });
      if (isTop && opts.refuseEmpty) return 'refused';
      return [];
    }
  };
  const top = await run(folderId, true);
  if (top === 'refused') {
    record(deps, problems);
    return { refused: problems.incomplete.length === 0, problems };
  }
  const queue = new PQueue({ concurrency: LIST_CONCURRENCY });
  let failure: { readonly error: unknown } | undefined;
  const enqueue = (ids: readonly RemoteId[]): void => {
    for (const id of ids) {
      void queue.add(async () => {
        if (failure !== undefined) return;
        try {
          const children = await run(id, false);
          if (children !== 'refused') enqueue(children);
        } catch (error) {
          failure ??= { error };
          queue.clear();
        }
      });
    }
  };
  enqueue(top);
  await queue.onIdle();
  if (failure !== undefined) throw failure.error;
  record(deps, problems);
  return { refused: false, problems };
}

function record(deps: ListingDeps, problems: ListingProblems): void {
  if (deps.roots && (problems.rejected.length > 0 || problems.incomplete.length > 0)) {
    recordListingProblems(deps.journal, deps.roots, problems, deps.nowMs?.() ?? Date.now());
  }
}

/** Folders listed at once below the top of a listing: Box answers each page in tens of milliseconds. */
export const LIST_CONCURRENCY = 4;

/** Failure codes written by the listing (cleared when the folder lists cleanly again). */
export const REJECTED_CODE = 'remote_item_invalid';
export const INCOMPLETE_CODE = 'listing_incomplete';

/** The path key under which a refused item is parked: its escaped name (never a path), or its Box id. */
function rejectedKey(parentPath: RelPath | '', r: RejectedItem): RelPath {
  const shown = r.name !== null && r.name !== '' ? r.name.replace(/\//g, '\\x2f') : `(Box id ${r.id ?? 'unknown'})`;
  return joinPath(parentPath, shown === '.' || shown === '..' ? `\\x2e${shown.slice(1)}` : shown);
}

/**
 * Park what a listing refused, so that status and `sync --once` show it on every run until it changes: a
 * refused item as 'skip' (it cannot be synced as Box sent it), a folder listed in part as 'retry'.
 */
export function recordListingProblems(journal: Journal, roots: readonly SyncRoot[], problems: ListingProblems, nowMs: number): void {
  journal.transaction(() => {
    for (const r of problems.rejected) {
      const at = locateRemote(journal, roots, r.parentId);
      if (!at) continue;
      const what = `${r.kind ?? 'item'}${r.id === null ? '' : ` (Box id ${r.id})`}`;
      const message = `Box sent a ${what} that cannot be synced: ${r.endpoint} field \`${r.field}\`: ${r.reason}; skipped until it changes on Box, the rest syncs`;
      journal.recordFailure({ root: at.root.id, path: rejectedKey(at.path, r), code: REJECTED_CODE, message, attempts: 1, nextRetryAtMs: nowMs + PARKED_MS, disposition: 'skip' });
    }
    for (const f of problems.incomplete) {
      const at = locateRemote(journal, roots, f.folderId);
      if (!at) continue;
      const prev = journal.getFailure(at.root.id, at.path as RelPath);
      journal.recordFailure({
        root: at.root.id,
        path: at.path as RelPath,
        code: f.error.code === 'listing_incomplete' ? INCOMPLETE_CODE : f.error.code,
        message: f.error.message,
        attempts: (prev?.attempts ?? 0) + 1,
        nextRetryAtMs: nowMs + 30_000,
        disposition: 'retry',
      });
    }
  });
}

/** One folder: its pages into the journal, its vanished children out. Returns the child folders to list next. */
async function listOneFolder(
  deps: Pick<RemoteObserverDeps, 'journal' | 'remote'>,
  id: RemoteId,
  isTop: boolean,
  opts: { refuseEmpty?: boolean; onlyNewFolders?: boolean },
  visited: Set<RemoteId>,
  problems: ListingProblems,
  signal?: AbortSignal,
): Promise<RemoteId[] | 'refused'> {
  const { journal, remote } = deps;
  signal?.throwIfAborted();
  const before = new Set(journal.remoteChildren(id).map((e) => e.id));
  const seen = new Set<RemoteId>();
  const next: RemoteId[] = [];
  try {
    for await (const { entries, rejected } of remote.listFolder(id, signal)) {
      const page: RemoteEntry[] = [];
      for (const r of rejected) {
        problems.rejected.push(r);
        // A refused item keeps whatever the journal knew of it: refusing it must never read as a delete.
        if (r.id !== null) seen.add(r.id);
      }
      for (const child of entries) {
        if (child.kind === 'folder' && visited.has(child.id)) {
          problems.rejected.push({
            id: child.id, name: escapeText(child.name), kind: 'folder', parentId: id, endpoint: `GET /folders/${id}/items`, field: 'id',
            reason: `folder ${child.id} appears a second time in the tree (a cycle); it is not descended into again`,
          });
          seen.add(child.id);
          continue;
        }
        if (child.kind === 'folder') visited.add(child.id);
        page.push(child);
      }
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
    // The children already listed are true, and their folders are still walked; the rest stays as it was.
    if (isSyncError(e) && e.code === 'listing_incomplete') {
      problems.incomplete.push({ folderId: id, error: e });
      return next;
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
    const prev = byId.get(h.id);
    // The last event of an item decides whether it went to the trash (a restore after a trash is not trashed).
    byId.set(h.id, { id: h.id, kind: h.kind, trashedHint: h.change === 'trashed' || (prev?.trashedHint === true && h.change !== 'restored') });
  }
  for (const id of extraIds) if (!byId.has(id)) byId.set(id, { id, kind: journal.getRemote(id)?.kind ?? null, trashedHint: false });
  return [...byId.values()];
}

async function fetchItem(remote: RemoteStore, w: Wanted): Promise<RemoteEntry | null> {
  if (w.kind !== null) return remote.getItem(w.id, w.kind);
  return (await remote.getItem(w.id, 'file')) ?? (await remote.getItem(w.id, 'folder'));
}

/** True when storing `e` would make it its own ancestor (Box moving a folder into its own subtree, or a root below itself). */
function makesCycle(journal: Journal, e: RemoteEntry, pending: ReadonlyMap<RemoteId, RemoteEntry>, rootIds: ReadonlySet<RemoteId>): boolean {
  let cur = e.parentId;
  for (let depth = 0; cur !== null && depth < 1000; depth++) {
    if (cur === e.id) return true;
    if (rootIds.has(cur)) return false;
    cur = (pending.get(cur) ?? journal.getRemote(cur))?.parentId ?? null;
  }
  return cur !== null;
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
  const problems: ListingProblems = { rejected: [], incomplete: [] };
  // A few at a time, in hint order: a burst of events costs round trips in parallel rather than in turn. An item
  // Box answers for with a malformed body is parked, and the others go on.
  const pool = new PQueue({ concurrency: LIST_CONCURRENCY });
  const results = await Promise.all(
    wanted.map((w) =>
      pool.add(async (): Promise<{ w: Wanted; entry: RemoteEntry | null } | null> => {
        signal?.throwIfAborted();
        try {
          return { w, entry: await fetchItem(deps.remote, w) };
        } catch (e) {
          if (!isSyncError(e) || e.code !== 'malformed_response') throw e;
          const known = journal.getRemote(w.id);
          deps.logger.warn({ id: w.id, code: e.code }, `${e.message}; this item is skipped until it changes, the rest syncs`);
          if (known?.parentId) {
            problems.rejected.push({ id: w.id, name: escapeText(known.name), kind: known.kind, parentId: known.parentId, endpoint: String(e.details.endpoint ?? 'GET item'), field: String(e.details.field ?? '(body)'), reason: e.message });
          }
          return null;
        }
      }),
    ),
  );
  for (const r of results) if (r) fetched.push(r);
  const rootIds = new Set<RemoteId>(roots.map((r) => r.remoteId));
  // A root is stored without its parent: where Box keeps the root folder is not part of the mirror.
  const present = fetched.flatMap((f) => (f.entry ? [rootIds.has(f.entry.id) ? { ...f.entry, parentId: null } : f.entry] : []));
  const pending = new Map(present.map((e) => [e.id, e] as const));
  for (const e of [...present]) {
    if (e.kind === 'folder' && makesCycle(journal, e, pending, rootIds)) {
      problems.rejected.push({ id: e.id, name: escapeText(e.name), kind: e.kind, parentId: journal.getRemote(e.id)?.parentId ?? e.parentId!, endpoint: `GET /folders/${e.id}`, field: 'parent.id', reason: `Box places folder ${e.id} inside its own subtree (a cycle); its last good place is kept` });
      pending.delete(e.id);
    }
  }
  const cyclic = new Set(present.filter((e) => !pending.has(e.id)).map((e) => e.id));
  const kept = present.filter((e) => pending.has(e.id));
  const presentIds = new Set(kept.map((e) => e.id));
  // A folder is inside our roots when its parent is a root, is already known, or is itself a hinted folder that is.
  const inside = new Set<RemoteId>();
  for (let changed = true; changed; ) {
    changed = false;
    for (const e of kept) {
      if (inside.has(e.id) || e.parentId === null) continue;
      if (rootIds.has(e.id) || rootIds.has(e.parentId) || inside.has(e.parentId) || (!presentIds.has(e.parentId) && journal.getRemote(e.parentId) !== undefined)) {
        inside.add(e.id);
        changed = true;
      }
    }
  }
  for (const e of kept) if (rootIds.has(e.id)) inside.add(e.id);
  // Folders new to the journal (created, moved in from outside, restored) are listed before the cursor moves.
  for (const e of kept) {
    if (e.kind === 'folder' && inside.has(e.id) && !rootIds.has(e.id) && journal.getRemote(e.id) === undefined) {
      const r = await listSubtree({ journal, remote: deps.remote, logger: deps.logger }, e.id, signal);
      problems.rejected.push(...r.problems.rejected);
      problems.incomplete.push(...r.problems.incomplete);
    }
  }
  journal.transaction(() => {
    for (const { w, entry } of fetched) {
      if (entry && cyclic.has(entry.id)) continue;
      const stored = entry ? pending.get(entry.id) ?? entry : null;
      if (stored && inside.has(stored.id)) {
        journal.putRemote(stored);
        journal.markTrashed(stored.id, false);
      } else if (journal.getRemote(w.id) !== undefined || w.trashedHint) {
        journal.deleteRemoteSubtree(w.id);
        journal.deleteRemote(w.id);
        if (!entry && w.trashedHint) journal.markTrashed(w.id, true);
      }
    }
    // A folder listed in part keeps the old cursor: the events replay, and the listing is tried again.
    if (problems.incomplete.length === 0) journal.setCursor(cursorName(deps.streamType), nextPosition);
  });
  clearParkedFailures(journal, roots, fetched.map((f) => f.w.id));
  recordListingProblems(journal, roots, problems, Date.now());
  return fetched.map((f) => f.w.id);
}

/** A changed item gets a fresh chance: parked ('skip') failures at its old or new path are cleared. */
function clearParkedFailures(journal: Journal, roots: readonly SyncRoot[], ids: readonly RemoteId[]): void {
  const named = new Set(ids.map((id) => `(Box id ${id})`));
  for (const root of roots) {
    for (const f of journal.failures(root.id)) {
      if (f.code === REJECTED_CODE && [...named].some((n) => f.message.includes(n))) journal.clearFailure(root.id, f.path);
    }
  }
  for (const id of ids) {
    const at = locateRemote(journal, roots, id);
    if (at && at.path !== '' && journal.getFailure(at.root.id, at.path)?.disposition === 'skip') journal.clearFailure(at.root.id, at.path);
    for (const root of roots) {
      const s = journal.syncedByRemoteId(root.id, id);
      if (s && journal.getFailure(root.id, s.path)?.disposition === 'skip') journal.clearFailure(root.id, s.path);
    }
  }
}
