/**
 * Incremental remote observation: the events since the cursor are hints. Each hinted item is re-fetched (a
 * malformed answer parks that item, the others go on), folders new to us are listed, vanished items are
 * dropped (and remembered as trashed when the event said so), a folder Box places in its own subtree is
 * refused, and the new cursor is saved in the same transaction as those observations (unless a listing was
 * incomplete: then the events replay).
 */
import PQueue from 'p-queue';
import { isSyncError } from '../core/errors.js';
import { compareSequence } from '../core/sequence.js';
import { escapeText } from '../core/escape.js';
import type { RelPath, RemoteEntry, RemoteId, SyncRoot } from '../core/model.js';
import type { FailureRecord, Journal } from '../ports/journal.js';
import type { RemoteHint, StreamType } from '../ports/remote-changes.js';
import type { RejectedItem, RemoteStore } from '../ports/remote-store.js';
import type { RemoteObserverDeps } from './remote-observer-deps.js';
import { listSubtree, recordListingProblems, REJECTED_CODE, type ListingProblems } from './remote-listing.js';
import { locateRemote } from './remote-tree.js';
import { byteLength, MAX_TREE_DEPTH, pathTooLong } from '../core/path-limits.js';

/**
 * Item fetches after a burst of events at once: each is one small GET, bound by latency, not by bandwidth (the
 * pacer still holds them to the account's rate). With 4 at once, 50 edits on Box spent 140 ms of the daemon's
 * 0.44-0.56 s (last edit to all in the mirror) in these fetches, one after another.
 */
export const FETCH_CONCURRENCY = 16;

/** The journal key of the event cursor of a stream. */
export const cursorName = (stream: StreamType): string => `events:${stream}`;

/** One item to re-fetch: the hint (when it came from the stream) or a bare id (daemon hints). */
interface Wanted {
  readonly id: RemoteId;
  readonly kind: 'file' | 'folder' | 'weblink' | null;
  readonly trashedHint: boolean;
  /** The parent the event named (where an item new to us is parked when Box answers for it malformed). */
  readonly parentId?: RemoteId | null;
}

function wantedFrom(journal: Journal, roots: readonly SyncRoot[], hints: readonly RemoteHint[], extraIds: readonly RemoteId[]): Wanted[] {
  const rootIds = new Set<RemoteId>(roots.map((r) => r.remoteId));
  const byId = new Map<RemoteId, Wanted>();
  for (const h of hints) {
    // Worth a fetch only when it is (or was) ours: known, a root, or named as a child of a folder we know. The
    // `changes` stream covers the whole account; everything else is someone else's business.
    const known = journal.getRemote(h.id);
    const relevant =
      known !== undefined ||
      rootIds.has(h.id) ||
      (h.parentId !== null && (rootIds.has(h.parentId) || journal.getRemote(h.parentId) !== undefined));
    if (!relevant) continue;
    const prev = byId.get(h.id);
    // The echo of a change this client made (or one already fetched): the journal holds the item as the event
    // shows it. Skipped unless another event of the item asked for a fetch already.
    if (prev === undefined && isEcho(known, h)) continue;
    // The last event of an item decides whether it went to the trash (a restore after a trash is not trashed).
    byId.set(h.id, { id: h.id, kind: h.kind, trashedHint: h.change === 'trashed' || (prev?.trashedHint === true && h.change !== 'restored'), parentId: h.parentId ?? prev?.parentId ?? null });
  }
  for (const id of extraIds) if (!byId.has(id)) byId.set(id, { id, kind: journal.getRemote(id)?.kind ?? null, trashedHint: false });
  return [...byId.values()];
}

/**
 * Does the event show the item exactly as the journal holds it (same kind, etag, parent and name, and active)?
 * Box changes an item's etag with every change of it, so the journal is already up to date for this event: an
 * upload, move or folder create of boxsync's own costs no second request. A later change has its own event.
 */
function isEcho(known: RemoteEntry | undefined, h: RemoteHint): boolean {
  if (h.change !== 'changed' || h.etag === null || h.name === null || h.parentId === null) return false;
  return known !== undefined && known.status === 'active' && known.kind === h.kind && known.etag === h.etag && known.parentId === h.parentId && known.name === h.name;
}

/**
 * The files whose event carried the whole file (RemoteHint.item, validated at the Box boundary), taken as fetched
 * without a GET: an edit of a synced file on Box costs no request of its own (100 requests after 100 edits). Only
 * when every one holds: the item's only event in the batch, a change (not a trash or restore), not a root; the
 * journal holds it as an active file, at the same parent and name (a move or rename is fetched: where it went
 * decides more); and the event's sequence_id is newer than the journal's. Box's sequence_id grows with every change
 * of an item, so an event that is late, repeated or out of order (its sequence_id at or below the journal's) is
 * fetched as before and never rolls the item back; a newer one shows a state Box held after the journal's.
 */
