/**
 * `npm run bench -- compare [--full] [--rounds N] [--scale N] [--small N] [--journal-rows N] [--million N] [--million-only] [--no-million] [--idle-sec N] [--no-wire]`:
 * boxsync beside rclone on the same trees, in one run.
 *
 * For each workload the same tree is written to disk (served by `rclone serve http` on loopback) and seeded
 * into box-server (in this process, through its control API). Then, alternating which goes first each round:
 * - `boxsync sync --once` with the DEFAULT config (no rate-limit overrides) into an empty folder;
 * - `rclone copy :http: DEST --transfers 8 --checkers 16` into an empty folder;
 * - `cp -r` of the source tree, the floor;
 * - floor-client.mjs: the same mirror from box-server by the least a Node client of Box's API must do (list,
 *   then per file the API call that answers 302 and the fetch of its Location, written to a temp name, fsynced,
 *   renamed; 8 at once): what the runtime, Box's two requests per download and box-server cost before anything
 *   boxsync adds (journal, checks, hashing, guards);
 * - on Box's wire (compare-wire.ts): the same tree seeded into a second box-server started as Box (`startAsBox`,
 *   what `boxsync server --as-box` runs: HTTPS for Box's host names, a loopback CONNECT proxy), and from it, through
 *   the proxy, rclone's Box backend (`rclone copy box:FOLDER DEST`, same --transfers and --checkers) and `boxsync
 *   sync --once` with the default config and Box's own URLs: the same wire, TLS included, for both (--no-wire:
 *   not run).
 * Each initial mirror's API calls to box-server are counted (compare-wire.ts: requests to API routes; download and
 * zip content URLs are not API calls). For the run's small-file workload (2,000 files, 20,000 with --full, N with
 * --small N) one more first mirror, by `sync --once` with the default config, from a third box-server with Box's
 * limits on (`boxLimits`: 1,000 API calls and 240 uploads a minute, 429 + Retry-After): its wall time and API calls.
 * On the last workload's mirrors it also times a no-change run of each, a second no-change run of boxsync's (the first
 * marked each folder: listing marks), and 100 + 100 edits (100 files changed on Box, 100 in the mirror: edits.ts)
 * synced by boxsync. Each child is measured by `/usr/bin/time -v`: wall seconds,
 * peak RSS, CPU seconds.
 *
 * Then, on that last mirror, the idle daemon: `boxsync daemon` (bin/boxsync.js, same config) is started, waited
 * for (its control socket's `status` says a pass of its own succeeded, the engine is idle and the watchers and
 * the event stream are up; bounded), left idle for --idle-sec seconds (default 20: its idle collections end 8 s after
 * its idle journal check, which takes seconds at 100,000 files on a loaded machine), and sampled from
 * /proc/PID/status: VmRSS (now) and VmHWM (its peak, the first pass included), with its CPU while idle; then
 * SIGTERM, and its exit is awaited. Its "boxsync s" is the time from start to the end of its first pass. Before
 * the SIGTERM, 100 edits while it runs (daemonEdits): 50 on Box, 50 in the mirror, timed from the last edit until
 * each is on the other side.
 *
 * Last, a no-change `sync --once` over a large journal: --journal-rows N files (default 10,000) in N/50 folders,
 * set up as a finished first mirror leaves them without running it (journal-fixture.ts: the same tree in a fresh
 * box-server, on disk, and in the journal, row for row what the engine writes; checked by
 * journal-fixture.test.ts). The run must plan nothing (its summary is checked); the table gives its wall time,
 * peak RSS and CPU, and the journal's size on disk (journal.db + -wal) after it. Setting it up took 25-35 s per
 * 100,000 files on the 2-core development machine when it was otherwise quiet (box-server ~15 s, disk ~7-11 s,
 * journal ~5-8 s), several times that while other work loaded its cores; the run prints its own figures.
 *
 * The million-file tree (millionRows; --full unless --no-million, or --million N for N files, --million-only for these rows alone): N
 * small files, 10 a folder (1,000,000 in 100,000 folders), in a box-server of its own: its first mirror by
 * `sync --once` (default config: zip downloads on), then the idle daemon on it (no edits). Every idle daemon row
 * also gives the daemon's inotify watches (/proc/PID/fdinfo) beside the budget (fs.inotify.max_user_watches).
 *
 * Sizes: a smoke run by default (a minute or two, the build included), the issue's sizes with --full (2,000 files / 400 MB; 10,000
 * files / 1 GiB; 20,000 small files in 400 folders; and --scale 100000 --journal-rows 1000000). --scale N adds
 * the workload "N small files / N/50 folders" (the last one: the no-change run, the 100 edits and the idle
 * daemon then run on it). --scale and --journal-rows also override what --full sets.
 * box-server keeps every event in memory (about 3.6 KB per file seeded), hence `npm run bench`'s
 * --max-old-space-size for a 1,000,000-file journal.
 * The table is printed and written to bench/results.json (`notes` and `detail` per row hold what the columns
 * do not). rclone comes from Debian (`apt-get install rclone`); without it the rclone columns say so.
 */
