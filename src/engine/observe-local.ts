/**
 * Local observation: turns the disk into rows of the journal's local tree.
 *
 * A full scan (sync --once, the daemon's scheduled rescan) walks the root through LocalFs.scan with `known`
 * taken from the journal, so unchanged files (same size, mtime and inode) keep their SHA-1 and only new or
 * changed files are hashed. Rows the scan did not see are dropped folder by folder as the walk lists each one
 * (scanLocal), never through a set of every path, so memory does not grow with the tree. Daemon hints instead
 * re-stat just the hinted paths (and scan a hinted folder's subtree), so the cost grows with the change.
 */
import type { LocalEntry, RelPath, RootId, SyncRoot } from '../core/model.js';
import type { Journal } from '../ports/journal.js';
import type { LocalFs } from '../ports/local-fs.js';
import { ancestorsOf, basename, foldKey, isAncestorOrSelf, parentOf } from '../core/paths.js';
import { timeSlicer } from './time-slice.js';
import PQueue from 'p-queue';
import { assertNever } from '../core/operations.js';
import type { SyncError } from '../core/errors.js';
import { toSyncError } from './executor.js';
import { isScanPark, SCAN_PARK_CODES, ScanParks } from './scan-parks.js';
import { localUnchanged } from '../core/same-item.js';

/** Lookups kept for entries not yet written; past this many (entries gone since), they are dropped. */
const STALE_LOOKUPS = 2000;

/** Stale rows deleted per transaction at the end of a scan. */
const SWEEP_CHUNK_ROWS = 1000;

export type IsIgnored = (path: RelPath, isDir: boolean) => boolean;

export interface LocalObserverDeps {
  readonly journal: Journal;
  readonly root: SyncRoot;
  readonly fs: LocalFs;
  readonly isIgnored: IsIgnored;
  /** The engine's clock (parks are stamped with it); Date.now by default. */
  readonly nowMs?: () => number;
  /**
   * Whatever decides which entries a listing reports besides the listing itself (the ignore rules, selective
   * sync's choices, the root marker): with it, the scan uses the journal's listing marks (listingMarksOf), and
   * drops them all when it changed. Without it, every folder is compared.
   */
  readonly listingSalt?: string;
}

function sameStat(a: LocalEntry, b: LocalEntry): boolean {
  return a.kind === b.kind && localUnchanged(a, b);
}

/** Does the local root folder exist (a directory)? A missing root is never read as "everything deleted". */
export async function localRootExists(fs: LocalFs): Promise<boolean> {
  return fs.rootExists();
}

/**
 * Writes the entry when it differs from the journal's row. True when that is a change the planner could act on:
 * a folder whose mtime alone moved (something inside it changed, and that is noted for itself) is not one.
 */
function put(journal: Journal, root: RootId, entry: LocalEntry, prev = journal.getLocal(root, entry.path)): boolean {
  if (prev && sameStat(prev, entry) && prev.sha1 === entry.sha1) return false;
  journal.putLocal(root, entry);
  // Something the user changed gets a fresh chance even if it was parked as unsyncable.
  if (journal.getFailure(root, entry.path)?.disposition === 'skip') journal.clearFailure(root, entry.path);
  return !(prev && prev.kind === 'folder' && entry.kind === 'folder' && prev.inode === entry.inode);
}

/** What a scan changed in the journal's local tree. */
export interface ScanResult {
  /** The paths written or dropped; null when there were more than `changedLimit` (then: "many"). */
  readonly changed: readonly RelPath[] | null;
}

/**
 * Scan the whole root (or one subtree of it) and make the journal's local rows match, in memory bounded by one
 * folder's listing:
 * - each folder the walk lists is compared with its rows in the journal as soon as it is listed: a row with no
 *   entry on disk goes with its subtree, and so do the rows below a folder that is now a file;
 * - rows no folder of the walk reaches (below a path the journal lost the row of, left by an older version or a
 *   damaged journal) are found by a count: when the journal holds more rows in the scope than the walk reported,
 *   one pass in path order drops the rows whose parent row is missing or not a folder.
 */
