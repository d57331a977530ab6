/**
 * Daemon figures (printed, never asserted):
 * 1. inotify watches used by each watcher for a tree of BENCH_FILES files in BENCH_FOLDERS folders
 *    (default 100,000 in 5,000), against the per-user limit;
 * 2. the real daemon process on a mirror of that size (created directly on disk and in box-server, then
 *    reconciled by the daemon's first pass): change latency both ways, p50 and p99 over BENCH_CHANGES changes
 *    (default 100) each way;
 * 3. idle CPU and RSS of the daemon watching that mirror, and its inotify watches.
 * BENCH_DAEMON=0 skips 2 and 3. The first pass is bounded by BENCH_INITIAL_MAX_SEC (default 900).
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startBoxServer } from '../../src/box-server/index.js';
import { sendControl } from '../../src/daemon/control-client.js';
import type { DaemonStatus } from '../../src/daemon/control-protocol.js';
import { createWatcher } from '../../src/local/watcher-factory.js';
import { countInotifyWatches, inotifyWatchLimit } from '../../src/local/watcher-inotify-usage.js';
import type { WatcherKind } from '../../src/local/watcher-options.js';
import { writeBoxConfig } from '../support/box-config.js';
import { spawnCli } from '../support/cli.js';
import { makeTempDir } from '../support/tmp.js';

const FILES = Number(process.env.BENCH_FILES ?? 100_000);
const FOLDERS = Number(process.env.BENCH_FOLDERS ?? 5_000);
const CHANGES = Number(process.env.BENCH_CHANGES ?? 100);
const INITIAL_MAX_MS = 1000 * Number(process.env.BENCH_INITIAL_MAX_SEC ?? 900);

const folderName = (d: number): string => `d${String(d).padStart(4, '0')}`;
const fileName = (i: number): string => `f${i}.txt`;
const content = (d: number, i: number): string => `file ${d}/${i}\n`;

async function makeTree(root: string): Promise<void> {
  const perFolder = Math.ceil(FILES / FOLDERS);
  let made = 0;
  for (let d = 0; d < FOLDERS; d++) {
    const dir = join(root, folderName(d));
    await mkdir(dir, { recursive: true });
    const n = Math.min(perFolder, FILES - made);
    await Promise.all(Array.from({ length: n }, (_, i) => writeFile(join(dir, fileName(i)), content(d, i))));
    made += n;
  }
}

async function measureWatcher(kind: WatcherKind, root: string): Promise<string> {
  const before = (await countInotifyWatches()) ?? 0;
  const rssBefore = process.memoryUsage().rss;
  const t0 = Date.now();
  const w = createWatcher(kind, { rootPath: root, isIgnored: () => false });
  let health = '';
  try {
    await w.start(() => undefined, () => undefined);
    const h = w.health();
    health = h.state === 'degraded' ? `degraded: ${h.reason}` : h.state;
  } catch (e) {
    health = `failed: ${e instanceof Error ? e.message : String(e)}`;
  }
  const startMs = Date.now() - t0;
  const used = ((await countInotifyWatches()) ?? 0) - before;
  const rssMb = (process.memoryUsage().rss - rssBefore) / 1024 / 1024;
  await w.close();
  return `${kind.padEnd(8)} ${String(used).padStart(7)} inotify watches, start ${(startMs / 1000).toFixed(1)} s, +${rssMb.toFixed(0)} MB RSS, health ${health}`;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

async function until(probe: () => boolean | Promise<boolean>, timeoutMs: number, intervalMs = 10): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probe()) return true;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  return false;
}

function cpuTicks(pid: number): Promise<number> {
  return readFile(`/proc/${pid}/stat`, 'utf8').then((s) => {
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]);
  });
}

async function rssMb(pid: number): Promise<number> {
  const s = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(s)?.[1] ?? 0) / 1024;
}

export async function run(): Promise<void> {
  const { dir, cleanup } = await makeTempDir('boxsync-bench-daemon-');
  try {
    const mirror = join(dir, 'Box');
    let t0 = Date.now();
    await makeTree(mirror);
    console.log(`tree: ${FILES} files in ${FOLDERS} folders, created in ${((Date.now() - t0) / 1000).toFixed(1)} s; fs.inotify.max_user_watches = ${await inotifyWatchLimit()}`);
    for (const kind of ['dirs', 'chokidar'] as const) console.log(await measureWatcher(kind, mirror));

    if (process.env.BENCH_DAEMON === '0') return;
    const srv = await startBoxServer({ port: 0, tokens: ['T'], longPollTimeoutMs: 30_000 });
    const web = srv.control.as('1');
    let child: ReturnType<typeof spawnCli> | null = null;
    try {
      t0 = Date.now();
      const rootId = web.createFolder('0', 'Mirror').id;
      const perFolder = Math.ceil(FILES / FOLDERS);
      const fileIds: string[] = [];
      let made = 0;
      for (let d = 0; d < FOLDERS; d++) {
        const folderId = web.createFolder(rootId, folderName(d)).id;
        const n = Math.min(perFolder, FILES - made);
        for (let i = 0; i < n; i++) fileIds.push(web.uploadFile(folderId, fileName(i), content(d, i)).id);
        made += n;
      }
      console.log(`box-server: the same tree created in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

      const socketPath = join(dir, 'c.sock');
      const configFile = join(dir, 'config.json');
      await writeBoxConfig(configFile, {
        srv,
        token: 'T',
        remoteId: rootId,
        localPath: mirror,
        stateDir: join(dir, 'state'),
        socketPath,
        extra: { transferConcurrency: 8, log: { level: 'warn' } },
      });
      t0 = Date.now();
      child = spawnCli(['daemon', '--config', configFile]);
      let out = '';
      child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
      const status = (): Promise<DaemonStatus> => sendControl<DaemonStatus>(socketPath, { verb: 'status' });
      const ready = await until(async () => {
        const s = await status().catch(() => null);
        return s !== null && s.engine.lastSuccessfulSyncAtMs !== null && s.engine.phase === 'idle' && s.watchers.every((w) => w.health.state !== 'starting');
      }, INITIAL_MAX_MS, 500);
      if (!ready) {
        console.log(`daemon: first pass did not finish within ${INITIAL_MAX_MS / 1000} s; no latency figures. Last output:\n${out.slice(-2000)}`);
        return;
      }
      const first = await status();
      console.log(`daemon: first pass (list + scan + link ${FILES} files) took ${((Date.now() - t0) / 1000).toFixed(1)} s; ${first.engine.roots[0]!.inSync.files} files in sync`);

      const down: number[] = [];
      for (let k = 0; k < CHANGES; k++) {
        const idx = (k * 7919) % fileIds.length;
        const d = Math.floor(idx / perFolder);
        const i = idx % perFolder;
        const text = `remote edit ${k} ${Date.now()}\n`;
        const start = Date.now();
        web.uploadVersion(fileIds[idx]!, text);
        const ok = await until(async () => (await readFile(join(mirror, folderName(d), fileName(i)), 'utf8').catch(() => '')) === text, 30_000);
        down.push(ok ? Date.now() - start : Number.POSITIVE_INFINITY);
      }
      const up: number[] = [];
      for (let k = 0; k < CHANGES; k++) {
        const idx = (k * 104_729 + 13) % fileIds.length;
        const d = Math.floor(idx / perFolder);
        const i = idx % perFolder;
        const text = `local edit ${k} ${Date.now()}\n`;
        const sha1 = createHash('sha1').update(text).digest('hex');
        const start = Date.now();
        await writeFile(join(mirror, folderName(d), fileName(i)), text);
        const ok = await until(() => web.getItem('file', fileIds[idx]!)?.['sha1'] === sha1, 30_000);
        up.push(ok ? Date.now() - start : Number.POSITIVE_INFINITY);
      }
      for (const [name, xs] of [['remote -> local', down], ['local -> remote', up]] as const) {
        const sorted = [...xs].sort((a, b) => a - b);
        const lost = sorted.filter((x) => !Number.isFinite(x)).length;
        console.log(`latency ${name}: p50 ${percentile(sorted, 50)} ms, p99 ${percentile(sorted, 99)} ms over ${xs.length} changes${lost ? ` (${lost} did not arrive within 30 s)` : ''}`);
      }

      const pid = child.pid!;
      await until(async () => (await status()).engine.phase === 'idle', 30_000, 200);
      const idleSec = 20;
      const c0 = await cpuTicks(pid);
      await new Promise((r) => setTimeout(r, idleSec * 1000));
      const c1 = await cpuTicks(pid);
      console.log(
        `daemon idle: ${(((c1 - c0) / 100 / idleSec) * 100).toFixed(2)} % CPU over ${idleSec} s, RSS ${(await rssMb(pid)).toFixed(0)} MB, ` +
          `${await countInotifyWatches(pid)} inotify watches (node + tsx; a built dist/ would be a little lighter)`,
      );
    } finally {
      if (child && child.exitCode === null) {
        child.kill('SIGTERM');
        await new Promise((r) => child!.once('close', r));
      }
      await srv.close();
    }
  } finally {
    await cleanup();
  }
}