import Database from 'better-sqlite3';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, writeFile, appendFile, readFile, rm, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { getHeapStatistics } from 'node:v8';
import type { AsBoxServer } from '../../src/box-server/as-box.js';
import { BOX_API_CALLS_PER_MINUTE, BOX_UPLOADS_PER_MINUTE } from '../../src/box-server/box-limits.js';
import { startBoxServer, type BoxServer } from '../../src/box-server/index.js';
import { sendControl } from '../../src/daemon/control/control-client.js';
import { countInotifyWatches, inotifyWatchLimit } from '../../src/local/watcher-inotify-usage.js';
import type { DaemonStatus } from '../../src/daemon/control/control-protocol.js';
import { writeBoxConfig } from '../support/box-config.js';
import { repoRoot } from '../support/cli.js';
import { makeTempDir } from '../support/tmp.js';
import { counted, measureWireSync, perFile, rcloneBoxCopy, startWire, writeRcloneBoxConfig, writeWireConfig, type RequestCount } from './compare-wire.js';
import { buildSyncedFixture, FILES_PER_FOLDER } from './journal-fixture.js';
import { editBothSides } from './edits.js';
import { content, fileSizes, measureCommand, measureSync, prng, treeStats, type Measured } from './sync.bench.js';
import { firstPassDone } from './daemon-ready.js';

interface Workload {
  readonly name: string;
  readonly files: number;
  readonly totalBytes: number;
  readonly folders: number;
  /** The run's small-file workload: its first mirror is also made with Box's limits on. */
  readonly small?: boolean;
}

const MiB = 1024 * 1024;
/** The million-file tree's folders hold 10 files each (1,000,000 files in 100,000 folders). */
const MILLION_FILES_PER_FOLDER = 10;
const args = process.argv.slice(3);
const full = args.includes('--full');
/** --no-wire: without the Box's wire columns (rclone's Box backend paces its own API calls: slow on the big workloads). */
const WIRE = !args.includes('--no-wire');

/** `--name N`: a whole number >= min, or the default; anything else stops the run before it starts. */
function numberArg(name: string, fallback: number | null, min: number): number | null {
  const at = args.indexOf(name);
  if (at < 0) return fallback;
  const n = Number(args[at + 1]);
  if (!Number.isSafeInteger(n) || n < min) throw new Error(`${name} takes a whole number of at least ${min} (got ${args[at + 1] ?? 'nothing'})`);
  return n;
}

const ROUNDS = numberArg('--rounds', 1, 1)!;
/** Files of the extra "N small files / N/50 folders" workload (none by default). */
const SCALE = numberArg('--scale', full ? 100_000 : null, FILES_PER_FOLDER);
/** Files of the synthetic journal of the no-change run over a large journal. */
const JOURNAL_FILES = numberArg('--journal-rows', full ? 1_000_000 : 10_000, 1)!;
/** Files of the run's small-file workload (default 2,000; --full 20,000), in N/50 folders. */
const SMALL = numberArg('--small', null, FILES_PER_FOLDER);
/** Files of the million-file tree (--full: 1,000,000), in N/10 folders: its first mirror and its idle daemon. */
const MILLION = args.includes('--no-million') ? null : numberArg('--million', full ? 1_000_000 : args.includes('--million-only') ? 1_000_000 : null, MILLION_FILES_PER_FOLDER);
/** --million-only: only the million-file rows (no other workload, no large journal). */
const MILLION_ONLY = args.includes('--million-only');
/** How long the daemon is left idle before its RSS is sampled. */
const IDLE_SEC = numberArg('--idle-sec', 20, 1)!;

const fmt = (n: number): string => n.toLocaleString('en');
const folderCount = (files: number): number => Math.ceil(files / FILES_PER_FOLDER);
/** --small N: N files of about 128 bytes in N/50 folders. */
function smallWorkload(files: number, suffix: string): Workload {
  return { name: `${fmt(files)} small files / ${fmt(folderCount(files))} folders${suffix}`, files, totalBytes: files * 128, folders: folderCount(files), small: true };
}

const WORKLOADS: readonly Workload[] = [
  ...(full
    ? [
        { name: '2,000 files / 400 MB', files: 2000, totalBytes: 400 * 1000 * 1000, folders: 20 },
        { name: '10,000 files / 1 GiB', files: 10_000, totalBytes: 1024 * MiB, folders: 100 },
        SMALL === null ? { name: '20,000 small files / 400 folders', files: 20_000, totalBytes: 2 * MiB, folders: 400, small: true } : smallWorkload(SMALL, ''),
      ]
    : [
        { name: '200 files / 40 MB (smoke)', files: 200, totalBytes: 40 * 1000 * 1000, folders: 4 },
        SMALL === null ? { name: '2,000 small files / 40 folders (smoke)', files: 2000, totalBytes: 256 * 1024, folders: 40, small: true } : smallWorkload(SMALL, ' (smoke)'),
      ]),
  // About 128 bytes a file, like the small-file workloads above.
  ...(SCALE === null ? [] : [{ name: `${fmt(SCALE)} small files / ${fmt(folderCount(SCALE))} folders`, files: SCALE, totalBytes: SCALE * 128, folders: folderCount(SCALE) }]),
];

const TOKEN = 'COMPARE-BENCH';
const hasRclone = spawnSync('rclone', ['version'], { stdio: 'ignore' }).status === 0;

