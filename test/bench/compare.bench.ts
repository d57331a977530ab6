/**
 * `npm run bench -- compare [--full] [--rounds N]`: boxsync beside rclone on the same trees, in one run.
 *
 * For each workload the same tree is written to disk (served by `rclone serve http` on loopback) and seeded
 * into box-server (in this process, through its control API). Then, alternating which goes first each round:
 * - `boxsync sync --once` with the DEFAULT config (no rate-limit overrides) into an empty folder;
 * - `rclone copy :http: DEST --transfers 8 --checkers 16` into an empty folder;
 * - `cp -r` of the source tree, the floor.
 * On the last workload's mirrors it also times a no-change run of each, and 100 edits (50 on each side) synced
 * by boxsync. Each child is measured by `/usr/bin/time -v`: wall seconds, peak RSS, CPU seconds.
 *
 * The table is printed and written to bench/results.json. Sizes: a smoke run by default (seconds), the issue's
 * sizes with --full (2,000 files / 400 MB; 10,000 files / 1 GiB; 20,000 small files in 400 folders).
 * rclone comes from Debian (`apt-get install rclone`); without it the rclone columns say so.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdir, writeFile, appendFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { startBoxServer, type BoxServer } from '../../src/box-server/index.js';
import { writeBoxConfig } from '../support/box-config.js';
import { repoRoot } from '../support/cli.js';
import { makeTempDir } from '../support/tmp.js';
import { content, fileSizes, measureCommand, measureSync, prng, treeStats, type Measured } from './sync.bench.js';

interface Workload {
  readonly name: string;
  readonly files: number;
  readonly totalBytes: number;
  readonly folders: number;
}

const MiB = 1024 * 1024;
const args = process.argv.slice(3);
const full = args.includes('--full');
const roundsArg = args.indexOf('--rounds');
const ROUNDS = roundsArg >= 0 ? Math.max(1, Number(args[roundsArg + 1])) : 1;

const WORKLOADS: readonly Workload[] = full
  ? [
      { name: '2,000 files / 400 MB', files: 2000, totalBytes: 400 * 1000 * 1000, folders: 20 },
      { name: '10,000 files / 1 GiB', files: 10_000, totalBytes: 1024 * MiB, folders: 100 },
      { name: '20,000 small files / 400 folders', files: 20_000, totalBytes: 2 * MiB, folders: 400 },
    ]
  : [
      { name: '200 files / 40 MB (smoke)', files: 200, totalBytes: 40 * 1000 * 1000, folders: 4 },
      { name: '2,000 small files / 40 folders (smoke)', files: 2000, totalBytes: 256 * 1024, folders: 40 },
    ];

const TOKEN = 'COMPARE-BENCH';
const hasRclone = spawnSync('rclone', ['version'], { stdio: 'ignore' }).status === 0;

interface Row {
  readonly workload: string;
  readonly measurement: string;
  readonly boxsync: Measured | null;
  readonly rclone: Measured | null;
  readonly cp: Measured | null;
}

const sec = (m: Measured | null): string => (m === null ? 'n/a' : (m.wallMs / 1000).toFixed(2));
const rss = (m: Measured | null): string => (m === null || m.peakRssKiB === null ? 'n/a' : `${Math.round(m.peakRssKiB / 1024)}`);
const cpu = (m: Measured | null): string => (m === null || m.cpuSeconds === null ? 'n/a' : m.cpuSeconds.toFixed(1));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      s.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

/** `rclone serve http SRC` on loopback; resolves once it answers (bounded wait). */
async function serveHttp(src: string, rcloneConfig: string): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn('rclone', ['serve', 'http', src, '--addr', `127.0.0.1:${port}`, '--read-only', '--config', rcloneConfig], { stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}/`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      const r = await fetch(url, { signal: AbortSignal.timeout(1000) });
      if (r.ok) return { url, child };
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error('rclone serve http did not answer within 20 s');
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

function rcloneCopy(url: string, dest: string, rcloneConfig: string): Promise<Measured> {
  return measureCommand(['rclone', 'copy', ':http:', dest, '--http-url', url, '--transfers', '8', '--checkers', '16', '--config', rcloneConfig]);
}

async function seed(srv: BoxServer, src: string, w: Workload): Promise<string> {
  const web = srv.control.as('1');
  const root = web.createFolder('0', `Bench ${w.files}`);
  const sizes = fileSizes(w.files, w.totalBytes, prng(42 + w.files));
  const perFolder = Math.ceil(w.files / w.folders);
  let folderId = root.id;
  let dir = src;
  for (let i = 0; i < sizes.length; i++) {
    if (i % perFolder === 0) {
      const name = `dir-${String(i / perFolder).padStart(4, '0')}`;
      folderId = web.createFolder(root.id, name).id;
      dir = join(src, name);
      await mkdir(dir, { recursive: true });
    }
    const name = `file-${String(i).padStart(5, '0')}.bin`;
    const body = content(i, sizes[i]!);
    web.uploadFile(folderId, name, body);
    await writeFile(join(dir, name), body);
  }
  return root.id;
}

/** 50 edits on Box and 50 in the mirror, then one timed `sync --once`. */
async function hundredEdits(srv: BoxServer, rootId: string, mirror: string, configFile: string): Promise<Measured> {
  const web = srv.control.as('1');
  const dirs = web.listFolder(rootId).filter((e) => e.type === 'folder');
  let remote = 0;
  for (const d of dirs) {
    for (const f of web.listFolder(d.id)) {
      if (remote >= 50 || f.type !== 'file') break;
      web.uploadVersion(f.id, Buffer.from(`remote edit ${remote}`));
      remote++;
    }
    if (remote >= 50) break;
  }
  for (let i = 0; i < 50; i++) await appendFile(join(mirror, dirs[dirs.length - 1 - (i % dirs.length)]!.name, `local-${i}.txt`), `local edit ${i}`);
  return measureSync(configFile);
}

export async function run(): Promise<void> {
  if (!hasRclone) console.log('rclone is not installed: its columns read n/a. Install it with: apt-get install rclone');
  const tmp = await makeTempDir('boxsync-compare-');
  const rcloneConfig = join(tmp.dir, 'rclone.conf');
  await writeFile(rcloneConfig, '');
  const srv = await startBoxServer({ port: 0, tokens: [TOKEN] });
  const rows: Row[] = [];
  try {
    for (const [wi, w] of WORKLOADS.entries()) {
      const base = join(tmp.dir, `w${wi}`);
      const src = join(base, 'src');
      await mkdir(src, { recursive: true });
      const t0 = performance.now();
      const rootId = await seed(srv, src, w);
      console.log(`\n${w.name}: seeded in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      const served = hasRclone ? await serveHttp(src, rcloneConfig) : null;
      try {
        let best: { boxsync: Measured | null; rclone: Measured | null; cp: Measured | null } = { boxsync: null, rclone: null, cp: null };
        const keepBest = (a: Measured | null, b: Measured): Measured => (a === null || b.wallMs < a.wallMs ? b : a);
        let lastMirror = '';
        let lastConfig = '';
        let lastRcloneDest = '';
        for (let round = 0; round < ROUNDS; round++) {
          const mirror = join(base, `mirror-${round}`);
          const rdest = join(base, `rclone-${round}`);
          const configFile = join(base, `config-${round}.json`);
          // The default config: no rate-limit overrides (writeBoxConfig lifts them unless told otherwise).
          await writeBoxConfig(configFile, {
            srv,
            token: TOKEN,
            remoteId: rootId,
            localPath: mirror,
            stateDir: join(base, `state-${round}`),
            socketPath: join(base, `control-${round}.sock`),
            extra: { rateLimit: undefined },
          });
          const runBox = async (): Promise<void> => {
            const m = await measureSync(configFile);
            const st = await treeStats(mirror);
            if (m.code !== 0 || st.files !== w.files) console.log(`  boxsync: exit ${m.code}, ${st.files}/${w.files} files: ${m.summary}`);
            best = { ...best, boxsync: keepBest(best.boxsync, m) };
          };
          const runRclone = async (): Promise<void> => {
            if (!served) return;
            const m = await rcloneCopy(served.url, rdest, rcloneConfig);
            best = { ...best, rclone: keepBest(best.rclone, m) };
          };
          if (round % 2 === 0) {
            await runBox();
            await runRclone();
          } else {
            await runRclone();
            await runBox();
          }
          const cpDest = join(base, `cp-${round}`);
          best = { ...best, cp: keepBest(best.cp, await measureCommand(['cp', '-r', src, cpDest])) };
          await rm(cpDest, { recursive: true, force: true });
          lastMirror = mirror;
          lastConfig = configFile;
          lastRcloneDest = rdest;
        }
        rows.push({ workload: w.name, measurement: 'initial mirror', ...best });
        if (wi === WORKLOADS.length - 1) {
          const noChange = await measureSync(lastConfig);
          const rcloneNoChange = served ? await rcloneCopy(served.url, lastRcloneDest, rcloneConfig) : null;
          rows.push({ workload: w.name, measurement: 'no-change run', boxsync: noChange, rclone: rcloneNoChange, cp: null });
          rows.push({ workload: w.name, measurement: '100 edits (50 each side)', boxsync: await hundredEdits(srv, rootId, lastMirror, lastConfig), rclone: null, cp: null });
        }
      } finally {
        served?.child.kill('SIGTERM');
      }
      await rm(base, { recursive: true, force: true });
    }
  } finally {
    await srv.close();
    await tmp.cleanup();
  }

  console.log('\n| workload | measurement | boxsync s | rclone s | ratio | cp -r s | boxsync peak RSS MiB | rclone peak RSS MiB | boxsync CPU s | rclone CPU s |');
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const ratio = r.boxsync && r.rclone ? (r.boxsync.wallMs / r.rclone.wallMs).toFixed(2) : 'n/a';
    console.log(`| ${r.workload} | ${r.measurement} | ${sec(r.boxsync)} | ${sec(r.rclone)} | ${ratio} | ${sec(r.cp)} | ${rss(r.boxsync)} | ${rss(r.rclone)} | ${cpu(r.boxsync)} | ${cpu(r.rclone)} |`);
  }
  const outDir = join(repoRoot, 'bench');
  await mkdir(outDir, { recursive: true });
  await writeFile(
    join(outDir, 'results.json'),
    `${JSON.stringify({ when: new Date().toISOString(), full, rounds: ROUNDS, node: process.version, rows }, null, 2)}\n`,
  );
  console.log(`\nwritten: bench/results.json`);
}
