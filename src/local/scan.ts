/**
 * The streaming tree walk behind LocalFs.scan. Depth-first with an explicit stack of folders still to read, so
 * memory holds one folder listing and the pending folder paths, never the tree. lstat only: a symlink is reported
 * as 'symlink' and never followed, so the walk cannot leave the root.
 */
import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, type Stats } from 'node:fs';
import { escapeText } from '../core/escape.js';
import { LOCAL_NAME_NOT_UTF8 } from '../core/park-class.js';
import { SyncError } from '../core/errors.js';
import { asRelPath, type LocalEntry, type LocalKind, type RelPath } from '../core/model.js';
import type { ScanOptions } from '../ports/local-fs.js';
import { firstBadAncestor } from './containment.js';
import { classifyFsError, errnoError, errnoOf } from './fs-errors.js';
import type { FsModule } from './fs-module.js';
import { sha1File } from './hash.js';
import { isGone, lstatOrUndefined } from './guard.js';
import { QuickGate } from './quick-fs.js';
import { ThreadClock } from './thread-clock.js';
import { isTempName } from './temp-name.js';
import { localUnchanged, statSeen } from '../core/same-item.js';
import { loadWalkAddon, mtimeMsOf, WALK_FIELDS, WALK_KINDS, type WalkAddon } from './walk-native.js';

export const SCAN_BATCH_ENTRIES = 500;
/**
 * Entries of one folder hashed (when needed) at once, after their lstats (LSTAT_WINDOW). One at a time, each tiny file waits for
 * several round trips to the libuv pool in turn; a bounded window keeps the pool busy while memory stays bounded
 * (at most this many small-file buffers, see hash.ts). Entries are still reported in name order.
 */
export const OBSERVE_CONCURRENCY = 16;
/** Entries of one folder lstat-ed at once (no buffers involved: only the pool's queue grows). */
export const LSTAT_WINDOW = 64;

/**
 * A window of synchronous lstats slower than this per entry (a cached one takes a few microseconds; one that reads
 * the disk, tens to hundreds) counts as slow; QUICK_SLOW_IN_A_ROW of them turn synchronous lstats off for the rest
 * of the walk, which then goes through the thread pool, whose threads read the disk in parallel (quick-fs.ts).
 */
export const SYNC_LSTAT_MAX_MS_EACH = 0.025;

/**
 * A walk whose folder reads and lstats are all synchronous never waits for I/O, so it would hold the event loop
 * (the daemon's status, its watcher, a signal) for the whole tree: after this long without a turn it gives one.
 */
export const WALK_TURN_MS = 20;

/**
 * Folders the native walk reads ahead (its listAhead, on libuv's thread pool): the next folders on the walk's stack
 * are read and lstat-ed on a pool thread while the main thread compares the folders before with the journal, so on
 * two cores the walk's reads and the journal's reads overlap. At most this many are asked for and not yet taken, in
 * one call for several folders once half of them were taken (each call wakes a pool thread and comes back through
 * the event loop once). Only while the synchronous reads would be used (a local disk, quick answers); a folder is
 * still read once, after the scan began, when it is on the stack (its parent was listed).
 */
export const WALK_AHEAD = 8;

export function kindOf(st: Stats): LocalKind {
  if (st.isSymbolicLink()) return 'symlink';
  if (st.isDirectory()) return 'folder';
  if (st.isFile()) return 'file';
  return 'other';
}

/** What the walk uses of an lstat: a node Stats, or the numbers the native walk gives (walk-native.ts). */
interface StatLike {
  readonly ino: number;
  readonly size: number;
  readonly mtimeMs: number;
}

export function entryFromStats(path: RelPath, st: Stats, sha1: string | null): LocalEntry {
  return entryOf(path, kindOf(st), st, sha1);
}

function entryOf(path: RelPath, kind: LocalKind, st: StatLike, sha1: string | null): LocalEntry {
  return { path, kind, inode: st.ino, sizeBytes: kind === 'folder' ? 0 : st.size, mtimeMs: st.mtimeMs, sha1: kind === 'file' ? sha1 : null };
}