export async function scanLocal(deps: LocalObserverDeps, under?: RelPath, signal?: AbortSignal, changedLimit = 0): Promise<ScanResult> {
  const { journal, root, fs, isIgnored } = deps;
  let changed: RelPath[] | null = [];
  const note = (p: RelPath): void => {
    if (changed === null) return;
    if (changed.length >= changedLimit) changed = null;
    else changed.push(p);
  };
  // The row the scan looked up for an entry (to skip hashing an unchanged file) is the one its write compares
  // with: one journal read per entry, not two. Each is dropped as its entry is written (a window of lookups can
  // run ahead of the batch being written: clearing the map per batch cost a second read for about one entry in
  // eight). After a batch it holds the lookups of the window ahead, and those of entries the walk did not report
  // (gone meanwhile), which go when the map grows past STALE_LOOKUPS.
  const looked = new Map<RelPath, LocalEntry | undefined>();
  // The walk observes one folder at a time: its rows come in one range read, not one lookup per file (a
  // no-change pass over 100,000 files spent about a fifth of its time in those lookups).
  let folder: { readonly path: RelPath | ''; readonly rows: ReadonlyMap<RelPath, LocalEntry> } | null = null;
  const rowsOf = (dir: RelPath | ''): ReadonlyMap<RelPath, LocalEntry> => {
    if (folder?.path !== dir) {
      // A plain loop: building [path, entry] pairs for the Map constructor cost 0.18 s per 100,000 rows.
      const rows = new Map<RelPath, LocalEntry>();
      for (const e of journal.localChildren(root.id, dir)) rows.set(e.path, e);
      folder = { path: dir, rows };
    }
    return folder.rows;
  };
  const drop = (p: RelPath): void => {
    note(p);
    journal.deleteLocal(root.id, p);
    if (journal.getFailure(root.id, p)?.disposition === 'skip') journal.clearFailure(root.id, p);
  };
  const dropBelow = (p: RelPath): void => dropInChunks(journal, pathsBelow(journal, root.id, p), drop);
  let listedUnder = under === undefined;
  // What the walk could not read is parked, and its rows kept: unknown, never gone (scan-parks.ts).
  const parks = new ScanParks({ journal, root: root.id, fs, nowMs: deps.nowMs ?? Date.now });
  const onListed = (dir: RelPath | '', entries: readonly LocalEntry[]): void => {
    if (dir === under) listedUnder = true;
    const kinds = new Map<RelPath, LocalEntry['kind']>();
    for (const e of entries) kinds.set(e.path, e.kind);
    for (const row of rowsOf(dir).values()) {
      const kind = kinds.get(row.path);
      if (kind === undefined && parks.raised.has(row.path)) continue;
      if (kind === undefined) {
        journal.transaction(() => drop(row.path));
        if (row.kind === 'folder') dropBelow(row.path);
      } else if (row.kind === 'folder' && kind !== 'folder') {
        dropBelow(row.path);
      }
    }
  };
  let reported = 0;
  const foreignTemps: RelPath[] = [];
  // A folder whose listing is the one its rows were last found equal to is not compared again (local/scan.ts).
  const marks = listingMarksOf(deps);
  const scan = fs.scan({
    isIgnored,
    known: (p) => {
      const row = rowsOf(parentOf(p)).get(p);
      looked.set(p, row);
      return row;
    },
    hash: true,
    onListed,
    onUnreadable: parks.onUnreadable,
    // A whole-root scan runs at the start of a pass with nothing in flight: partial downloads of a killed run go.
    removeTemps: under === undefined,
    onForeignTemp: (p) => void foreignTemps.push(p),
    ...(under === undefined ? {} : { under }),
    ...(marks === null
      ? {}
      : {
          listingMarks: {
            skip: (dir, mark) => {
              const entries = marks.skip(dir, mark);
              if (entries === null) return false;
              // Its rows stand for its entries: as if listed and reported.
              if (dir === under) listedUnder = true;
              reported += entries;
              return true;
            },
            clean: marks.clean,
          },
        }),
  });
  for await (const batch of scan) {
    signal?.throwIfAborted();
    journal.transaction(() => {
      marks?.write();
      for (const entry of batch) {
        const seen = looked.has(entry.path);
        const prev = looked.get(entry.path);
        looked.delete(entry.path);
        if (under !== undefined && (entry.path === under || !isAncestorOrSelf(under, entry.path))) continue;
        reported += 1;
        const written = seen ? put(journal, root.id, entry, prev) : put(journal, root.id, entry);
        if (written) note(entry.path);
      }
    });
    if (looked.size > STALE_LOOKUPS) looked.clear();
    await parks.flush();
  }
  await parks.flush();
  if (marks !== null) journal.transaction(() => marks.write());
  const scope = under ?? '';
  // Readable again: planned in this run, with what changed on Box below it meanwhile.
  for (const p of parks.clearStale(scope)) note(p);
  // `under` gone, or no longer a folder: nothing below it is left.
  if (under !== undefined && !listedUnder) dropBelow(under);
  else if (journal.countLocalUnder(root.id, scope, reported + 1) > reported) dropInChunks(journal, orphans(journal, root.id, scope), drop);
  reportForeignTemps(journal, root.id, foreignTemps, under === undefined);
  return { changed };
}