function trustedSources(journal: Journal, roots: readonly SyncRoot[], hints: readonly RemoteHint[]): Map<RemoteId, RemoteEntry> {
  const rootIds = new Set<RemoteId>(roots.map((r) => r.remoteId));
  const events = new Map<RemoteId, number>();
  for (const h of hints) events.set(h.id, (events.get(h.id) ?? 0) + 1);
  const out = new Map<RemoteId, RemoteEntry>();
  for (const h of hints) {
    const e = h.item;
    if (e === undefined || events.get(h.id) !== 1 || h.change !== 'changed' || rootIds.has(h.id)) continue;
    const known = journal.getRemote(h.id);
    if (known === undefined || known.kind !== 'file' || known.status !== 'active' || known.sequenceId === '') continue;
    if (e.id !== h.id || e.kind !== 'file' || e.status !== 'active' || e.parentId !== known.parentId || e.name !== known.name) continue;
    if (compareSequence(e.sequenceId, known.sequenceId) > 0) out.set(h.id, e);
  }
  return out;
}

async function fetchItem(remote: RemoteStore, w: Wanted): Promise<RemoteEntry | null> {
  if (w.kind !== null) return remote.getItem(w.id, w.kind);
  return (await remote.getItem(w.id, 'file')) ?? (await remote.getItem(w.id, 'folder'));
}

/** True when storing `e` would make it its own ancestor (Box moving a folder into its own subtree, or a root below itself). */
function makesCycle(journal: Journal, e: RemoteEntry, pending: ReadonlyMap<RemoteId, RemoteEntry>, rootIds: ReadonlySet<RemoteId>): boolean {
  let cur = e.parentId;
  for (let depth = 0; cur !== null && depth < MAX_TREE_DEPTH; depth++) {
    if (cur === e.id) return true;
    if (rootIds.has(cur)) return false;
    cur = (pending.get(cur) ?? journal.getRemote(cur))?.parentId ?? null;
  }
  return cur !== null;
}

/**
 * The item Box answered for malformed, to park: under its last good name when the journal knows it, else under
 * the (escaped) name Box sent or its Box id, in the folder Box or the event named. Null when neither names a
 * folder (nothing to place it in: a listing of its folder parks it if it is ours).
 */
function malformedItem(journal: Journal, w: Wanted, details: Readonly<Record<string, unknown>>, reason: string): RejectedItem | null {
  const known = journal.getRemote(w.id);
  const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
  const parentId = known?.parentId ?? (str(details.parentId) as RemoteId | null) ?? w.parentId ?? null;
  if (parentId === null) return null;
  const kind = known?.kind ?? w.kind ?? (str(details.itemKind) as RejectedItem['kind']);
  return {
    id: w.id,
    name: known ? escapeText(known.name) : str(details.itemName),
    kind,
    parentId,
    endpoint: String(details.endpoint ?? 'GET item'),
    field: String(details.field ?? '(body)'),
    reason,
  };
}

/** Bytes of an item's absolute local path, through the hinted entries and the journal; null when under no root. */
function absPathBytes(journal: Journal, roots: readonly SyncRoot[], pending: ReadonlyMap<RemoteId, RemoteEntry>, id: RemoteId): number | null {
  let bytes = 0;
  let cur = pending.get(id) ?? journal.getRemote(id);
  for (let depth = 0; cur && depth <= MAX_TREE_DEPTH; depth++) {
    const root = roots.find((r) => r.remoteId === cur!.id);
    if (root) return bytes + byteLength(root.localPath);
    bytes += 1 + byteLength(cur.name);
    if (cur.parentId === null) return null;
    cur = pending.get(cur.parentId) ?? journal.getRemote(cur.parentId);
  }
  return null;
}

