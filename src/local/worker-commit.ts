/**
 * The commit into place of a new downloaded file on the file worker thread that wrote its temp file (issue 29
 * point 4): the job that creates, writes and fsyncs the temp file (file-workers.ts, `put` and `unzip`) also sets
 * Box's mtime on it, checks the guards and links it under its final name, so the main thread only records the
 * result (LocalFs.commitTemp). Only for a file that must be new there (LocalGuard `absent`) or replaces the one there
 * (guard `file`: worker-replace.ts, its own guards) and whose SHA-1 Box listed; a big file written by the main thread
 * (worker-temp-file.ts FLUSH_BYTES) and a pool without threads go the main thread's way, as before.
 *
 * The same guards as the main thread's path (local-fs.ts commitTemp), in the same order:
 * - the bytes: the job hashes them (an archive entry is hashed by the job already) and commits nothing unless they
 *   have the SHA-1 Box listed (the download checks it again and fails as before);
 * - containment: every folder from the root down is a real folder (lstat each), before the temp file is created
 *   and again before the link, so nothing is ever made through a symlink;
 * - name twins: no sibling Box would take for the same name (case, Unicode), from a listing of the folder kept per
 *   thread with its stamp (inode, mtime, ctime), as name-twins.ts keeps one for the main thread: the thread's own
 *   changes to the folder (its temp files, its links) re-stamp it in the same synchronous step, so a folder is
 *   read again only when someone else changed it; the same price as name-twins.ts (a twin made in the instant
 *   between the thread's change and its stat is taken for the thread's own; the planner then reports the pair);
 * - the target: link(2), which fails with EEXIST rather than replace a file the user made meanwhile (without hard
 *   links: lstat, then rename, the main thread's fallback). Then the temp name is removed.
 * A refusal removes the temp file and says why (CommitOutcome); LocalFs.commitTemp turns it into the main thread's
 * error (`local_changed` replan, `symlink_in_path` skip), so the next plan sees the user's file.
 *
 * A kill at any moment leaves at most a temp file (removed by the next full scan) or the whole fsynced file under
 * its final name (link is atomic and comes after the fsync): never a part of one.
 */
import { TEMP_PREFIX } from './temp-name.js';
import { REPLACE_CODE } from './worker-replace.js';

/** What a commit job did: the file is in place (its stat), or nothing was put there and why. */
export type CommitOutcome =
  | { readonly entry: { readonly ino: number; readonly size: number; readonly mtimeMs: number } }
  | { readonly refused: 'ancestor' | 'twin' | 'exists' | 'changed' | 'error'; readonly twin?: string; readonly message?: string; readonly code?: string };

/** Folders whose listing a thread keeps (as name-twins.ts). */
const MAX_FOLDERS = 256;
/** A folder with more names than this is read again at most once a second when its stamp moved (as name-twins.ts). */
const SMALL_FOLDER = 2_000;
const BIG_FOLDER_REREAD_MS = 1_000;

/**
 * The worker's side (plain CommonJS inside file-workers.ts's WORKER_CODE, which defines `fs` and `createHash`).
 * `fold` is core/paths.ts foldKey; `isTemp` is temp-name.ts isTempName.
 */
