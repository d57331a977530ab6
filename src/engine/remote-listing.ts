/**
 * Listing Box folders into the journal's remote tree: the breadth-first walk (LIST_CONCURRENCY folders at once,
 * each page in its own transaction), and what a walk finds wrong without stopping (items the adapter refused,
 * cycles, folders listed in part), parked in the failures table under their root and path.
 */
import PQueue from 'p-queue';
import { isSyncError, type SyncError } from '../core/errors.js';
import { escapeText } from '../core/escape.js';
import { LOCAL_NAME_NOT_UTF8 } from '../core/park-class.js';
import type { RelPath, RemoteEntry, RemoteId, SyncRoot } from '../core/model.js';
import { joinPath } from '../core/paths.js';
import { byteLength, childPathBytes, pathTooLong } from '../core/path-limits.js';
import type { Journal } from '../ports/journal.js';
import type { RejectedItem, RemoteStore } from '../ports/remote-store.js';
import type { Logger } from 'pino';
import { PARKED_MS } from './failures.js';
import { locateRemote } from './remote-tree.js';

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

export type ListingDeps = {
  readonly journal: Journal;
  readonly remote: RemoteStore;
  readonly logger: Logger;
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
  opts: { refuseEmpty?: boolean; onlyNewFolders?: boolean; topPathBytes?: number } = {},
): Promise<SubtreeResult> {
  const problems: ListingProblems = { rejected: [], incomplete: [] };
  const visited = new Set<RemoteId>([folderId]);
  for (const r of deps.roots ?? []) visited.add(r.remoteId);
  // The absolute local path's bytes of each folder to list (core/path-limits.ts): what is deeper is parked.
  const pathBytes = new Map<RemoteId, number>([[folderId, opts.topPathBytes ?? topPathBytes(deps, folderId)]]);
  const run = async (id: RemoteId, isTop: boolean): Promise<RemoteId[] | 'refused'> => {
    try {
      return await listOneFolder(deps, id, isTop, opts, { visited, pathBytes }, problems, signal);
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

/**
 * Bytes of the top folder's absolute local path: from its root when the journal places it under one, else 0
 * (the bound then counts from the top folder, and a walk below it still ends).
 */
function topPathBytes(deps: ListingDeps, folderId: RemoteId): number {
  const at = locateRemote(deps.journal, deps.roots ?? [], folderId);
  if (!at) return 0;
  return byteLength(at.root.localPath) + (at.path === '' ? 0 : 1 + byteLength(at.path));
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

/**
 * A failure's path as printed. A refused item is parked under its name already escaped (rejectedKey), below
 * folders whose names passed Box's rules (no control character, no backslash): escaping that key again would
 * double its backslashes (`line\\x0abreak.txt`). Any other failure's path is a raw path, escaped here.
 */
export function shownFailurePath(code: string, path: string): string {
  // A local name that is not UTF-8 is parked under its escaped form already (scan-parks.ts).
  if (code === LOCAL_NAME_NOT_UTF8) return path;
  return code === REJECTED_CODE ? path.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => escapeText(c)) : escapeText(path);
}

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
      journal.recordFailure({
        root: at.root.id,
        path: rejectedKey(at.path, r),
        code: REJECTED_CODE,
        message,
        attempts: 1,
        nextRetryAtMs: nowMs + PARKED_MS,
        disposition: 'skip',
        remoteId: r.id,
      });
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
  deps: Pick<ListingDeps, 'journal' | 'remote'>,
  id: RemoteId,
  isTop: boolean,
  opts: { refuseEmpty?: boolean; onlyNewFolders?: boolean },
  walk: { readonly visited: Set<RemoteId>; readonly pathBytes: Map<RemoteId, number> },
  problems: ListingProblems,
  signal?: AbortSignal,
): Promise<RemoteId[] | 'refused'> {
  const { journal, remote } = deps;
  const { visited } = walk;
  const myBytes = walk.pathBytes.get(id) ?? 0;
  walk.pathBytes.delete(id);
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
        // Deeper than a Linux path can hold (a tree with no bottom ends here): parked, not stored, not listed.
        const bytes = childPathBytes(myBytes, child.name);
        const tooLong = pathTooLong(bytes);
        if (tooLong !== null) {
          problems.rejected.push({ id: child.id, name: escapeText(child.name), kind: child.kind, parentId: id, endpoint: `GET /folders/${id}/items`, field: 'name', reason: tooLong });
          seen.add(child.id);
          continue;
        }
        if (child.kind === 'folder') {
          visited.add(child.id);
          walk.pathBytes.set(child.id, bytes);
        }
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
        // Still below this folder? A folder listed meanwhile (several are listed at once) may have found it moved
        // there: that row, and the subtree below it, are the truth now.
        if (journal.getRemote(x)?.parentId !== id) continue;
        journal.deleteRemoteSubtree(x);
        journal.deleteRemote(x);
      }
    });
  }
  return next;
}

export function hasListingProblems(journal: Journal, roots: readonly SyncRoot[]): boolean {
  return roots.some((r) => journal.failures(r.id).some((f) => f.code === REJECTED_CODE || f.code === INCOMPLETE_CODE));
}

export function clearListingProblems(journal: Journal, roots: readonly SyncRoot[]): void {
  journal.transaction(() => {
    for (const root of roots) {
      for (const f of journal.failures(root.id)) if (f.code === REJECTED_CODE || f.code === INCOMPLETE_CODE) journal.clearFailure(root.id, f.path);
    }
  });
}