export async function applyHints(
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
  // Several at a time, in hint order: a burst of events costs round trips in parallel rather than in turn. An
  // item Box answers for with a malformed body is parked, and the others go on.
  const pool = new PQueue({ concurrency: FETCH_CONCURRENCY });
  const trusted = trustedSources(journal, roots, hints);
  const results = await Promise.all(
    wanted.map((w) => {
      const source = trusted.get(w.id);
      if (source !== undefined) return { w, entry: source };
      return pool.add(async (): Promise<{ w: Wanted; entry: RemoteEntry | null } | null> => {
        signal?.throwIfAborted();
        try {
          return { w, entry: await fetchItem(deps.remote, w) };
        } catch (e) {
          if (!isSyncError(e) || e.code !== 'malformed_response') throw e;
          deps.logger.warn({ id: w.id, code: e.code }, `${e.message}; this item is skipped until it changes, the rest syncs`);
          const r = malformedItem(journal, w, e.details, e.message);
          if (r) problems.rejected.push(r);
          return null;
        }
      });
    }),
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
  const spread = (): void => {
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
  };
  spread();
  for (const e of kept) if (rootIds.has(e.id)) inside.add(e.id);
  // An item Box places deeper than a Linux path can hold is parked, not stored (its last good place is kept).
  const pathBytes = new Map<RemoteId, number | null>();
  const tooDeep = new Set<RemoteId>();
  for (const e of kept) {
    if (!inside.has(e.id) || rootIds.has(e.id)) continue;
    const bytes = absPathBytes(journal, roots, pending, e.id);
    pathBytes.set(e.id, bytes);
    const why = bytes === null ? null : pathTooLong(bytes);
    if (why === null) continue;
    problems.rejected.push({ id: e.id, name: escapeText(e.name), kind: e.kind, parentId: e.parentId!, endpoint: `GET /${e.kind === 'folder' ? 'folders' : 'files'}/${e.id}`, field: 'name', reason: why });
    tooDeep.add(e.id);
  }
  // Folders new to the journal (created, moved in from outside, restored) are listed before the cursor moves.
  for (const e of kept) {
    if (e.kind === 'folder' && inside.has(e.id) && !rootIds.has(e.id) && !tooDeep.has(e.id) && journal.getRemote(e.id) === undefined) {
      const top = pathBytes.get(e.id);
      const r = await listSubtree({ journal, remote: deps.remote, logger: deps.logger }, e.id, signal, top === null || top === undefined ? {} : { topPathBytes: top });
      problems.rejected.push(...r.problems.rejected);
      problems.incomplete.push(...r.problems.incomplete);
    }
  }
  // Those listings may have found the parent of a hinted item: a folder two levels into a new folder, whose own
  // event was skipped (its parent was unknown then). An item moved in there is inside, not gone: taken as gone,
  // its row (which the listing had just written) was dropped, its local copy trashed, and it was never downloaded.
  spread();
  journal.transaction(() => {
    for (const { w, entry } of fetched) {
      if (entry && (cyclic.has(entry.id) || tooDeep.has(entry.id))) continue;
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
  const ids = new Set(fetched.map((f) => f.w.id));
  // An event the journal already matches but that is not synced yet (the first listing saw the item, and its
  // window has not come) is not fetched again, but it is touched: the pass that read it plans it now.
  for (const h of hints) if (!ids.has(h.id) && isEcho(journal.getRemote(h.id), h) && roots.every((r) => journal.syncedByRemoteId(r.id, h.id) === undefined)) ids.add(h.id);
  return [...ids];
}

/**
 * Is every event boxsync's own write, committed (or no business of ours)? An event of one of our roots' items
 * that the journal holds exactly as the event shows it, synced in a root, is the echo of an upload, move or folder
 * create this process made: the daemon's long poll lets such news wake no pass (daemon/lifecycle/remote-side.ts).
 * Anything else (a trash, an item not synced yet, a new one) is news.
 */
export function onlyOwnEchoes(journal: Journal, roots: readonly SyncRoot[], hints: readonly RemoteHint[]): boolean {
  const rootIds = new Set<RemoteId>(roots.map((r) => r.remoteId));
  return hints.every((h) => {
    const known = journal.getRemote(h.id);
    const ours = known !== undefined || rootIds.has(h.id) || (h.parentId !== null && (rootIds.has(h.parentId) || journal.getRemote(h.parentId) !== undefined));
    if (!ours) return true;
    return isEcho(known, h) && roots.some((r) => journal.syncedByRemoteId(r.id, h.id) !== undefined);
  });
}

/**
 * A changed item gets a fresh chance: parked ('skip') failures at its old or new path, and its rejected ones, are
 * cleared. The failures that can be cleared are read in one query first: with none (the usual case) a burst of 100
 * hinted items costs no lookup per item (it cost about 6 per item: the edits run of issue 29 point 7).
 */
function clearParkedFailures(journal: Journal, roots: readonly SyncRoot[], ids: readonly RemoteId[]): void {
  const ours = new Set(roots.map((r) => r.id));
  const parked = journal.parkedFailures(REJECTED_CODE).filter((f) => ours.has(f.root));
  if (parked.length === 0) return;
  const key = (root: string, path: string): string => `${root}\u0000${path}`;
  const byPath = new Map(parked.map((f) => [key(f.root, f.path), f] as const));
  const clear = (root: SyncRoot['id'], path: RelPath): void => {
    if (!byPath.delete(key(root, path))) return;
    journal.clearFailure(root, path);
  };
  const skipAt = (root: SyncRoot['id'], path: RelPath): void => {
    if (byPath.get(key(root, path))?.disposition === 'skip') clear(root, path);
  };
  const rejected = new Map<RemoteId, FailureRecord[]>();
  for (const f of parked) {
    const rid = f.remoteId;
    if (rid !== null && rid !== undefined && f.code === REJECTED_CODE) rejected.set(rid, [...(rejected.get(rid) ?? []), f]);
  }
  for (const id of ids) {
    for (const f of rejected.get(id) ?? []) clear(f.root, f.path);
    const at = locateRemote(journal, roots, id);
    if (at && at.path !== '') skipAt(at.root.id, at.path);
    for (const root of roots) {
      const s = journal.syncedByRemoteId(root.id, id);
      if (s) skipAt(root.id, s.path);
    }
    if (byPath.size === 0) return;
  }
}