export const COMMIT_CODE = `
const NO_HARDLINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EMLINK']);
const fold = (s) => (/^[\\x00-\\x7f]*$/.test(s) ? s.toLowerCase() : s.normalize('NFC').toUpperCase().toLowerCase().normalize('NFC'));
const isTemp = (n) => n.startsWith(${JSON.stringify(TEMP_PREFIX)});
const dirOf = (p) => p.slice(0, p.lastIndexOf('/')) || '/';
const listings = new Map();
function commitReady(c, d, known) {
  return known === c.sha1 || createHash('sha1').update(d).digest('hex') === c.sha1;
}
function stampOf(dir) {
  try {
    const st = fs.statSync(dir);
    return st.ino + ':' + st.mtimeMs + ':' + st.ctimeMs;
  } catch {
    return undefined;
  }
}
function ancestorsOk(c) {
  const parts = c.rel.split('/');
  let at = c.root;
  for (let i = 0; i < parts.length - 1; i++) {
    at = at + '/' + parts[i];
    try {
      if (!fs.lstatSync(at).isDirectory()) return false;
    } catch {
      return false;
    }
  }
  return true;
}
function listingOf(dir) {
  const stamp = stampOf(dir);
  if (stamp === undefined) return undefined;
  const had = listings.get(dir);
  if (had !== undefined && had.stamp === stamp) return had;
  if (had !== undefined && had.count > ${SMALL_FOLDER} && Date.now() - had.readAt < ${BIG_FOLDER_REREAD_MS}) return had;
  let names;
  try {
    names = fs.readdirSync(dir);
  } catch {
    return undefined;
  }
  const byKey = new Map();
  for (const n of names) {
    if (isTemp(n)) continue;
    const k = fold(n);
    const list = byKey.get(k);
    if (list === undefined) byKey.set(k, [n]);
    else list.push(n);
  }
  const l = { stamp, readAt: Date.now(), count: names.length, byKey };
  listings.delete(dir);
  listings.set(dir, l);
  if (listings.size > ${MAX_FOLDERS}) listings.delete(listings.keys().next().value);
  return l;
}
function beforeCreate(c) {
  return ancestorsOk(c) ? undefined : { refused: 'ancestor' };
}
// Creates the temp file; the folder's kept listing follows the thread's own change.
function createOwn(c, path) {
  const dir = dirOf(path);
  const before = stampOf(dir);
  const fd = fs.openSync(path, 'wx', 0o666);
  const l = listings.get(dir);
  if (l !== undefined && l.stamp === before) {
    const after = stampOf(dir);
    if (after !== undefined) l.stamp = after;
  }
  return fd;
}
// Box's mtime on the open file (before its fsync), and the stat the file will have under its final name.
function stampFile(fd, c) {
  if (c.mtimeMs !== null) fs.futimesSync(fd, new Date(), new Date(c.mtimeMs));
  const st = fs.fstatSync(fd);
  return { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs };
}
function drop(temp, outcome) {
  try { fs.unlinkSync(temp); } catch {}
  return outcome;
}
function commitInPlace(c, temp, st) {
  if (c.replace !== undefined) return commitReplace(c, temp, st);
  try {
    if (!ancestorsOk(c)) return drop(temp, { refused: 'ancestor' });
    const dir = dirOf(c.target);
    const name = c.target.slice(dir.length + 1);
    const l = listingOf(dir);
    const twin = l === undefined ? undefined : (l.byKey.get(fold(name)) || []).find((n) => n !== name);
    if (twin !== undefined) return drop(temp, { refused: 'twin', twin });
    try {
      fs.linkSync(temp, c.target);
    } catch (e) {
      if (e && e.code === 'EEXIST') return drop(temp, { refused: 'exists' });
      if (!(e && NO_HARDLINKS.has(e.code))) throw e;
      let there = true;
      try { fs.lstatSync(c.target); } catch (e2) { if (e2 && (e2.code === 'ENOENT' || e2.code === 'ENOTDIR')) there = false; else throw e2; }
      if (there) return drop(temp, { refused: 'exists' });
      fs.renameSync(temp, c.target);
    }
    try { fs.unlinkSync(temp); } catch {}
    if (l !== undefined) {
      const k = fold(name);
      const names = l.byKey.get(k) || [];
      if (!names.includes(name)) l.byKey.set(k, [...names, name]);
      const after = stampOf(dir);
      if (after !== undefined) l.stamp = after;
    }
    return { entry: st };
  } catch (e) {
    return drop(temp, { refused: 'error', message: String(e && e.message), code: e && e.code });
  }
}
${REPLACE_CODE}
`;
