/**
 * The journal calls the daemon makes on its main thread, timed by CPU time (process.cpuUsage: what load does not
 * inflate), at the million (issue 29 point 8):
 *
 *   node --import tsx test/bench/journal-stalls.ts            # BENCH_ROWS (default 1,000,000), BENCH_BIG (20,000)
 *
 * A synthetic journal: BENCH_ROWS synced and local rows, 50 files a folder, plus one folder of BENCH_BIG files.
 * Printed, each as the CPU time of one call in one piece and the longest piece when it is made in slices or in
 * a process of its own:
 * - the exact in-sync count (countSynced) and the same in slices (countSyncedSteps + runSliced);
 * - the big folder's children on one tree (localChildren) and in pages (localChildrenPages);
 * - the maintenance's upkeep after 50,000 writes: `PRAGMA optimize` + `wal_checkpoint(TRUNCATE)` on the main
 *   connection (maintain), and what is left there when the check process did the rest (maintainOffThread: the
 *   main thread's part, upkeepMs).
 */
import { join } from 'node:path';
import { asRelPath, asRemoteId, asRootId, type LocalEntry, type SyncedEntry } from '../../src/core/model.js';
import { runSliced } from '../../src/core/slices.js';
import { openJournal } from '../../src/journal/open-journal.js';
import type { Journal } from '../../src/ports/journal.js';
import { makeTempDir } from '../support/tmp.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const BIG = Number(process.env.BENCH_BIG ?? 20_000);
const R = asRootId('r');

const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
function timed<T>(what: string, fn: () => T): T {
  const t0 = cpuMs();
  const v = fn();
  console.log(`${what}: ${(cpuMs() - t0).toFixed(0)} ms CPU`);
  return v;
}

const file = (path: string, i: number): { local: LocalEntry; synced: SyncedEntry } => ({
  local: { path: asRelPath(path), kind: 'file', inode: i, sizeBytes: 10, mtimeMs: 1_700_000_000_000, sha1: 'a'.repeat(40) },
  synced: {
    path: asRelPath(path),
    remoteId: asRemoteId(`f${i}`),
    kind: 'file',
    etag: '0',
    sha1: 'a'.repeat(40),
    versionId: null,
    sizeBytes: 10,
    inode: i,
    mtimeMs: 1_700_000_000_000,
    url: null,
  } as SyncedEntry,
});

function fill(j: Journal): void {
  let i = 0;
  const put = (path: string): void => {
    const e = file(path, ++i);
    j.putLocal(R, e.local);
    j.putSynced(R, e.synced);
  };
  for (let start = 0; start < ROWS; start += 50_000) {
    j.transaction(() => {
      for (let n = start; n < Math.min(ROWS, start + 50_000); n++) put(`d${Math.floor(n / 50)}/f${n % 50}.txt`);
    });
  }
  j.transaction(() => {
    for (let n = 0; n < BIG; n++) put(`big/f${n}.txt`);
  });
}

async function main(): Promise<void> {
  const tmp = await makeTempDir('boxsync-journal-stalls-');
  const path = join(tmp.dir, 'journal.db');
  try {
    let { journal: j } = openJournal(path);
    const t0 = Date.now();
    fill(j);
    j.close();
    console.log(`built ${ROWS + BIG} rows on each tree in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    ({ journal: j } = openJournal(path));

    const whole = timed('countSynced, one call', () => j.countSynced(R));
    const sliced = await runSliced(j.countSyncedSteps!(R));
    if (!sliced.done || sliced.value.files !== whole.files) throw new Error('the sliced count differs');
    console.log(`countSyncedSteps in slices: ${sliced.stats.slices} slices, the longest ${sliced.stats.longestMs.toFixed(0)} ms (wall), ${sliced.stats.workMs.toFixed(0)} ms in all`);
    let longestStep = 0;
    let allSteps = 0;
    for (const steps = j.countSyncedSteps!(R); ; ) {
      const c0 = cpuMs();
      const r = steps.next();
      const ms = cpuMs() - c0;
      longestStep = Math.max(longestStep, ms);
      allSteps += ms;
      if (r.done) break;
    }
    console.log(`countSyncedSteps: the longest step ${longestStep.toFixed(0)} ms CPU, ${allSteps.toFixed(0)} ms CPU in all`);

    const kids = timed(`localChildren of a folder of ${BIG}, one call`, () => j.localChildren(R, asRelPath('big')).length);
    let longest = 0;
    let paged = 0;
    for (const it = j.localChildrenPages!(R, asRelPath('big'))[Symbol.iterator](); ; ) {
      const c0 = cpuMs();
      const r = it.next();
      longest = Math.max(longest, cpuMs() - c0);
      if (r.done) break;
      paged += r.value.length;
    }
    if (paged !== kids) throw new Error('the pages differ');
    console.log(`localChildrenPages: the longest page ${longest.toFixed(0)} ms CPU`);
    timed(`syncedChildren of a folder of ${BIG}, one call`, () => j.syncedChildren(R, asRelPath('big')).length);

    const churn = (from: number): void =>
      j.transaction(() => {
        for (let n = 0; n < 50_000; n++) j.putSynced(R, file(`churn/f${from + n}.txt`, 10_000_000 + from + n).synced);
      });
    churn(0);
    timed('maintain (PRAGMA optimize + wal_checkpoint(TRUNCATE)) on the main thread', () => j.maintain!());
    churn(50_000);
    const c0 = cpuMs();
    const t = await j.maintainOffThread!();
    console.log(
      `maintainOffThread: check + optimize + PASSIVE checkpoint in its own process ${t.checkMs.toFixed(0)} ms (wall); ` +
        `left on the main thread ${t.upkeepMs.toFixed(0)} ms (wall); main-thread CPU over the whole call ${(cpuMs() - c0).toFixed(0)} ms`,
    );
    j.close();
  } finally {
    await tmp.cleanup();
  }
}

await main();