interface ScanContext {
  readonly fs: FsModule;
  readonly rootPath: string;
  readonly abs: (path: RelPath | '') => string;
  readonly opts: ScanOptions;
  /** Whether the root is on a local disk (quick-fs.ts onLocalDisk), as the LocalFs last asked. */
  readonly localDisk: Promise<boolean>;
  /** Was a temp-prefixed name made by this state dir's boxsync (temp-name.ts TempNames.isOurs)? */
  readonly isOurTemp: (name: string) => boolean;
}

interface WalkContext extends ScanContext {
  /** Synchronous lstats while they are quick: on a local disk, a window at a time (SYNC_LSTAT_MAX_MS_EACH). */
  readonly syncStat: QuickGate;
  /** Synchronous folder reads while they are quick (and the lstats are synchronous): their own count of slow ones. */
  readonly syncRead: QuickGate;
  /** When the walk last let the event loop in (performance.now()): see WALK_TURN_MS. */
  readonly turn: { at: number };
  /** How long a window slept (the disk answered), not its wall time, which a loaded machine's scheduler inflates. */
  readonly clock: ThreadClock | undefined;
  /** The native folder reader (walk-native.ts), used while the synchronous calls are; null without it. */
  readonly addon: WalkAddon | null;
  /** The folders being read ahead (WALK_AHEAD), by path: taken when the walk reaches them. */
  readonly ahead: Map<RelPath | '', Promise<readonly [string, Float64Array] | number>>;
}

export async function* scanTree(scan: ScanContext): AsyncGenerator<readonly LocalEntry[]> {
  const { fs, abs } = scan;
  // The root itself may be a symlink the user chose (~/Box -> /mnt/data/box); only entries inside are never followed.
  const rootStat = await fs.promises.stat(abs('')).catch(() => undefined);
  if (rootStat === undefined || !rootStat.isDirectory()) {
    throw new SyncError({
      code: 'local_root_missing',
      disposition: 'fatal',
      message: `the sync folder ${abs('')} is missing or not a folder; nothing is synced (and nothing deleted) until it is back`,
      details: { path: abs('') },
    });
  }
  const syncStat = new QuickGate(fs.lstatSync !== undefined && (await scan.localDisk), SYNC_LSTAT_MAX_MS_EACH);
  const syncRead = new QuickGate(syncStat.on && fs.readdirSync !== undefined, SYNC_LSTAT_MAX_MS_EACH);
  const ctx: WalkContext = {
    ...scan,
    syncStat,
    syncRead,
    turn: { at: performance.now() },
    clock: syncStat.on ? ThreadClock.open() : undefined,
    // In place of node's own readdirSync and lstatSync only: a module that wraps them (a test's faults) keeps them.
    addon: syncRead.on && fs.readdirSync === readdirSync && fs.lstatSync === lstatSync ? loadWalkAddon() : null,
    ahead: new Map(),
  };
  try {
    yield* walk(ctx);
  } finally {
    ctx.clock?.close();
  }
}