/** The journal's listing marks as one scan uses them (ScanOptions.listingMarks); null without a salt. */
interface ScanMarks {
  /** The entries the folder's mark stands for when it is `mark`; null: compare the folder. */
  skip(dir: RelPath | '', mark: string): number | null;
  /** Kept until write(): written in the scan's next transaction. */
  clean(dir: RelPath | '', mark: string, reported: number): void;
  write(): void;
}

function listingMarksOf(deps: LocalObserverDeps): ScanMarks | null {
  const { journal, root, listingSalt } = deps;
  const { listingMark, putListingMark, clearListingMarks } = journal;
  if (listingSalt === undefined || listingMark === undefined || putListingMark === undefined || clearListingMarks === undefined) return null;
  const key = `listing-marks:${root.id}`;
  // Other ignore rules, another choice of folders: the same listing may report other entries now.
  if (journal.getMeta(key) !== listingSalt) {
    journal.transaction(() => {
      clearListingMarks.call(journal, root.id);
      journal.setMeta(key, listingSalt);
    });
  }
  // A folder holding a scan park is always compared: the scan clears a park it does not raise again (scan-parks.ts).
  const parked = new Set(
    journal
      .failures(root.id)
      .filter((f) => isScanPark(f.probe) && f.path !== '')
      .map((f) => parentOf(f.path)),
  );
  let pending: [RelPath | '', string, number][] = [];
  return {
    skip: (dir, mark) => {
      if (parked.has(dir)) return null;
      const m = listingMark.call(journal, root.id, dir);
      return m !== undefined && m.mark === mark ? m.entries : null;
    },
    clean: (dir, mark, reported) => {
      if (!parked.has(dir)) pending.push([dir, mark, reported]);
    },
    write: () => {
      for (const [dir, mark, reported] of pending) putListingMark.call(journal, root.id, dir, mark, reported);
      pending = [];
    },
  };
}

/** The failure code of a user's file named like a boxsync temp file (never synced, never removed: reported). */
export const FOREIGN_TEMP_CODE = 'temp_name_reserved';

/**
 * Files named like boxsync's temp files that boxsync did not make are parked with a message saying so, on every
 * run while they are there; a whole-root scan (`wholeRoot`) drops the reports of those gone or renamed since.
 */
function reportForeignTemps(journal: Journal, root: RootId, found: readonly RelPath[], wholeRoot: boolean): void {
  const seen = new Set(found);
  const stale = wholeRoot ? journal.failures(root).filter((f) => f.code === FOREIGN_TEMP_CODE && !seen.has(f.path)) : [];
  const fresh = found.filter((p) => journal.getFailure(root, p)?.code !== FOREIGN_TEMP_CODE);
  if (stale.length === 0 && fresh.length === 0) return;
  journal.transaction(() => {
    for (const f of stale) journal.clearFailure(root, f.path);
    for (const path of fresh) {
      const message = `the file is named like a boxsync temp file (${TEMP_NAME_HINT}) but boxsync did not make it: it is not synced and left as it is; rename it to sync it`;
      journal.recordFailure({ root, path, code: FOREIGN_TEMP_CODE, message, attempts: 1, nextRetryAtMs: 0, disposition: 'skip' });
    }
  });
}

