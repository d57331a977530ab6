/**
 * The daemon's first pass over an existing complete mirror (issue 29 point 6), by size and watcher kind:
 *
 *   node --max-old-space-size=8192 --import tsx test/bench/first-pass.ts [FILES,FILES,...] [PER_FOLDER]
 *
 * For each size (default 100000,200000,400000; PER_FOLDER files a folder, default 10 as the million-file tree of
 * compare.bench.ts) the synced fixture (journal-fixture.ts: box-server, the tree on disk and the journal a first
 * mirror leaves) is built, then `boxsync daemon` (bin/boxsync.js) is started on it once per watcher kind in
 * FIRST_PASS_KINDS (default "inotify,dirs"; "once" is a `sync --once` instead, for comparison), each on the journal
 * as the fixture left it (restored from a copy before each run: a first pass refreshes the folders' rows), waited for (bounded) until its own first pass succeeded with the
 * engine idle and the watchers up, and measured: wall from spawn, its CPU seconds (/proc/PID/stat) and VmHWM, the
 * inotify watches. With PROFILE=1 each daemon runs under `node --cpu-prof` (profiles in $PROFILE_DIR, default
 * /tmp/boxsync-prof); HEAP_PROF=1 adds `--heap-prof`. FIRST_PASS_NO_CURSOR=1 deletes the stored event positions first
 * (the first pass then lists every Box folder). A kind "KIND@B" runs FIRST_PASS_BIN_B (another checkout's
 * bin/boxsync.js, e.g. main's) instead: before and after back to back on one fixture, under the same load.
 */
import { spawn } from 'node:child_process';
import { copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startBoxServer } from '../../src/box-server/index.js';
import { sendControl } from '../../src/daemon/control/control-client.js';
import type { DaemonStatus } from '../../src/daemon/control/control-protocol.js';
import { countInotifyWatches } from '../../src/local/watcher-inotify-usage.js';
import { repoRoot } from '../support/cli.js';
import { makeTempDir } from '../support/tmp.js';
import { buildSyncedFixture } from './journal-fixture.js';
import { measureCommand } from './sync.bench.js';
import { firstPassDone } from './daemon-ready.js';

const sizes = (process.argv[2] ?? '100000,200000,400000').split(',').map(Number);
const perFolder = Number(process.argv[3] ?? 10);
const kinds = (process.env.FIRST_PASS_KINDS ?? 'inotify,dirs').split(',');
const profDir = process.env.PROFILE_DIR ?? '/tmp/boxsync-prof';
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function proc(pid: number): Promise<{ cpu: number; hwmKiB: number; rssKiB: number }> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return {
    cpu: (Number(f[11]) + Number(f[12])) / 100,
    hwmKiB: Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? NaN),
    rssKiB: Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN),
  };
}

async function daemonFirstPass(bin: string, configFile: string, socketPath: string, label: string, boundMs: number): Promise<string> {
  const node: string[] = [];
  if (process.env.PROFILE === '1') node.push('--cpu-prof', `--cpu-prof-dir=${profDir}`, `--cpu-prof-name=${label}.cpuprofile`);
  if (process.env.HEAP_PROF === '1') node.push('--heap-prof', `--heap-prof-dir=${profDir}`, `--heap-prof-name=${label}.heapprofile`);
  const env = { ...process.env, BOXSYNC_LOG_LEVEL: 'warn' };
  const t0 = performance.now();
  const child = spawn(process.execPath, [...node, bin, 'daemon', '--config', configFile], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const keep = (d: Buffer): void => void (out = (out + d.toString()).slice(-4000));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<void>((r) => child.on('close', () => r()));
  try {
    let last: DaemonStatus | null = null;
    let ready = false;
    while (!ready && performance.now() - t0 < boundMs && child.exitCode === null) {
      last = await sendControl<DaemonStatus>(socketPath, { verb: 'status' }, 10_000).catch(() => null);
      ready = firstPassDone(last);
      if (!ready) await sleep(200);
    }
    const wall = (performance.now() - t0) / 1000;
    if (!ready) return `${label}: not ready within ${boundMs / 1000} s; ${JSON.stringify(last?.engine ?? null)}\n${out}`;
    const m = await proc(child.pid!);
    const watches = await countInotifyWatches(child.pid!);
    const w = last!.watchers[0]!;
    return `${label}: first pass ${wall.toFixed(2)} s wall, ${m.cpu.toFixed(2)} s CPU, VmHWM ${(m.hwmKiB / 1024).toFixed(0)} MiB, VmRSS ${(m.rssKiB / 1024).toFixed(0)} MiB, ${last!.passes} pass(es), watcher ${w.kind} (${w.health.state}), inotify watches ${watches}`;
  } finally {
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    await exited;
    clearTimeout(timer);
  }
}

await mkdir(profDir, { recursive: true });
for (const files of sizes) {
  const tmp = await makeTempDir('boxsync-first-pass-');
  const srv = await startBoxServer({ port: 0, tokens: ['FP'], longPollTimeoutMs: 30_000 });
  try {
    const t0 = performance.now();
    const fx = await buildSyncedFixture({ srv, token: 'FP', dir: tmp.dir, files, perFolder });
    console.log(`fixture: ${files} files in ${fx.folders} folders in ${((performance.now() - t0) / 1000).toFixed(0)} s; load ${(await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ')}`);
    await copyFile(fx.journalFile, `${fx.journalFile}.fixture`);
    for (const [i, spec] of kinds.entries()) {
      const [kind, which] = spec.split('@') as [string, string | undefined];
      const bin = which === 'B' ? process.env.FIRST_PASS_BIN_B! : join(repoRoot, 'bin', 'boxsync.js');
      if (i > 0) {
        for (const ext of ['-wal', '-shm']) await rm(`${fx.journalFile}${ext}`, { force: true });
        await copyFile(`${fx.journalFile}.fixture`, fx.journalFile);
      }
      // FIRST_PASS_NO_CURSOR=1: no stored event position, so the first pass lists every folder (the full-listing path).
      if (process.env.FIRST_PASS_NO_CURSOR === '1') {
        const db = new Database(fx.journalFile);
        db.prepare(`DELETE FROM stream_cursors`).run();
        db.close();
      }
      if (kind === 'once') {
        const prof = process.env.PROFILE === '1' ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`, `--cpu-prof-name=${files}-${spec.replace('@', '-')}-${i}.cpuprofile`] : [];
        const m = await measureCommand([process.execPath, ...prof, bin, 'sync', '--once', '--config', fx.configFile]);
        console.log(`${files}-${spec}: exit ${m.code}, ${(m.wallMs / 1000).toFixed(2)} s wall, ${m.cpuSeconds?.toFixed(2)} s CPU, ${Math.round((m.peakRssKiB ?? 0) / 1024)} MiB peak: ${m.summary}`);
        continue;
      }
      // The config's daemon.watcher: rewrite it for this kind (the fixture's config has none).
      const cfg = JSON.parse(await readFile(fx.configFile, 'utf8')) as Record<string, unknown>;
      await writeFile(fx.configFile, JSON.stringify({ ...cfg, daemon: { ...(cfg['daemon'] as object | undefined), watcher: kind } }, null, 2));
      console.log(await daemonFirstPass(bin, fx.configFile, join(tmp.dir, 'control.sock'), `${files}-${spec.replace('@', '-')}-${i}`, 120_000 + files * 10));
    }
  } finally {
    await srv.close();
    await tmp.cleanup();
  }
}