async function* walk(ctx: WalkContext): AsyncGenerator<readonly LocalEntry[]> {
  const { fs, opts } = ctx;
  let batch: LocalEntry[] = [];
  const stack: (RelPath | '')[] = [];
  if (opts.under === undefined) {
    stack.push('');
  } else {
    // A subtree below a symlinked folder is outside the tree: report nothing rather than follow the link.
    if ((await firstBadAncestor(fs, ctx.rootPath, opts.under)) !== undefined) return;
    const top = await observe(ctx, opts.under);
    if (top === undefined) return;
    batch.push(top);
    if (top.kind === 'folder') stack.push(opts.under);
  }
  while (stack.length > 0) {
    const dir = stack.pop() as RelPath | '';
    // The native reader's entries, or (without it, or for a folder it leaves to node:fs) the names to lstat here.
    const native = await observeFolderNative(ctx, dir);
    if (native !== undefined && 'skipped' in native) {
      // Its listing is the one its rows were found equal to (ScanOptions.listingMarks): only its subfolders.
      for (let i = native.skipped.length - 1; i >= 0; i--) stack.push(native.skipped[i] as RelPath);
      readAhead(ctx, stack);
      continue;
    }
    const names = native === undefined ? await listFolder(ctx, dir) : [];
    if (names === null) continue;
    const subdirs: RelPath[] = [];
    const listed: LocalEntry[] | undefined = opts.onListed === undefined ? undefined : [];
    let reported = 0;
    const windows = native === undefined ? Math.ceil(names.length / LSTAT_WINDOW) : 1;
    for (let w = 0; w < windows; w++) {
      for (const entry of native?.entries ?? (await observeNames(ctx, dir, names.slice(w * LSTAT_WINDOW, (w + 1) * LSTAT_WINDOW)))) {
        if (entry === undefined) continue;
        reported += 1;
        batch.push(entry);
        listed?.push(entry);
        if (entry.kind === 'folder') subdirs.push(entry.path);
        if (batch.length >= SCAN_BATCH_ENTRIES) {
          yield batch;
          batch = [];
          // The consumer wrote the batch meanwhile: a folder of 20,000 entries is 40 batches, not one turn.
          await giveTurn(ctx);
        }
      }
    }
    if (listed !== undefined) opts.onListed?.(dir, listed);
    if (native?.clean != null) opts.listingMarks?.clean(dir, native.clean, reported);
    for (let i = subdirs.length - 1; i >= 0; i--) stack.push(subdirs[i] as RelPath);
    readAhead(ctx, stack);
  }
  if (batch.length > 0) yield batch;
}

/** Start reading the next folders of the stack (its top) on the pool, once half of those asked for were taken (WALK_AHEAD). */
function readAhead(ctx: WalkContext, stack: readonly (RelPath | '')[]): void {
  const listAhead = ctx.addon?.listAhead;
  if (listAhead === undefined || !ctx.syncStat.on || !ctx.syncRead.on || ctx.ahead.size > WALK_AHEAD / 2) return;
  const dirs: (RelPath | '')[] = [];
  for (let i = stack.length - 1; i >= 0 && ctx.ahead.size + dirs.length < WALK_AHEAD; i--) {
    const dir = stack[i] as RelPath | '';
    if (!ctx.ahead.has(dir)) dirs.push(dir);
  }
  if (dirs.length === 0) return;
  let read: Promise<readonly (readonly [string, Float64Array] | number)[] | null>;
  try {
    // A rejection or a throw (N-API failed) reads those folders through node:fs, as a throw of list() does.
    read = listAhead(dirs.map((d) => ctx.abs(d))).catch(() => null);
  } catch {
    return;
  }
  dirs.forEach((dir, k) => ctx.ahead.set(dir, read.then((got) => got?.[k] ?? 0)));
}

/**
 * Observe some entries of one folder, in name order: every lstat at once (cheap, and the pool stays busy), then
 * the rest of each observation (ignore rules, the hash when one is needed) at most OBSERVE_CONCURRENCY at a time.
 */
async function observeNames(ctx: WalkContext, dir: RelPath | '', names: readonly string[]): Promise<(LocalEntry | undefined)[]> {
  const paths = names.map((name) => (isTempName(name) ? null : asRelPath(dir === '' ? name : `${dir}/${name}`)));
  const stats = ctx.syncStat.on ? lstatWindowSync(ctx, paths) : await Promise.all(paths.map((path) => (path === null ? undefined : lstatOrUnreadable(ctx, path))));
  const out: (LocalEntry | undefined)[] = new Array(names.length);
  for (let i = 0; i < names.length; i += OBSERVE_CONCURRENCY) {
    const part = await Promise.all(
      names.slice(i, i + OBSERVE_CONCURRENCY).map(async (name, k) => {
        const path = paths[i + k];
        if (path === null || path === undefined) {
          await leftoverTemp(ctx, asRelPath(dir === '' ? name : `${dir}/${name}`), name);
          return undefined;
        }
        const st = stats[i + k];
        return st === undefined ? undefined : observeStat(ctx, path, st);
      }),
    );
    for (let k = 0; k < part.length; k++) out[i + k] = part[k];
  }
  return out;
}