const TEMP_NAME_HINT = '.boxsync-tmp-*';

/** Drops paths as a source yields them, SWEEP_CHUNK_ROWS per transaction (a keyset pager may be the source). */
function dropInChunks(journal: Journal, paths: Iterable<RelPath>, drop: (p: RelPath) => void): void {
  let chunk: RelPath[] = [];
  const flush = (): void => {
    const these = chunk;
    chunk = [];
    journal.transaction(() => these.forEach(drop));
  };
  for (const p of paths) {
    chunk.push(p);
    if (chunk.length >= SWEEP_CHUNK_ROWS) flush();
  }
  if (chunk.length > 0) flush();
}

function* pathsBelow(journal: Journal, root: RootId, path: RelPath): Generator<RelPath> {
  for (const e of journal.localUnder(root, path)) yield e.path;
}

/**
 * Rows below `scope` whose parent row is missing or is not a folder, in path order (a parent sorts before its
 * children, so a chain of them goes in one pass: the folders found are remembered, as they may not be dropped
 * yet). The children of `scope` itself were compared with its listing.
 */
function* orphans(journal: Journal, root: RootId, scope: RelPath | ''): Generator<RelPath> {
  const found = new Set<RelPath>();
  for (const e of journal.localUnder(root, scope)) {
    const parent = parentOf(e.path);
    if (parent === scope || parent === '') continue;
    if (!found.has(parent) && journal.getLocal(root, parent)?.kind === 'folder') continue;
    if (e.kind === 'folder') found.add(e.path);
    yield e.path;
  }
}

/** What re-stating one hinted path found, applied to the journal afterwards in hint order. */
type Restat =
  | { readonly kind: 'gone'; readonly path: RelPath }
  | { readonly kind: 'unreadable'; readonly path: RelPath; readonly error: SyncError }
  | { readonly kind: 'folder'; readonly entry: LocalEntry }
  | { readonly kind: 'entry'; readonly entry: LocalEntry };

/** Hinted paths re-stat'ed (and hashed when changed) at once; the journal is written in hint order after. */
const RESTAT_CONCURRENCY = 16;

async function restatOne(deps: LocalObserverDeps, path: RelPath): Promise<Restat> {
  try {
    return await restatEntry(deps, path);
  } catch (e) {
    // EACCES, ENAMETOOLONG, EIO... on this one path: parked, its rows kept, the other hints go on.
    const error = toSyncError(e);
    if (!SCAN_PARK_CODES.has(error.code)) throw error;
    return { kind: 'unreadable', path, error };
  }
}

async function restatEntry(deps: LocalObserverDeps, path: RelPath): Promise<Restat> {
  const { journal, root, fs, isIgnored } = deps;
  const entry = await fs.stat(path);
  if (!entry || isIgnored(path, entry.kind === 'folder')) return { kind: 'gone', path };
  if (entry.kind === 'folder') return { kind: 'folder', entry };
  const known = journal.getLocal(root.id, path);
  let sha1 = entry.sha1;
  if (entry.kind === 'file' && sha1 === null) {
    if (known && sameStat(known, entry) && known.sha1 !== null) sha1 = known.sha1;
    else {
      sha1 = await fs.hash(path);
      // Rewritten while it was read (a checkout): the hash may belong to neither stat. The row keeps the newer
      // stat without a SHA-1 (a change to look at again), never a SHA-1 paired with another content's size.
      const after = await fs.stat(path);
      if (!after) return { kind: 'gone', path };
      if (after.kind === 'folder') return { kind: 'folder', entry: after };
      if (!sameStat(after, entry)) return { kind: 'entry', entry: { ...after, sha1: null } };
    }
  }
  return { kind: 'entry', entry: { ...entry, sha1 } };
}

