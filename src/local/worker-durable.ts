/**
 * One durability point for a batch of temp files on a file worker thread (issue 29 point 4): a job's temp file is
 * written and stamped without an fsync of its own. When many are in flight on the thread (MIN_BATCH), it gathers the
 * files written while the previous durability point ran (group commit: the batch grows with the disk's latency, up
 * to every file in flight) and makes them durable at once with syncfs(2) (native/syncfs.c, syncfs-native.ts) on their file system, then closes them,
 * links each under its final name (worker-commit.ts; a replace: renames it over, worker-replace.ts) and answers. So the rule stays: no file is under its final name,
 * and none is answered as written (so none is recorded as synced in the journal), before its bytes are on disk; a
 * kill at any moment leaves temp files or whole files.
 *
 * syncfs(2) is used only where it is trusted (the addon checks: Linux 5.8 or later, which reports write-back errors
 * to it; ext2/3/4, XFS, Btrfs or F2FS). A file system it refuses is remembered (by device) and its files are fsynced
 * each, in libuv's pool, as before; so is every file of a batch whose syncfs(2) failed (each file then gets its own
 * error). Without the addon the thread fsyncs each file as soon as it is written, exactly as before.
 *
 * With workerData.trace the thread posts what it did, in order (tests: test/local/worker-durable.test.ts).
 */

/** Most files made durable by one syncfs(2) (a bound on what one answer waits for). */
export const MAX_BATCH = 512;
/**
 * Files waiting on a thread for their durability point from which a syncfs(2) is used; below it each is fsynced
 * at once. Measured (README, Performance): with the default 16 small files in flight a batch held about 10 files
 * and the batches, one after the other, set the pace (20,000 files: wall 40 s against 18 s with an fsync each);
 * with 128 in flight a batch held about 90 and cost less CPU and wall than the fsyncs.
 */
export const MIN_BATCH = 24;

/**
 * The worker's side (plain CommonJS inside file-workers.ts's WORKER_CODE, which defines `fs` and `parentPort`).
 * `whenDurable(fd, path, created, cb)`: cb(error or null) once the file open on fd is on disk.
 */
export const DURABLE_CODE = `
const durableData = require('node:worker_threads').workerData || {};
const trace = durableData.trace === true ? (t) => parentPort.postMessage({ trace: t }) : () => {};
let syncfsAddon = null;
if (typeof durableData.syncfsAddon === 'string') {
  try { syncfsAddon = require(durableData.syncfsAddon); } catch {}
}
const { EOPNOTSUPP, ENOSYS } = require('node:os').constants.errno;
const untrusted = new Set();
let waiting = [];
let syncing = false;
let scheduled = false;
let fsyncing = 0;
function fsyncOne(w, done) {
  fsyncing++;
  fs.fsync(w.fd, (e) => {
    fsyncing--;
    w.err = e || null;
    trace({ op: 'fsync', paths: [w.path] });
    done();
  });
}
// created: the job opened fd just before its writes (so syncfs(2) through the batch's first fd reports write-back
// errors of every file in the batch: each was opened after it). Anything else is fsynced on its own.
function whenDurable(fd, path, created, cb) {
  if (syncfsAddon === null || !created || (!syncing && fsyncing + waiting.length + 1 < ${MIN_BATCH})) {
    const w = { fd, path, err: null };
    return fsyncOne(w, () => cb(w.err));
  }
  waiting.push({ fd, path, cb, err: null });
  schedule();
}
function schedule() {
  if (syncing || scheduled || waiting.length === 0) return;
  scheduled = true;
  setImmediate(flush);
}
function flush() {
  scheduled = false;
  const batch = waiting.slice(0, ${MAX_BATCH});
  waiting = waiting.slice(batch.length);
  syncing = true;
  const groups = new Map();
  for (const w of batch) {
    let dev = null;
    try { dev = fs.fstatSync(w.fd).dev; } catch {}
    const key = dev === null || untrusted.has(dev) ? 'each:' + groups.size : dev;
    const g = groups.get(key);
    if (g === undefined) groups.set(key, { dev: typeof key === 'number' ? dev : null, files: [w] });
    else g.files.push(w);
  }
  let left = groups.size;
  const groupDone = () => {
    if (--left > 0) return;
    syncing = false;
    for (const w of batch) w.cb(w.err);
    schedule();
  };
  for (const g of groups.values()) {
    const each = () => {
      let n = g.files.length;
      for (const w of g.files) fsyncOne(w, () => { if (--n === 0) groupDone(); });
    };
    if (g.dev === null) { each(); continue; }
    try {
      syncfsAddon.syncfs(g.files[0].fd, (errno) => {
        if (errno === 0) {
          trace({ op: 'syncfs', paths: g.files.map((w) => w.path) });
          return groupDone();
        }
        if (errno === EOPNOTSUPP || errno === ENOSYS) untrusted.add(g.dev);
        each();
      });
    } catch {
      // The addon could not start the call (N-API failed): this thread fsyncs each file from now on.
      syncfsAddon = null;
      each();
    }
  }
}
`;
