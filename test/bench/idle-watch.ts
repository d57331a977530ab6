/**
 * The idle daemon's memory by watcher kind (issue 29 point 6), back to back on one prepared tree:
 *
 *   node --import tsx test/bench/idle-watch.ts
 *
 * BENCH_FILES files in BENCH_FOLDERS folders (daemon.bench.ts's tree: default here 100,000 in 10,000) are made
 * on disk and on an in-process box-server, so a daemon's first pass only links them. Then, for each round, one
 * daemon per kind in IDLE_KINDS (default "inotify,dirs") is started on that same state (bin/boxsync.js: the build,
 * or the sources through tsx), waited for until idle after its first pass, left idle IDLE_SEC seconds (default 20)
 * and sampled: VmRSS, VmHWM, and the inotify watches in its /proc/PID/fdinfo. Rounds: IDLE_ROUNDS (default 2),
 * alternating the kinds, since the machine is shared and loaded, after a round 0 whose first pass links the tree.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

process.env.BENCH_FILES ??= '100000';
process.env.BENCH_FOLDERS ??= '10000';
const { makeTree, seedBox, startDaemon, settled, cpuTicks } = await import('./daemon.bench.js');
const { startBoxServer } = await import('../../src/box-server/index.js');
const { countInotifyWatches } = await import('../../src/local/watcher-inotify-usage.js');
const { makeTempDir } = await import('../support/tmp.js');

const FILES = Number(process.env.BENCH_FILES);
const FOLDERS = Number(process.env.BENCH_FOLDERS);
const KINDS = (process.env.IDLE_KINDS ?? 'inotify,dirs').split(',');
const ROUNDS = Number(process.env.IDLE_ROUNDS ?? 2);
const IDLE_SEC = Number(process.env.IDLE_SEC ?? 20);
const SETTLE_MAX_MS = 1000 * Number(process.env.IDLE_SETTLE_MAX_SEC ?? 1800);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function statusKiB(pid: number, key: string): Promise<number> {
  const s = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`${key}:\\s+(\\d+)`).exec(s)?.[1] ?? NaN);
}

const { dir, cleanup } = await makeTempDir('boxsync-bench-idle-watch-');
const srv = await startBoxServer({ port: 0, tokens: ['T'], longPollTimeoutMs: 30_000 });
try {
  const mirror = join(dir, 'Box');
  let t0 = Date.now();
  await makeTree(mirror);
  const { rootId } = seedBox(srv.control.as('1'), 'Mirror', FILES, Math.ceil(FILES / FOLDERS));
  console.log(`tree: ${FILES} files in ${FOLDERS} folders, on disk and on box-server in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  // Round 0 is the first pass, which links the tree into a new journal: its figures are not comparable.
  for (let round = 0; round <= ROUNDS; round++) {
    for (const kind of round === 0 ? KINDS.slice(0, 1) : KINDS) {
      const daemon = await startDaemon({ srv, dir: join(dir, 'state'), remoteId: rootId, mirror, extra: { daemon: { watcher: kind } } });
      try {
        t0 = Date.now();
        let ok = false;
        while (Date.now() - t0 < SETTLE_MAX_MS && daemon.child.exitCode === null) {
          if ((ok = await settled(daemon))) break;
          await sleep(500);
        }
        if (!ok) {
          console.log(`${kind}: not idle within ${SETTLE_MAX_MS / 1000} s:\n${daemon.output()}`);
          continue;
        }
        const firstSec = (Date.now() - t0) / 1000;
        const pid = daemon.child.pid!;
        const c0 = await cpuTicks(pid);
        await sleep(IDLE_SEC * 1000);
        const c1 = await cpuTicks(pid);
        const s = await daemon.status();
        const w = s.watchers[0]!;
        const rss = await statusKiB(pid, 'VmRSS');
        const hwm = await statusKiB(pid, 'VmHWM');
        console.log(
          `round ${round === 0 ? '0 (first pass, not compared)' : round} ${w.kind.padEnd(8)} idle RSS ${(rss / 1024).toFixed(0)} MiB (peak ${(hwm / 1024).toFixed(0)} MiB), ` +
            `inotify watches ${await countInotifyWatches(pid)} (health: ${w.health.state === 'ok' ? `ok, ${w.health.watches}` : w.health.state}), ` +
            `${(((c1 - c0) / 100 / IDLE_SEC) * 100).toFixed(1)} % CPU idle, ready in ${firstSec.toFixed(0)} s`,
        );
      } finally {
        await daemon.stop();
      }
    }
  }
} finally {
  await srv.close();
  await cleanup();
}