interface Row {
  readonly workload: string;
  readonly measurement: string;
  readonly boxsync: Measured | null;
  readonly rclone: Measured | null;
  readonly cp: Measured | null;
  /** The Node floor (floor-client.mjs): the least a Node client of Box's API does for the same mirror; initial mirrors only. */
  readonly floor?: Measured | null;
  /** On Box's wire (compare-wire.ts): boxsync and rclone's Box backend through the as-box server; initial mirrors only. */
  readonly boxsyncWire?: Measured | null;
  readonly rcloneBox?: Measured | null;
  /** box-server's API calls during boxsync's run (this row's), and during rclone's Box backend's. */
  readonly boxsyncCalls?: RequestCount | null;
  readonly rcloneBoxCalls?: RequestCount | null;
  readonly boxsyncWireCalls?: RequestCount | null;
  /** Files of the workload (for API calls per file). */
  readonly files?: number;
  /** What the columns do not say (the table's last column). */
  readonly notes?: string;
  /** The same, as numbers, for results.json. */
  readonly detail?: Readonly<Record<string, number | string | boolean | null>>;
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

/** floor-client.mjs: the same tree from box-server by the least a Node client of Box's API must do (8 at once). */
function nodeFloor(srv: BoxServer, rootId: string, dest: string): Promise<Measured> {
  return measureCommand([process.execPath, join(repoRoot, 'test', 'bench', 'floor-client.mjs'), srv.apiUrl, TOKEN, rootId, dest, '8']);
}

function rcloneCopy(url: string, dest: string, rcloneConfig: string): Promise<Measured> {
  return measureCommand(['rclone', 'copy', ':http:', dest, '--http-url', url, '--transfers', '8', '--checkers', '16', '--config', rcloneConfig]);
}

const rootName = (w: Workload): string => `Bench ${w.files}`;

/** The workload's tree on disk under `src` and in each of `servers` (folder `rootName(w)` of user 1); the root ids, in order. */
async function seed(servers: readonly BoxServer[], src: string, w: Workload): Promise<string[]> {
  const webs = servers.map((srv) => srv.control.as('1'));
  const roots = webs.map((web) => web.createFolder('0', rootName(w)).id);
  const sizes = fileSizes(w.files, w.totalBytes, prng(42 + w.files));
  const perFolder = Math.ceil(w.files / w.folders);
  let folderIds = roots;
  let dir = src;
  for (let i = 0; i < sizes.length; i++) {
    if (i % perFolder === 0) {
      const name = `dir-${String(i / perFolder).padStart(4, '0')}`;
      folderIds = webs.map((web, s) => web.createFolder(roots[s]!, name).id);
      dir = join(src, name);
      await mkdir(dir, { recursive: true });
    }
    const name = `file-${String(i).padStart(5, '0')}.bin`;
    const body = content(i, sizes[i]!);
    webs.forEach((web, s) => web.uploadFile(folderIds[s]!, name, body));
    await writeFile(join(dir, name), body);
  }
  return roots;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** VmRSS and VmHWM of a live process, in KiB. */
async function procMemory(pid: number): Promise<{ rssKiB: number; hwmKiB: number }> {
  const s = await readFile(`/proc/${pid}/status`, 'utf8');
  return { rssKiB: Number(/VmRSS:\s+(\d+) kB/.exec(s)?.[1] ?? NaN), hwmKiB: Number(/VmHWM:\s+(\d+) kB/.exec(s)?.[1] ?? NaN) };
}

/** User + system CPU seconds of a live process (clock ticks of 1/100 s). */
async function cpuSeconds(pid: number): Promise<number> {
  const s = await readFile(`/proc/${pid}/stat`, 'utf8');
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

/**
 * `boxsync daemon` on a mirror `sync --once` just finished: waits (bounded) until its own first pass succeeded and
 * it is idle with its watchers and event stream up, leaves it idle IDLE_SEC seconds, samples VmRSS / VmHWM, then
 * SIGTERM and waits for it to exit.
 */
/**
 * 50 files edited on Box (in the second folder) and 50 in the mirror (in the third) while the daemon runs: the
 * time from the last edit until every one is on the other side (each local file has Box's new bytes, Box lists
 * each local file's new SHA-1), polled every 25 ms, bounded by 60 s. null when the bound passed.
 */
async function daemonEdits(srv: BoxServer, rootId: string, mirror: string): Promise<{ ms: number | null; fromFirstMs: number | null; missing: number }> {
  const web = srv.control.as('1');
  const dirs = web.listFolder(rootId).filter((e) => e.type === 'folder');
  const [remoteDir, localDir] = [dirs[1 % dirs.length]!, dirs[2 % dirs.length]!];
  const remoteFiles = web.listFolder(remoteDir.id).filter((f) => f.type === 'file').slice(0, 50);
  const localFiles = web.listFolder(localDir.id).filter((f) => f.type === 'file').slice(-50);
  const first = performance.now();
  const wanted = new Map<string, Buffer>();
  for (const [i, f] of remoteFiles.entries()) {
    const bytes = Buffer.from(`daemon remote edit ${i}`);
    web.uploadVersion(f.id, bytes);
    wanted.set(join(mirror, remoteDir.name, f.name), bytes);
  }
  const wantedSha1 = new Map<string, string>();
  for (const f of localFiles) {
    const path = join(mirror, localDir.name, f.name);
    await appendFile(path, ' daemon local edit');
    wantedSha1.set(f.name, createHash('sha1').update(await readFile(path)).digest('hex'));
  }
  const last = performance.now();
  let missing = wanted.size + wantedSha1.size;
  while (performance.now() - last < 60_000) {
    let localMissing = 0;
    for (const [path, bytes] of wanted) if (!(await readFile(path).catch(() => Buffer.alloc(0))).equals(bytes)) localMissing++;
    const onBox = new Map(web.listFolder(localDir.id).map((f) => [f.name, f.sha1]));
    const remoteMissing = [...wantedSha1].filter(([name, sha1]) => onBox.get(name) !== sha1).length;
    missing = localMissing + remoteMissing;
    if (missing === 0) return { ms: performance.now() - last, fromFirstMs: performance.now() - first, missing };
    await sleep(25);
  }
  return { ms: null, fromFirstMs: null, missing };
}

/** `edits` null: no 100 edits while it runs (the million-file tree has 10 files a folder). */
async function idleDaemon(w: Workload, configFile: string, socketPath: string, edits: { srv: BoxServer; rootId: string; mirror: string } | null): Promise<Row[]> {
  const boundMs = 60_000 + 5 * w.files;
  const started = performance.now();
  const child = spawn(process.execPath, [join(repoRoot, 'bin', 'boxsync.js'), 'daemon', '--config', configFile], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, BOXSYNC_LOG_LEVEL: 'warn' },
  });
  let out = '';
  const keep = (d: Buffer): void => void (out = (out + d.toString()).slice(-4000));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  const row = (boxsync: Measured | null, notes: string, detail: Row['detail'] = {}): Row => ({ workload: w.name, measurement: 'idle daemon', boxsync, rclone: null, cp: null, notes, detail });
  const rows: Row[] = [];
  try {
    let last: DaemonStatus | null = null;
    let ready = false;
    while (!ready && performance.now() - started < boundMs && child.exitCode === null && child.signalCode === null) {
      last = await sendControl<DaemonStatus>(socketPath, { verb: 'status' }, 5000).catch(() => null);
      ready = firstPassDone(last);
      if (!ready) await sleep(200);
    }
    const firstPassMs = performance.now() - started;
    if (!ready) {
      const why = child.exitCode !== null || child.signalCode !== null ? `exited (${child.exitCode ?? child.signalCode})` : `was not idle after a first pass of its own within ${boundMs / 1000} s`;
      console.log(`  idle daemon: it ${why}; last status: ${JSON.stringify(last?.engine ?? null)}\n${out}`);
      return [row(null, `the daemon ${why}`)];
    }
    const pid = child.pid!;
    const cpu0 = await cpuSeconds(pid);
    await sleep(IDLE_SEC * 1000);
    const cpu1 = await cpuSeconds(pid);
    const mem = await procMemory(pid);
    const watches = await countInotifyWatches(pid);
    const watchBudget = await inotifyWatchLimit();
    const idleCpuPercent = ((cpu1 - cpu0) / IDLE_SEC) * 100;
    if (edits !== null) {
      const cpuBeforeEdits = await cpuSeconds(pid);
      const e = await daemonEdits(edits.srv, edits.rootId, edits.mirror);
      const editCpu = (await cpuSeconds(pid)) - cpuBeforeEdits;
      rows.push({
        workload: w.name,
        measurement: '100 edits (50 each side), daemon running',
        boxsync: e.ms === null ? null : { code: 0, wallMs: e.ms, peakRssKiB: (await procMemory(pid)).hwmKiB, cpuSeconds: editCpu, summary: 'every edit on the other side' },
        rclone: null,
        cp: null,
        notes:
          e.ms === null
            ? `${e.missing} of 100 edits were not on the other side 60 s after the last one`
            : `s = last edit to every edit on the other side (${(e.fromFirstMs! / 1000).toFixed(2)} s from the first; edits go to the watcher and Box's event stream, no walk); CPU = the daemon's meanwhile`,
        detail: { seconds: e.ms === null ? null : e.ms / 1000, fromFirstSeconds: e.fromFirstMs === null ? null : e.fromFirstMs / 1000, missing: e.missing },
      });
      // The one-shot row's 100 + 100 edits again, then `sync --once` while the daemon runs: the run is handed to it
      // (its watcher and the event stream already know the edits), and exits once every edit is on the other side.
      const cpuBeforeHandOff = await cpuSeconds(pid);
      await editBothSides(edits.srv, edits.rootId, edits.mirror, 100, 2);
      const handed = await measureSync(configFile);
      const handOffCpu = (await cpuSeconds(pid)) - cpuBeforeHandOff;
      rows.push({
        workload: w.name,
        measurement: '100 + 100 edits, `sync --once` handed to the running daemon',
        boxsync: handed,
        rclone: null,
        cp: null,
        notes: `s = the command's start to its exit (the daemon runs the pass; exit 0: every edit is on the other side); peak RSS and CPU = the command's; the daemon's CPU from the first edit ${handOffCpu.toFixed(2)} s`,
        detail: { daemonCpuSeconds: handOffCpu },
      });
    }
    child.kill('SIGTERM');
    const end = await Promise.race([exited, sleep(30_000).then(() => null)]);
    if (end === null) {
      child.kill('SIGKILL');
      await exited;
    }
    const exit = end === null ? 'did not exit within 30 s of SIGTERM (killed)' : `exit ${end.code ?? end.signal} after SIGTERM`;
    if (end?.code !== 0) console.log(`  idle daemon: ${exit}\n${out}`);
    const inSync = last!.engine.roots.reduce((n, r) => n + r.inSync.files, 0);
    rows.unshift(row(
      { code: end?.code ?? null, wallMs: firstPassMs, peakRssKiB: mem.hwmKiB, cpuSeconds: cpu1, summary: `${last!.passes} pass(es), ${inSync} files in sync` },
      `s = start to first pass done (${fmt(inSync)} files in sync); peak RSS = VmHWM; VmRSS ${Math.round(mem.rssKiB / 1024)} MiB ` +
        `after ${IDLE_SEC} s idle, ${idleCpuPercent.toFixed(1)} % CPU idle; inotify watches ${watches === null ? 'n/a' : fmt(watches)} ` +
        `of ${watchBudget === null ? 'n/a' : fmt(watchBudget)} (max_user_watches); ${exit}`,
      { vmRssKiB: mem.rssKiB, vmHwmKiB: mem.hwmKiB, inotifyWatches: watches, inotifyWatchBudget: watchBudget, idleSeconds: IDLE_SEC, idleCpuPercent, firstPassSeconds: firstPassMs / 1000, filesInSync: inSync, exitCode: end?.code ?? null },
    ));
    return rows;
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  }
}

async function sizeOf(path: string): Promise<number> {
  return stat(path).then((s) => s.size, () => 0);
}

/** A no-change `sync --once` over a journal of JOURNAL_FILES files (journal-fixture.ts), in a box-server of its own. */
async function largeJournal(dir: string): Promise<Row[]> {
  const files = JOURNAL_FILES;
  const folders = folderCount(files);
  const entries = files + folders;
  const workload = `${fmt(files)} files / ${fmt(folders)} folders (synthetic journal)`;
  const measurement = `no-change run (journal of ${fmt(entries)} entries)`;
  const wholeMeasurement = `no-change run planned whole (journal of ${fmt(entries)} entries)`;
  const heapMiB = getHeapStatistics().heap_size_limit / MiB;
  const needMiB = (files * 3.6 * 1024) / MiB + 300;
  if (needMiB > heapMiB) {
    console.log(`\n${workload}: skipped: box-server needs about ${Math.round(needMiB)} MiB of heap for it and this process has ${Math.round(heapMiB)} MiB; run through \`npm run bench\` (which raises it) or with node --max-old-space-size`);
    return [{ workload, measurement, boxsync: null, rclone: null, cp: null, notes: 'skipped: not enough heap for box-server' }];
  }
  const srv = await startBoxServer({ port: 0, tokens: [TOKEN] });
  try {
    const t0 = performance.now();
    const fx = await buildSyncedFixture({
      srv,
      token: TOKEN,
      dir,
      files,
      progress: (n) => console.log(`  journal fixture: ${fmt(n)} files in place after ${((performance.now() - t0) / 1000).toFixed(0)} s`),
    });
    const setup = fx.seconds.server + fx.seconds.local + fx.seconds.journal;
    const before = (await sizeOf(fx.journalFile)) + (await sizeOf(`${fx.journalFile}-wal`));
    console.log(
      `\n${workload}: set up in ${setup.toFixed(1)} s (box-server ${fx.seconds.server.toFixed(1)} s, disk ${fx.seconds.local.toFixed(1)} s, ` +
        `journal ${fx.seconds.journal.toFixed(1)} s; ${(setup / (files / 100_000)).toFixed(1)} s per 100,000 files), journal ${(before / 1e6).toFixed(1)} MB`,
    );
    const rows: Row[] = [];
    // 1. The usual case: the last run converged, so this one plans only what changed (nothing). 2. The same with
    // the clean mark cleared (the first run after an upgrade or a crash, or the daily whole-root plan): every
    // window of the root is planned, and still nothing is done.
    for (const whole of [false, true]) {
      if (whole) clearAllCleanMarks(fx.journalFile);
      const m = await measureSync(fx.configFile);
      const db = await sizeOf(fx.journalFile);
      const wal = await sizeOf(`${fx.journalFile}-wal`);
      // A no-change pass: nothing transferred, nothing else planned (any other operation is named in the
      // summary); planning only what changed takes one pass, a whole-root plan one or more per window.
      const passes = whole ? '\\d+ pass(?:es)?' : '1 pass';
      const noChange = m.code === 0 && new RegExp(`converged in [^(]*\\(${passes}\\): 0 downloaded \\(0 B\\), 0 uploaded \\(0 B\\), 0 conflicts, 0 failed$`).test(m.summary);
      if (!noChange) console.log(`  NOT a no-change pass (exit ${m.code}): ${m.summary}`);
      rows.push({
        workload,
        measurement: whole ? wholeMeasurement : measurement,
        boxsync: m,
        rclone: null,
        cp: null,
        notes: `journal.db + -wal ${((db + wal) / 1e6).toFixed(1)} MB after the run (${(before / 1e6).toFixed(1)} MB before); ${noChange ? 'nothing planned' : `NOT a no-change pass: ${m.summary}`}`,
        detail: {
          files,
          folders,
          entries,
          journalBytes: db,
          walBytes: wal,
          journalBytesBefore: before,
          noChange,
          wholeRootPlan: whole,
          setupServerSeconds: fx.seconds.server,
          setupDiskSeconds: fx.seconds.local,
          setupJournalSeconds: fx.seconds.journal,
        },
      });
    }
    return rows;
  } finally {
    await srv.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The million-file tree (issue 29 point 6): MILLION files of about 128 bytes, 10 per folder (1,000,000 files in
 * 100,000 folders with --full), seeded into a box-server of its own (box-server only: rclone and `cp -r` are not run
 * at this size). Its first mirror by `sync --once` with the default config (zip downloads on), then on that mirror
 * the idle daemon (idleDaemon: its first pass, VmRSS after --idle-sec, inotify watches against the budget, 100
 * edits while it runs).
 */
async function millionRows(dir: string, files: number): Promise<Row[]> {
  const folders = Math.ceil(files / MILLION_FILES_PER_FOLDER);
  const w: Workload = { name: `${fmt(files)} small files / ${fmt(folders)} folders`, files, totalBytes: files * 128, folders };
  const heapMiB = getHeapStatistics().heap_size_limit / MiB;
  const needMiB = (files * 3.6 * 1024) / MiB + 300;
  if (needMiB > heapMiB) {
    console.log(`\n${w.name}: skipped: box-server needs about ${Math.round(needMiB)} MiB of heap for it and this process has ${Math.round(heapMiB)} MiB`);
    return [{ workload: w.name, measurement: 'initial mirror', boxsync: null, rclone: null, cp: null, notes: 'skipped: not enough heap for box-server' }];
  }
  const srv = await startBoxServer({ port: 0, tokens: [TOKEN] });
  try {
    const t0 = performance.now();
    const web = srv.control.as('1');
    const rootId = web.createFolder('0', rootName(w)).id;
    for (let d = 0; d < folders; d++) {
      const folderId = web.createFolder(rootId, `dir-${String(d).padStart(6, '0')}`).id;
      for (let i = d * MILLION_FILES_PER_FOLDER; i < Math.min(files, (d + 1) * MILLION_FILES_PER_FOLDER); i++) {
        web.uploadFile(folderId, `file-${String(i).padStart(7, '0')}.bin`, content(i, 128));
      }
      if ((d + 1) % 10_000 === 0) console.log(`  ${w.name}: ${fmt((d + 1) * MILLION_FILES_PER_FOLDER)} files seeded after ${((performance.now() - t0) / 1000).toFixed(0)} s`);
    }
    console.log(`\n${w.name}: seeded in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const mirror = join(dir, 'mirror');
    const configFile = join(dir, 'config.json');
    const socketPath = join(dir, 'control.sock');
    await mkdir(dir, { recursive: true });
    await writeBoxConfig(configFile, { srv, token: TOKEN, remoteId: rootId, localPath: mirror, stateDir: join(dir, 'state'), socketPath, extra: { rateLimit: undefined } });
    const m = await measureSync(configFile);
    const mirrored = await fileCount(mirror);
    const whole = m.code === 0 && mirrored === files;
    if (!whole) console.log(`  boxsync: exit ${m.code}, ${mirrored}/${files} files: ${m.summary}`);
    const rows: Row[] = [
      {
        workload: w.name,
        measurement: 'initial mirror',
        boxsync: m,
        rclone: null,
        cp: null,
        files,
        notes: `box-server only (rclone, cp -r and the node floor are not run at this size); zip downloads on (the default)${whole ? '' : `; NOT a whole mirror: exit ${m.code}, ${fmt(mirrored)}/${fmt(files)} files`}`,
        detail: { files, folders, mirroredFiles: mirrored },
      },
    ];
    if (whole) rows.push(...(await idleDaemon(w, configFile, socketPath, null)));
    return rows;
  } finally {
    await srv.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Drops every root's clean mark, as a crash between observing and converging leaves it. */
function clearAllCleanMarks(journalFile: string): void {
  const db = new Database(journalFile);
  try {
    db.prepare(`DELETE FROM meta WHERE key LIKE 'clean:%'`).run();
  } finally {
    db.close();
  }
}

/** The best (fastest) initial mirror of each client over a workload's rounds, and the API calls it made. */
interface Best {
  readonly boxsync: Measured | null;
  readonly rclone: Measured | null;
  readonly cp: Measured | null;
  readonly floor: Measured | null;
  readonly boxsyncWire: Measured | null;
  readonly rcloneBox: Measured | null;
  readonly boxsyncCalls: RequestCount | null;
  readonly rcloneBoxCalls: RequestCount | null;
  readonly boxsyncWireCalls: RequestCount | null;
}

const fileCount = (dir: string): Promise<number> => treeStats(dir).then((s) => s.files, () => 0);

/**
 * One round on Box's wire (compare-wire.ts): `boxsync sync --once` and rclone's Box backend, each into an empty
 * folder, from the as-box server through its proxy (which goes first alternates by round); a run that does not
 * end with exit 0 and every file is printed and not kept.
 */
async function onBoxWire(w: Workload, wire: AsBoxServer, rootId: string, base: string, round: number, rcloneBoxConfig: string, best: Best): Promise<Best> {
  let out = best;
  const faster = (a: Measured | null, b: Measured): boolean => a === null || b.wallMs < a.wallMs;
  const runBox = async (): Promise<void> => {
    const mirror = join(base, `wire-mirror-${round}`);
    const configFile = join(base, `wire-config-${round}.json`);
    await writeWireConfig(configFile, { box: wire, token: TOKEN, remoteId: rootId, localPath: mirror, stateDir: join(base, `wire-state-${round}`), socketPath: join(base, `wire-control-${round}.sock`) });
    const { m, calls } = await counted(wire.server, () => measureWireSync(wire, configFile));
    const files = await fileCount(mirror);
    if (m.code !== 0 || files !== w.files) console.log(`  boxsync on Box's wire: exit ${m.code}, ${files}/${w.files} files: ${m.summary}`);
    else if (faster(out.boxsyncWire, m)) out = { ...out, boxsyncWire: m, boxsyncWireCalls: calls };
    await rm(mirror, { recursive: true, force: true });
  };
  const runRclone = async (): Promise<void> => {
    if (!hasRclone) return;
    const dest = join(base, `rclone-box-${round}`);
    const { m, calls } = await counted(wire.server, () => rcloneBoxCopy(wire, rootName(w), dest, rcloneBoxConfig));
    const files = await fileCount(dest);
    if (m.code !== 0 || files !== w.files) console.log(`  rclone's Box backend: exit ${m.code}, ${files}/${w.files} files: ${m.summary}`);
    else if (faster(out.rcloneBox, m)) out = { ...out, rcloneBox: m, rcloneBoxCalls: calls };
    await rm(dest, { recursive: true, force: true });
  };
  for (const step of round % 2 === 0 ? [runBox, runRclone] : [runRclone, runBox]) await step();
  return out;
}

/**
 * The first mirror of the small-file workload from a box-server with Box's limits on (`boxLimits`: 1,000 API calls
 * and 240 uploads a minute per user, 429 + Retry-After), by `sync --once` with the default config: its wall time and
 * its API calls (issue 29: 20,000 small files under 2 minutes; at one API call per file it would take 20+).
 */
async function withBoxLimits(w: Workload, limited: BoxServer, rootId: string, base: string): Promise<Row> {
  const mirror = join(base, 'limits-mirror');
  const configFile = join(base, 'limits-config.json');
  await writeBoxConfig(configFile, {
    srv: limited,
    token: TOKEN,
    remoteId: rootId,
    localPath: mirror,
    stateDir: join(base, 'limits-state'),
    socketPath: join(base, 'limits-control.sock'),
    extra: { rateLimit: undefined },
  });
  const { m, calls } = await counted(limited, () => measureSync(configFile));
  const files = await fileCount(mirror);
  const whole = m.code === 0 && files === w.files;
  if (!whole) console.log(`  boxsync with Box's limits on: exit ${m.code}, ${files}/${w.files} files: ${m.summary}`);
  return {
    workload: w.name,
    measurement: "initial mirror, Box's limits on",
    boxsync: m,
    rclone: null,
    cp: null,
    boxsyncCalls: calls,
    files: w.files,
    notes:
      `box-server with boxLimits (${fmt(BOX_API_CALLS_PER_MINUTE)} API calls, ${BOX_UPLOADS_PER_MINUTE} uploads a minute): ${calls.complete ? '' : 'at least '}${fmt(calls.apiCalls)} API calls ` +
      `(${fmt(calls.refused)} answered 429), ${fmt(calls.other)} other requests (download and zip content URLs, long polls)` +
      (whole ? '' : `; NOT a whole mirror: exit ${m.code}, ${fmt(files)}/${fmt(w.files)} files`),
    detail: {
      files: w.files,
      mirroredFiles: files,
      apiCalls: calls.apiCalls,
      refused429: calls.refused,
      otherRequests: calls.other,
      countComplete: calls.complete,
      apiCallsPerMinute: BOX_API_CALLS_PER_MINUTE,
      uploadsPerMinute: BOX_UPLOADS_PER_MINUTE,
    },
  };
}

/** 100 edits on Box and 100 in the mirror (issue 29: "100 + 100 edits"; edits.ts), then one timed `sync --once`. */
async function hundredEdits(srv: BoxServer, rootId: string, mirror: string, configFile: string): Promise<Measured> {
  await editBothSides(srv, rootId, mirror, 100);
  return measureSync(configFile);
}

/**
 * One unmeasured `sync --once` of a few files before the first measured run, so that `boxsync sync`'s V8 code cache
 * (bin/code-cache.js) holds a whole run's code, as on a machine where boxsync has run before: the first row is not
 * the one run after the build that compiles everything and writes the cache.
 */
async function warmCodeCache(srv: BoxServer, dir: string): Promise<void> {
  const web = srv.control.as('1');
  const folder = web.createFolder('0', 'Code cache warm-up');
  for (let i = 0; i < 5; i++) web.uploadFile(folder.id, `f${i}.txt`, `warm-up ${i}\n`);
  const configFile = join(dir, 'config.json');
  await mkdir(dir, { recursive: true });
  await writeBoxConfig(configFile, { srv, token: TOKEN, remoteId: folder.id, localPath: join(dir, 'mirror'), stateDir: join(dir, 'state'), socketPath: join(dir, 'c.sock') });
  const m = await measureSync(configFile);
  if (m.code !== 0) console.log(`code cache warm-up run: exit ${m.code}: ${m.summary}`);
}

export async function run(): Promise<void> {
  if (!hasRclone) console.log('rclone is not installed: its columns read n/a. Install it with: apt-get install rclone');
  const tmp = await makeTempDir('boxsync-compare-');
  const rcloneConfig = join(tmp.dir, 'rclone.conf');
  await writeFile(rcloneConfig, '');
  const rcloneBoxConfig = join(tmp.dir, 'rclone-box.conf');
  await writeRcloneBoxConfig(rcloneBoxConfig, TOKEN);
  const srv = await startBoxServer({ port: 0, tokens: [TOKEN] });
  const rows: Row[] = [];
  try {
    await warmCodeCache(srv, join(tmp.dir, 'warm-up'));
    for (const [wi, w] of (MILLION_ONLY ? [] : WORKLOADS).entries()) {
      const base = join(tmp.dir, `w${wi}`);
      const src = join(base, 'src');
      await mkdir(src, { recursive: true });
      const t0 = performance.now();
      // Box's wire: box-server as Box, for this workload only; Box's limits: another box-server, for the small-file workload.
      const wire = WIRE ? await startWire(TOKEN) : null;
      const limited = w.small ? await startBoxServer({ port: 0, tokens: [TOKEN], boxLimits: true }) : null;
      let served: { url: string; child: ChildProcess } | null = null;
      try {
        const ids = await seed([srv, ...(wire ? [wire.server] : []), ...(limited ? [limited] : [])], src, w);
        const rootId = ids.shift()!;
        const [wireRootId, limitedRootId] = [wire ? ids.shift() : undefined, ids.shift()];
        console.log(`\n${w.name}: seeded in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
        served = hasRclone ? await serveHttp(src, rcloneConfig) : null;
        let best: Best = { boxsync: null, rclone: null, cp: null, floor: null, boxsyncWire: null, rcloneBox: null, boxsyncCalls: null, rcloneBoxCalls: null, boxsyncWireCalls: null };
        const keepBest = (a: Measured | null, b: Measured): Measured => (a === null || b.wallMs < a.wallMs ? b : a);
        let lastMirror = '';
        let lastConfig = '';
        let lastSocket = '';
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
            const { m, calls } = await counted(srv, () => measureSync(configFile));
            const st = await treeStats(mirror);
            if (m.code !== 0 || st.files !== w.files) console.log(`  boxsync: exit ${m.code}, ${st.files}/${w.files} files: ${m.summary}`);
            if (keepBest(best.boxsync, m) === m) best = { ...best, boxsync: m, boxsyncCalls: calls };
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
          if (wire) best = await onBoxWire(w, wire, wireRootId!, base, round, rcloneBoxConfig, best);
          const floorDest = join(base, `floor-${round}`);
          const floor = await nodeFloor(srv, rootId, floorDest);
          const floorFiles = (await treeStats(floorDest)).files;
          if (floor.code !== 0 || floorFiles !== w.files) console.log(`  node floor: exit ${floor.code}, ${floorFiles}/${w.files} files: ${floor.summary}`);
          else best = { ...best, floor: keepBest(best.floor, floor) };
          await rm(floorDest, { recursive: true, force: true });
          const cpDest = join(base, `cp-${round}`);
          best = { ...best, cp: keepBest(best.cp, await measureCommand(['cp', '-r', src, cpDest])) };
          await rm(cpDest, { recursive: true, force: true });
          lastMirror = mirror;
          lastConfig = configFile;
          lastSocket = join(base, `control-${round}.sock`);
          lastRcloneDest = rdest;
        }
        rows.push({ workload: w.name, measurement: 'initial mirror', ...best, files: w.files });
        if (limited) rows.push(await withBoxLimits(w, limited, limitedRootId!, base));
        if (wi === WORKLOADS.length - 1) {
          const noChange = await measureSync(lastConfig);
          const rcloneNoChange = served ? await rcloneCopy(served.url, lastRcloneDest, rcloneConfig) : null;
          rows.push({ workload: w.name, measurement: 'no-change run', boxsync: noChange, rclone: rcloneNoChange, cp: null });
          // The run before found each folder equal to its rows and marked it (listing marks): this one skips them.
          rows.push({ workload: w.name, measurement: 'no-change run again (listing marks made by the run before)', boxsync: await measureSync(lastConfig), rclone: null, cp: null });
          rows.push({ workload: w.name, measurement: '100 + 100 edits (100 on Box, 100 in the mirror)', boxsync: await hundredEdits(srv, rootId, lastMirror, lastConfig), rclone: null, cp: null });
          rows.push(...(await idleDaemon(w, lastConfig, lastSocket, { srv, rootId, mirror: lastMirror })));
        }
      } finally {
        served?.child.kill('SIGTERM');
        await wire?.close();
        await limited?.close();
      }
      await rm(base, { recursive: true, force: true });
    }
    // In a box-server of its own: the workloads' items and events are gone from memory by then.
    await srv.close();
    if (!MILLION_ONLY) rows.push(...(await largeJournal(join(tmp.dir, 'journal'))));
    if (MILLION !== null) rows.push(...(await millionRows(join(tmp.dir, 'million'), MILLION)));
  } finally {
    await srv.close();
    await tmp.cleanup();
  }

  console.log(
    '\n| workload | measurement | boxsync s | rclone s | ratio | cp -r s | node floor s | boxsync peak RSS MiB | rclone peak RSS MiB | boxsync CPU s | rclone CPU s | node floor CPU s ' +
      "| Box's wire: boxsync s | Box's wire: rclone Box s | Box's wire: ratio | Box's wire: boxsync peak RSS MiB | Box's wire: rclone Box peak RSS MiB " +
      "| boxsync API calls / file | Box's wire: boxsync API calls / file | Box's wire: rclone Box API calls / file | notes |",
  );
  console.log(`|${'---|'.repeat(21)}`);
  for (const r of rows) {
    const ratio = r.boxsync && r.rclone ? (r.boxsync.wallMs / r.rclone.wallMs).toFixed(2) : 'n/a';
    const floor = r.floor ?? null;
    const [boxWire, rcloneBox] = [r.boxsyncWire ?? null, r.rcloneBox ?? null];
    const wireRatio = boxWire && rcloneBox ? (boxWire.wallMs / rcloneBox.wallMs).toFixed(2) : 'n/a';
    const files = r.files ?? 0;
    console.log(
      `| ${r.workload} | ${r.measurement} | ${sec(r.boxsync)} | ${sec(r.rclone)} | ${ratio} | ${sec(r.cp)} | ${sec(floor)} | ${rss(r.boxsync)} | ${rss(r.rclone)} | ${cpu(r.boxsync)} | ${cpu(r.rclone)} | ${cpu(floor)} ` +
        `| ${sec(boxWire)} | ${sec(rcloneBox)} | ${wireRatio} | ${rss(boxWire)} | ${rss(rcloneBox)} ` +
        `| ${perFile(r.boxsyncCalls, files)} | ${perFile(r.boxsyncWireCalls, files)} | ${perFile(r.rcloneBoxCalls, files)} | ${r.notes ?? ''} |`,
    );
  }
  const outDir = join(repoRoot, 'bench');
  await mkdir(outDir, { recursive: true });
  await writeFile(
    join(outDir, 'results.json'),
    `${JSON.stringify({ when: new Date().toISOString(), full, rounds: ROUNDS, scale: SCALE, small: SMALL, journalFiles: JOURNAL_FILES, idleSeconds: IDLE_SEC, million: MILLION, node: process.version, rows }, null, 2)}\n`,
  );
  console.log(`\nwritten: bench/results.json`);
}
