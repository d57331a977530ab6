/**
 * The longest event-loop stall of an idle daemon on a large mirror (issue 29 points 6 and 8):
 *
 *   node --max-old-space-size=8192 --import tsx test/bench/idle-stall.ts
 *
 * A synced mirror of BENCH_FILES files (default 1,000,000, 10 a folder), built by journal-fixture.ts without
 * running a first mirror; then `boxsync daemon` (bin/boxsync.js) on it. From its start, its control socket is
 * asked for `status` every STALL_POLL_MS (default 100 ms) with one request in flight at a time, and the time each
 * answer took is kept. The daemon's first pass is done when a status says so (daemon-ready.ts); every answer from
 * then on was asked while the daemon was idle, and its idle journal check (daemon/lifecycle/convergence-watch.ts)
 * starts right then. Printed after IDLE_SEC seconds (default 60) of idle:
 * - the longest answer while idle (a status answered late is the event loop blocked: nothing else ran either);
 * - the daemon's own `eventLoop` figures (monitorEventLoopDelay: the longest block since start, first pass
 *   included, and in the last minute);
 * - its log lines about the idle check (how long it took, in how many slices).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { getHeapStatistics } from 'node:v8';
import { startBoxServer } from '../../src/box-server/index.js';
import { sendControl } from '../../src/daemon/control/control-client.js';
import type { DaemonStatus } from '../../src/daemon/control/control-protocol.js';
import { repoRoot } from '../support/cli.js';
import { makeTempDir } from '../support/tmp.js';
import { firstPassDone } from './daemon-ready.js';
import { buildSyncedFixture } from './journal-fixture.js';

const FILES = Number(process.env.BENCH_FILES ?? 1_000_000);
const PER_FOLDER = Number(process.env.BENCH_PER_FOLDER ?? 10);
const IDLE_SEC = Number(process.env.IDLE_SEC ?? 60);
const POLL_MS = Number(process.env.STALL_POLL_MS ?? 100);
const READY_BOUND_MS = 120_000 + FILES * 2;
const TOKEN = 'T';
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const fmt = (n: number): string => n.toLocaleString('en-US');

const heapMiB = getHeapStatistics().heap_size_limit / 2 ** 20;
if ((FILES * 3.6 * 1024) / 2 ** 20 + 300 > heapMiB) {
  console.log(`box-server needs more heap for ${fmt(FILES)} files than this process has (${Math.round(heapMiB)} MiB): run with node --max-old-space-size=8192`);
  process.exit(2);
}

const { dir, cleanup } = await makeTempDir('boxsync-bench-idle-stall-');
const srv = await startBoxServer({ port: 0, tokens: [TOKEN], longPollTimeoutMs: 30_000 });
try {
  const t0 = performance.now();
  const progress = (n: number): void => console.log(`  fixture: ${fmt(n)} files after ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  const fx = await buildSyncedFixture({ srv, token: TOKEN, dir, files: FILES, perFolder: PER_FOLDER, configExtra: { log: { level: 'info' } }, progress });
  console.log(`${fmt(fx.files)} files / ${fmt(fx.folders)} folders: fixture in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  const socketPath = join(dir, 'control.sock');
  const started = performance.now();
  const child = spawn(process.execPath, [join(repoRoot, 'bin', 'boxsync.js'), 'daemon', '--config', fx.configFile], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, BOXSYNC_LOG_LEVEL: 'info' },
  });
  const lines: string[] = [];
  let partial = '';
  const keep = (d: Buffer): void => {
    const all = (partial + d.toString()).split('\n');
    partial = all.pop()!;
    for (const l of all) if (/idle check|out of sync|event loop/i.test(l)) lines.push(l.slice(0, 400));
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<void>((r) => child.on('close', () => r()));
  try {
    let idleSinceMs: number | null = null;
    let longestIdle = { ms: 0, atSec: 0 };
    // The first idle answer was asked before the first pass ended (it straddles it): the longest after it is the idle daemon's own.
    let longestAfterFirst = 0;
    let longestBefore = 0;
    let answers = 0;
    let last: DaemonStatus | null = null;
    while (child.exitCode === null) {
      const now = performance.now();
      if (idleSinceMs === null && now - started > READY_BOUND_MS) break;
      if (idleSinceMs !== null && now - idleSinceMs > IDLE_SEC * 1000) break;
      const s = await sendControl<DaemonStatus>(socketPath, { verb: 'status' }, 600_000).catch(() => null);
      const took = performance.now() - now;
      if (s !== null) {
        last = s;
        if (idleSinceMs === null && firstPassDone(s)) {
          idleSinceMs = now;
          console.log(`first pass done ${((now - started) / 1000).toFixed(1)} s after start; its status took ${took.toFixed(0)} ms`);
        }
        if (idleSinceMs !== null) {
          answers++;
          if (answers > 1) longestAfterFirst = Math.max(longestAfterFirst, took);
          if (took > longestIdle.ms) longestIdle = { ms: took, atSec: (now - idleSinceMs) / 1000 };
        } else longestBefore = Math.max(longestBefore, took);
      }
      await sleep(POLL_MS);
    }
    if (idleSinceMs === null) console.log(`the daemon was not idle after its first pass within ${READY_BOUND_MS / 1000} s`);
    else {
      console.log(
        `idle ${IDLE_SEC} s: ${answers} status answers, the longest ${longestIdle.ms.toFixed(0)} ms (asked ${longestIdle.atSec.toFixed(1)} s into idle); ` +
          `after the first idle answer the longest ${longestAfterFirst.toFixed(0)} ms; before idle the longest ${longestBefore.toFixed(0)} ms`,
      );
      console.log(`daemon eventLoop: ${JSON.stringify(last?.eventLoop)}`);
    }
    child.kill('SIGTERM');
    const t1 = performance.now();
    await Promise.race([exited, sleep(60_000)]);
    console.log(`exit after SIGTERM: ${child.exitCode ?? child.signalCode ?? 'not yet'} in ${((performance.now() - t1) / 1000).toFixed(1)} s`);
    for (const l of lines) console.log(`  log: ${l}`);
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  }
} finally {
  await srv.close();
  await cleanup();
}