/**
 * Re-stat hinted paths: a file is re-hashed only when its stat changed; a folder's subtree is rescanned. When a
 * hinted path is gone, its folder is looked at too: a name there that the journal does not know yet (the other
 * half of a rename whose hint has not arrived, e.g. a case-only rename `a.md` -> `A.md`) is re-stat'ed as well,
 * so that the planner sees a rename instead of a delete. Any hinted path's folder is also looked at for names
 * Box would take for the same one (case, Unicode normalization), known to the journal or not: the planner must
 * see both halves of such a pair together. Returns those extra paths (the planner's scope grows by them).
 */
export async function restatLocal(deps: LocalObserverDeps, paths: readonly RelPath[], signal?: AbortSignal): Promise<RelPath[]> {
  const gone = new Set(await restatBatch(deps, paths, signal));
  const hinted = new Set<RelPath>(paths);
  const extra: RelPath[] = [];
  // Per folder: the folded names hinted there, and whether one of them is gone.
  const folders = new Map<RelPath | '', { keys: Set<string>; gone: boolean }>();
  for (const p of paths) {
    const f = folders.get(parentOf(p)) ?? { keys: new Set<string>(), gone: false };
    f.keys.add(foldKey(basename(p)));
    f.gone ||= gone.has(p);
    folders.set(parentOf(p), f);
  }
  for (const [dir, f] of folders) {
    for (const name of await deps.fs.childNames(dir)) {
      const p = (dir === '' ? name : `${dir}/${name}`) as RelPath;
      if (hinted.has(p)) continue;
      const twin = f.keys.has(foldKey(name));
      if (twin || (f.gone && deps.journal.getLocal(deps.root.id, p) === undefined)) extra.push(p);
    }
  }
  if (extra.length > 0) await restatBatch(deps, extra, signal);
  return extra;
}

/**
 * Re-stat paths (RESTAT_CONCURRENCY at a time, a p-queue) and apply what was found in hint order; returns the
 * paths found gone. A folder is rescanned when its result is applied: results below it that were stat'ed
 * before are older than that rescan, so they are dropped.
 */
async function restatBatch(deps: LocalObserverDeps, paths: readonly RelPath[], signal?: AbortSignal): Promise<RelPath[]> {
  const { journal, root } = deps;
  const goneOut: RelPath[] = [];
  const queue = new PQueue({ concurrency: RESTAT_CONCURRENCY });
  const found = paths.map((p) =>
    queue.add(async () => {
      signal?.throwIfAborted();
      return restatOne(deps, p);
    }),
  );
  // Results not awaited (after an error or an abort) must not surface as unhandled rejections.
  for (const f of found) f.catch(() => undefined);
  const rescanned = new Set<RelPath>();
  // The stats finish long before their results are applied: without a turn now and then, applying thousands of
  // them would hold the event loop (status, the watcher) for the whole burst.
  const slice = timeSlicer();
  try {
    for (const next of found) {
      await slice();
      const r = await next;
      const path = r.kind === 'gone' || r.kind === 'unreadable' ? r.path : r.entry.path;
      if (rescanned.size > 0 && (rescanned.has(path) || ancestorsOf(path).some((a) => rescanned.has(a)))) continue;
      switch (r.kind) {
        case 'gone':
          journal.transaction(() => journal.deleteLocalSubtree(root.id, r.path));
          goneOut.push(r.path);
          break;
        case 'folder':
          journal.transaction(() => put(journal, root.id, r.entry));
          await scanLocal(deps, r.entry.path, signal);
          rescanned.add(r.entry.path);
          break;
        case 'entry':
          journal.transaction(() => put(journal, root.id, r.entry));
          break;
        case 'unreadable': {
          const parks = new ScanParks({ journal, root: root.id, fs: deps.fs, nowMs: deps.nowMs ?? Date.now });
          parks.onUnreadable(r.path, r.error);
          await parks.flush();
          break;
        }
        default:
          assertNever(r);
      }
    }
  } finally {
    queue.clear();
  }
  return goneOut;
}