/** One window's lstats, synchronously, timed by ctx.syncStat. */
function lstatWindowSync(ctx: WalkContext, paths: readonly (RelPath | null)[]): (Stats | undefined)[] {
  const lstatSync = ctx.fs.lstatSync!;
  return timedSync(ctx, ctx.syncStat, () => paths.length, () =>
    paths.map((path) => {
      if (path === null) return undefined;
      try {
        return lstatSync(ctx.abs(path), { throwIfNoEntry: false });
      } catch (e) {
        // Gone, or a folder on the way replaced by a file, since the listing: as lstatOrUndefined.
        if (isGone(e)) return undefined;
        return unreadable(ctx, path, e, 'looking at');
      }
    }),
  );
}

/**
 * What the native reader made of one folder: its entries (undefined: ignored, a temp file, gone, unreadable) and,
 * when each of them equalled its known row, its listing mark (`clean`); or, when the caller's mark of that very
 * listing stands, nothing but the subfolders to walk (`skipped`).
 */
type NativeFolder = { readonly entries: (LocalEntry | undefined)[]; readonly clean: string | null } | { readonly skipped: readonly RelPath[] };

/** A folder's listing mark: the SHA-1 of its names and of every number the native reader gave for them. */
export function listingMark(joined: string, meta: Float64Array): string {
  return createHash('sha1').update(joined).update(meta).digest('base64');
}

/** Does an observed entry equal the row the caller knows for it (what put would leave as it is)? */
function matchesKnown(ctx: ScanContext, entry: LocalEntry): boolean {
  // A file is observed with its SHA-1 only when its known row had the same stat (observeQuick).
  if (entry.kind === 'file') return entry.sha1 !== null;
  const known = ctx.opts.known?.(entry.path);
  return known !== undefined && known.kind === entry.kind && known.sha1 === null && localUnchanged(known, entry);
}

/**
 * One folder read and lstat-ed by the native addon (walk-native.ts) in one synchronous call, timed for the lstats'
 * gate as a window of its entries, then observed as observeNames does; no Stats object per entry. undefined when
 * the folder is left to node:fs: no addon, the synchronous calls are off (not a local disk, or slow: a hung network
 * mount is never read on the main thread), the folder cannot be read (node:fs reads it again and reports why), or a
 * name in it is not UTF-8 (node:fs reads it as bytes). With ScanOptions.listingMarks, the listing's mark is made
 * first, and a folder whose mark stands is not observed at all (NativeFolder `skipped`).
 */
async function observeFolderNative(ctx: WalkContext, dir: RelPath | ''): Promise<NativeFolder | undefined> {
  const addon = ctx.addon;
  const ahead = ctx.ahead.get(dir);
  // Read ahead on the pool (readAhead): used even if the gates closed since, as it never held the main thread.
  if (ahead !== undefined) ctx.ahead.delete(dir);
  else if (addon === null || !ctx.syncStat.on || !ctx.syncRead.on) return undefined;
  else await giveTurn(ctx);
  const got =
    ahead !== undefined
      ? await ahead
      : timedSync(ctx, ctx.syncStat, (r) => (r === undefined || typeof r === 'number' ? 1 : r[1].length / WALK_FIELDS + 1), () => {
          try {
            return addon!.list(ctx.abs(dir));
          } catch {
            // The addon itself failed (out of memory in N-API): node:fs reads this folder.
            return 0;
          }
        });
  if (typeof got === 'number') return undefined;
  const [joined, meta] = got;
  const count = meta.length / WALK_FIELDS;
  const names = count === 0 ? [] : joined.split('\0');
  const marks = ctx.opts.listingMarks;
  const mark = marks === undefined ? null : listingMark(joined, meta);
  if (mark !== null && marks!.skip(dir, mark)) return { skipped: subfoldersOf(ctx, dir, names, meta) };
  let clean = mark !== null;
  const out: (LocalEntry | undefined)[] = new Array(count);
  const toHash: { i: number; path: RelPath; st: StatLike }[] = [];
  for (let i = 0; i < count; i++) {
    const name = names[i] as string;
    const path = asRelPath(dir === '' ? name : `${dir}/${name}`);
    const m = i * WALK_FIELDS;
    const code = meta[m] as number;
    if (isTempName(name)) {
      clean = false;
      await leftoverTemp(ctx, path, name);
    } else if (code < 0) {
      clean = false;
      // Gone since the listing, or cannot be looked at: as lstatWindowSync.
      const e = errnoError(-code, `lstat ${ctx.abs(path)}`);
      if (!isGone(e)) unreadable(ctx, path, e, 'looking at');
    } else {
      const st: StatLike = { size: meta[m + 1] as number, mtimeMs: mtimeMsOf(meta[m + 2] as number, meta[m + 3] as number), ino: meta[m + 4] as number };
      const quick = observeQuick(ctx, path, WALK_KINDS[code] ?? 'other', st);
      if (quick === null) {
        clean = false;
        toHash.push({ i, path, st });
      } else {
        out[i] = quick;
        if (clean && quick !== undefined && !matchesKnown(ctx, quick)) clean = false;
      }
    }
  }
  for (let k = 0; k < toHash.length; k += OBSERVE_CONCURRENCY) {
    const part = toHash.slice(k, k + OBSERVE_CONCURRENCY);
    const entries = await Promise.all(part.map((h) => hashEntry(ctx, h.path, h.st)));
    part.forEach((h, j) => (out[h.i] = entries[j]));
  }
  return { entries: out, clean: clean ? mark : null };
}

/** The subfolders of a skipped listing the walk goes into: those observeQuick would report as folders. */
function subfoldersOf(ctx: ScanContext, dir: RelPath | '', names: readonly string[], meta: Float64Array): RelPath[] {
  const out: RelPath[] = [];
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    if (WALK_KINDS[meta[i * WALK_FIELDS] as number] !== 'folder' || isTempName(name)) continue;
    const path = asRelPath(dir === '' ? name : `${dir}/${name}`);
    if (!ctx.opts.isIgnored(path, true)) out.push(path);
  }
  return out;
}

/** Let the event loop in when the walk has held it for WALK_TURN_MS. */
async function giveTurn(ctx: WalkContext): Promise<void> {
  if (performance.now() - ctx.turn.at < WALK_TURN_MS) return;
  await new Promise<void>((resolve) => setImmediate(resolve));
  ctx.turn.at = performance.now();
}

/** `work` (synchronous calls on `entries(result)` entries) timed for `gate`. */
function timedSync<T>(ctx: WalkContext, gate: QuickGate, entries: (result: T | undefined) => number, work: () => T): T {
  const busy = ctx.clock?.busyNs();
  const t0 = performance.now();
  let result: T | undefined;
  try {
    result = work();
    return result;
  } finally {
    const ms = performance.now() - t0;
    const n = Math.max(1, entries(result));
    // A slow window: did it sleep (the disk answered) or wait for the CPU (a loaded machine)? Only sleep counts.
    gate.record(n, ctx.clock === undefined || ms <= n * gate.maxMsEach ? ms : ctx.clock.sleptMs(busy, ms));
  }
}

/**
 * A folder's names, read synchronously while the walk's lstats are and while the reads are quick (ctx.syncRead, as
 * the lstats' gate: QUICK_SLOW_IN_A_ROW reads that slept send the rest to the pool): a cached folder is read in
 * microseconds, and through the thread pool each of a tree's thousands of folders cost an open, a read and a close
 * handed to a pool thread and back. Measured on 100,000 files in 2,000 folders: 0.15 s less CPU per `sync --once`.
 */
async function readNames(ctx: WalkContext, dir: RelPath | ''): Promise<readonly (string | Buffer)[]> {
  const readdirSync = ctx.fs.readdirSync;
  if (!ctx.syncStat.on || !ctx.syncRead.on || readdirSync === undefined) return ctx.fs.promises.readdir(ctx.abs(dir));
  await giveTurn(ctx);
  // One entry's worth of time per name, and one for the folder.
  return timedSync(ctx, ctx.syncRead, (names) => (names?.length ?? 0) + 1, () => readdirSync(ctx.abs(dir)));
}

/**
 * lstat of one entry; undefined when it is gone, or when it cannot be looked at (EACCES on a folder without
 * search permission, ENAMETOOLONG past PATH_MAX, ELOOP, EIO...: given to onUnreadable, the rest of the walk goes on).
 */
async function lstatOrUnreadable(ctx: ScanContext, path: RelPath): Promise<Stats | undefined> {
  try {
    return await lstatOrUndefined(ctx.fs, ctx.abs(path));
  } catch (e) {
    return unreadable(ctx, path, e, 'looking at');
  }
}

/** An entry that cannot be read: onUnreadable hears of it (its row is kept: unknown, not gone); without it, the scan fails. */
function unreadable(ctx: ScanContext, path: RelPath, e: unknown, action: string): undefined {
  // The parked path is shown beside the message: a path past PATH_MAX would crowd out the reason.
  const err = classifyFsError(e, { action, path: path.length > 120 ? `…${path.slice(-120)}` : path });
  if (ctx.opts.onUnreadable === undefined || err.disposition === 'fatal') throw err;
  ctx.opts.onUnreadable(path, err);
  return undefined;
}

/**
 * The name of a path whose bytes are not UTF-8, as it is shown and parked: the valid parts escaped (escapeText),
 * each byte that is not part of a valid UTF-8 sequence as \xNN. A name decoded with replacement characters would
 * name another file, or none.
 */
export function escapedNameBytes(bytes: Buffer): string {
  let out = '';
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i] as number;
    const len = b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    const seq = len === 0 ? null : bytes.subarray(i, i + len);
    if (seq !== null && seq.length === len && isUtf8(seq)) {
      out += escapeText(seq.toString('utf8'));
      i += len;
    } else {
      out += `\\x${b.toString(16).padStart(2, '0')}`;
      i += 1;
    }
  }
  return out;
}

/** The names in a folder, sorted; [] when it is gone; null when it cannot be read (after onUnreadable). */
async function listFolder(ctx: WalkContext, dir: RelPath | ''): Promise<string[] | null> {
  try {
    // Read as bytes: a name that is not UTF-8 would otherwise come back with replacement characters, and its
    // lstat would find nothing, so the file would be dropped without a word.
    // As strings first: a Buffer per name cost the main thread about 3 us a name (0.56 s of a no-change run's
    // 2.6 s of CPU at 200,000 files). A byte that is not UTF-8 decodes as U+FFFD; only a folder with that
    // character in a name is read again as bytes.
    const quick = await readNames(ctx, dir);
    if (!quick.some((n) => String(n).includes('\uFFFD'))) return quick.map(String).sort();
    const names: string[] = [];
    for (const raw of await ctx.fs.promises.readdir(ctx.abs(dir), { encoding: 'buffer' })) {
      const bytes = Buffer.isBuffer(raw) ? raw : Buffer.from(String(raw));
      if (isUtf8(bytes)) names.push(bytes.toString('utf8'));
      else notUtf8(ctx, dir, bytes);
    }
    return names.sort();
  } catch (e) {
    // Gone or replaced by a file since we saw it: the next scan sees what is there now.
    if (isGone(e)) return [];
    const err = classifyFsError(e, { action: 'reading the folder', path: dir === '' ? ctx.abs('') : dir });
    if (dir === '' || ctx.opts.onUnreadable === undefined) throw err;
    ctx.opts.onUnreadable(asRelPath(dir), err);
    return null;
  }
}

/** A name that is not UTF-8 cannot be synced (Box names are Unicode): parked under its escaped name, never dropped in silence. */
function notUtf8(ctx: ScanContext, dir: RelPath | '', bytes: Buffer): void {
  const shown = escapedNameBytes(bytes);
  const path = asRelPath(dir === '' ? shown : `${dir}/${shown}`);
  const err = new SyncError({
    code: LOCAL_NAME_NOT_UTF8,
    disposition: 'skip',
    message: 'this name is not valid UTF-8 (Box names are Unicode); it is not synced until it is renamed',
    details: { path },
  });
  if (ctx.opts.onUnreadable === undefined) throw err;
  ctx.opts.onUnreadable(path, err);
}

/** lstat, ignore rules, and the SHA-1 (kept from `known` when size, mtime and inode match). */
async function observe(ctx: ScanContext, path: RelPath): Promise<LocalEntry | undefined> {
  const st = await lstatOrUnreadable(ctx, path);
  return st === undefined ? undefined : observeStat(ctx, path, st);
}

async function observeStat(ctx: ScanContext, path: RelPath, st: Stats): Promise<LocalEntry | undefined> {
  const quick = observeQuick(ctx, path, kindOf(st), st);
  return quick === null ? hashEntry(ctx, path, st) : quick;
}

/** What observeStat decides without waiting: the entry, undefined (ignored), or null: the file must be hashed. */
function observeQuick(ctx: ScanContext, path: RelPath, kind: LocalKind, st: StatLike): LocalEntry | undefined | null {
  const { opts } = ctx;
  if (opts.isIgnored(path, kind === 'folder')) return undefined;
  if (kind !== 'file') return entryOf(path, kind, st, null);
  const known = opts.known?.(path);
  if (known !== undefined && known.kind === 'file' && known.sha1 !== null && known.inode === st.ino && known.sizeBytes === st.size && known.mtimeMs === st.mtimeMs) {
    // The same as entryOf(path, kind, st, known.sha1) would make (localUnchanged): the row itself, one object less a file.
    return known.path === path ? known : entryOf(path, kind, st, known.sha1);
  }
  return opts.hash === true ? null : entryOf(path, kind, st, null);
}

/** A file's entry with its SHA-1, read now (null when it changed while read). */
async function hashEntry(ctx: ScanContext, path: RelPath, st: StatLike): Promise<LocalEntry | undefined> {
  const { fs, abs, opts } = ctx;
  try {
    const sha1 = await sha1File(fs, abs(path), st.size);
    // Written to while we read it: the hash matches no state of the file; the next scan hashes it again.
    const after = await lstatOrUndefined(fs, abs(path));
    if (after === undefined) return undefined;
    const stable = localUnchanged(statSeen(st), statSeen(after));
    return entryFromStats(path, after, stable ? sha1 : null);
  } catch (e) {
    if (errnoOf(e) === 'ENOENT') return undefined;
    const err = classifyFsError(e, { action: 'hashing', path });
    if (opts.onUnreadable === undefined) throw err;
    opts.onUnreadable(path, err);
    return entryOf(path, 'file', st, null);
  }
}

/**
 * A temp-prefixed name met by the walk. One of ours (a partial download of a killed run) is unlinked when the
 * scan may remove temps; any other file by such a name is a user's, never removed: it is reported
 * (onForeignTemp). A folder or anything else by that name is left alone.
 */
async function leftoverTemp(ctx: ScanContext, path: RelPath, name: string): Promise<void> {
  const ours = ctx.isOurTemp(name);
  if (ours && ctx.opts.removeTemps !== true) return;
  const abs = ctx.abs(path);
  const st = await lstatOrUndefined(ctx.fs, abs);
  if (st === undefined || !st.isFile()) return;
  if (ours) await ctx.fs.promises.unlink(abs).catch(() => undefined);
  else ctx.opts.onForeignTemp?.(path);
}
