/**
 * Daemon figures (printed, never asserted):
 * 1. inotify watches used by each watcher for a tree of BENCH_FILES files in BENCH_FOLDERS folders
 *    (default 100,000 in 5,000), against the per-user limit;
 * 2. the real daemon process on a mirror of that size (created directly on disk and in box-server, then
 *    reconciled by the daemon's first pass): change latency both ways, p50 and p99 over BENCH_CHANGES changes
 *    (default 100) each way;
 * 3. idle CPU and RSS of the daemon watching that mirror, and its inotify watches;
 * 4. latency while the first mirror runs: box-server holds BENCH_BUSY_FILES small files (default 10,000) in
 *    BENCH_BUSY_FILES/50 folders and the local folder is empty; while the daemon's first pass downloads them,
 *    BENCH_BUSY_PROBES probes each way (default 10), alternately a new file created on Box (box-server's control
 *    API, in the synced folder's root) and a new file written in the local mirror's root. A probe has arrived when
 *    the other side holds it with its exact content (the local file reads back the same; box-server's store has a
 *    file of that name under the synced folder whose content is the same). Prints p50 and max each way, how many
 *    probes were sent and how many landed before the first mirror was complete (every seeded file present
 *    locally, counted by name; downloads are renamed into place, so present means complete), and the first
 *    mirror's duration. Probes start once 5% of the files are local (the first pass is running and far from
 *    done); the gap before each next probe is 30% of the estimated time left (from the rate files arrived
 *    locally in the last 5 s) shared among the probes left, so that all are sent well before the mirror is complete
 *    (BENCH_BUSY_PROBE_EVERY_MS sets a fixed gap instead). A probe that does not arrive within
 *    BENCH_BUSY_WAIT_SEC (default 120) is reported as lost. After the first mirror, the idle latency both ways
 *    (as in 2, BENCH_CHANGES edits each way) on that same daemon.
 * 5. a build's churn of 2 x BENCH_CHURN_FILES watcher events (default 50,000; see runChurn): status answers and the
 *    event loop's longest block. BENCH_CHURN=0 skips it; BENCH_CHURN_ONLY=1 runs it alone.
 * 6. small edits during a big upload (see runLane): p50 and max latency of BENCH_LANE_EDITS (default 100) edits to
 *    small synced files while a BENCH_LANE_BIG_MB (default 500) MB upload runs, without and with --bwlimit 20M.
 *    BENCH_LANE=0 skips it; BENCH_LANE_ONLY=1 runs it alone.
 * 7. live changes at any moment of a big first pass (see runProbes): a pair of probes (one new file on Box, one in the
 *    mirror) every BENCH_PROBES_EVERY_MS (2,500) through the whole first pass of BENCH_PROBES_FILES (10,000) small
 *    files, with zip downloads on and off: p50 and max each way, by what the pass was doing when the probe was made.
 *    BENCH_PROBES=0 skips it; BENCH_PROBES_ONLY=1 runs it alone; BENCH_PROBES_LIST=1 prints every probe.
 * The daemons run from the build (bin/boxsync.js over dist/, which `npm run bench` builds first), with
 * transferConcurrency 8. BENCH_DAEMON=0 runs 1 only; BENCH_BUSY=0 skips 4; BENCH_BUSY_ONLY=1 runs 4 only. The
 * first pass is bounded by BENCH_INITIAL_MAX_SEC (default 900).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { appendFileSync, existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startBoxServer, type BoxServer, type ServerActor } from '../../src/box-server/index.js';
import { sendControl } from '../../src/daemon/control/control-client.js';
import type { DaemonStatus } from '../../src/daemon/control/control-protocol.js';
import { createWatcher } from '../../src/local/watcher-factory.js';
import { countInotifyWatches, inotifyWatchLimit } from '../../src/local/watcher-inotify-usage.js';
import type { WatcherKind } from '../../src/local/watcher-options.js';
import { writeBoxConfig } from '../support/box-config.js';
import { repoRoot } from '../support/cli.js';
import { makeTempDir } from '../support/tmp.js';
import { askStatusAllAlong } from '../support/status-asker.js';

const FILES = Number(process.env.BENCH_FILES ?? 100_000);
const FOLDERS = Number(process.env.BENCH_FOLDERS ?? 5_000);
const CHANGES = Number(process.env.BENCH_CHANGES ?? 100);
const INITIAL_MAX_MS = 1000 * Number(process.env.BENCH_INITIAL_MAX_SEC ?? 900);
const BUSY_FILES = Number(process.env.BENCH_BUSY_FILES ?? 10_000);
const BUSY_PER_FOLDER = 50;
const BUSY_PROBES = Number(process.env.BENCH_BUSY_PROBES ?? 10);
const BUSY_WAIT_MS = 1000 * Number(process.env.BENCH_BUSY_WAIT_SEC ?? 120);
const BUSY_PROBE_EVERY_MS = process.env.BENCH_BUSY_PROBE_EVERY_MS ? Number(process.env.BENCH_BUSY_PROBE_EVERY_MS) : null;

const folderName = (d: number): string => `d${String(d).padStart(4, '0')}`;
const fileName = (i: number): string => `f${i}.txt`;
const content = (d: number, i: number): string => `file ${d}/${i}\n`;
const sec = (ms: number): string => (ms / 1000).toFixed(1);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function makeTree(root: string): Promise<void> {
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

/** box-server gets `files` files, `perFolder` to a folder, under a new folder `name` at the top; returns its id and the files. */
export function seedBox(web: ServerActor, name: string, files: number, perFolder: number): { rootId: string; seeded: SeededFile[] } {
  const rootId = web.createFolder('0', name).id;
  const seeded: SeededFile[] = [];
  for (let d = 0; seeded.length < files; d++) {
    const folderId = web.createFolder(rootId, folderName(d)).id;
    const n = Math.min(perFolder, files - seeded.length);
    for (let i = 0; i < n; i++) seeded.push({ id: web.uploadFile(folderId, fileName(i), content(d, i)).id, rel: join(folderName(d), fileName(i)) });
  }
  return { rootId, seeded };
}

interface SeededFile {
  readonly id: string;
  /** Path under the mirror. */
  readonly rel: string;
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
    await sleep(intervalMs);
  }
  return false;
}

export function cpuTicks(pid: number): Promise<number> {
  return readFile(`/proc/${pid}/stat`, 'utf8').then((s) => {
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]);
  });
}

export async function rssMb(pid: number): Promise<number> {
  const s = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(s)?.[1] ?? 0) / 1024;
}

/** A daemon child process as a user runs it: bin/boxsync.js over the build (the sources through tsx when there is none). */
export interface DaemonChild {
  readonly child: ChildProcess;
  readonly status: () => Promise<DaemonStatus>;
  /** The last of what it printed. */
  readonly output: () => string;
  readonly stop: () => Promise<void>;
}

const runsFrom = (): string => (existsSync(join(repoRoot, 'dist', 'cli', 'main.js')) ? 'the build (dist/)' : 'the sources through tsx (no dist/)');

export async function startDaemon(o: { srv: BoxServer; dir: string; remoteId: string; mirror: string; extra?: Record<string, unknown>; loopProbeFile?: string }): Promise<DaemonChild> {
  const socketPath = join(o.dir, 'c.sock');
  const configFile = join(o.dir, 'config.json');
  await mkdir(o.dir, { recursive: true });
  await writeBoxConfig(configFile, {
    srv: o.srv,
    token: 'T',
    remoteId: o.remoteId,
    localPath: o.mirror,
    stateDir: join(o.dir, 'state'),
    socketPath,
    extra: { transferConcurrency: 8, log: { level: process.env.BENCH_DAEMON_LOG_LEVEL ?? 'warn' }, ...o.extra, ...(process.env.BENCH_WINDOW_ENTRIES ? { planWindowEntries: Number(process.env.BENCH_WINDOW_ENTRIES) } : {}) },
  });
  const env = { ...process.env };
  delete env['BOXSYNC_FROM_SOURCE'];
  // BENCH_DAEMON_NODE_ARGS: node options for the daemon (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" for a profile).
  const nodeArgs = (process.env.BENCH_DAEMON_NODE_ARGS ?? '').split(' ').filter(Boolean);
  if (o.loopProbeFile !== undefined) {
    nodeArgs.push('--import', pathToFileURL(join(repoRoot, 'test', 'bench', 'loop-probe.mjs')).href);
    env['BOXSYNC_LOOP_PROBE_FILE'] = o.loopProbeFile;
  }
  const child = spawn(process.execPath, [...nodeArgs, join(repoRoot, 'bin', 'boxsync.js'), 'daemon', '--config', configFile], {
    cwd: repoRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  // BENCH_DAEMON_LOG=FILE: everything the daemon prints is appended to FILE too (BENCH_DAEMON_LOG_LEVEL sets its level).
  const logFile = process.env.BENCH_DAEMON_LOG;
  const keep = (d: Buffer): void => {
    out = (out + d.toString()).slice(-20_000);
    if (logFile) appendFileSync(logFile, d);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const closed = new Promise<void>((r) => child.once('close', () => r()));
  return {
    child,
    status: () => sendControl<DaemonStatus>(socketPath, { verb: 'status' }),
    output: () => out.slice(-2000),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      await closed;
      clearTimeout(timer);
    },
  };
}

/** The daemon has finished a pass and settled: idle, watchers running. */
export async function settled(d: DaemonChild): Promise<boolean> {
  const s = await d.status().catch(() => null);
  return s !== null && s.engine.lastSuccessfulSyncAtMs !== null && s.engine.phase === 'idle' && s.watchers.every((w) => w.health.state !== 'starting');
}

/** Change latency both ways on an idle daemon: `changes` Box edits of seeded files, then `changes` local edits. */
async function idleLatency(web: ServerActor, mirror: string, files: readonly SeededFile[], changes: number, label: string): Promise<void> {
  const down: number[] = [];
  for (let k = 0; k < changes; k++) {
    const f = files[(k * 7919) % files.length]!;
    const text = `remote edit ${k} ${Date.now()}\n`;
    const start = Date.now();
    web.uploadVersion(f.id, text);
    const ok = await until(async () => (await readFile(join(mirror, f.rel), 'utf8').catch(() => '')) === text, 30_000);
    down.push(ok ? Date.now() - start : Number.POSITIVE_INFINITY);
  }
  const up: number[] = [];
  for (let k = 0; k < changes; k++) {
    const f = files[(k * 104_729 + 13) % files.length]!;
    const text = `local edit ${k} ${Date.now()}\n`;
    const sha1 = createHash('sha1').update(text).digest('hex');
    const start = Date.now();
    await writeFile(join(mirror, f.rel), text);
    const ok = await until(() => web.getItem('file', f.id)?.['sha1'] === sha1, 30_000);
    up.push(ok ? Date.now() - start : Number.POSITIVE_INFINITY);
  }
  for (const [name, xs] of [['remote -> local', down], ['local -> remote', up]] as const) {
    const sorted = [...xs].sort((a, b) => a - b);
    const lost = sorted.filter((x) => !Number.isFinite(x)).length;
    console.log(`latency ${label}, ${name}: p50 ${percentile(sorted, 50)} ms, p99 ${percentile(sorted, 99)} ms over ${xs.length} changes${lost ? ` (${lost} did not arrive within 30 s)` : ''}`);
  }
}

/** Parts 2 and 3: the daemon on a mirror that exists on both sides. */
async function runIdle(dir: string, mirror: string): Promise<void> {
  const srv = await startBoxServer({ port: 0, tokens: ['T'], longPollTimeoutMs: 30_000 });
  const web = srv.control.as('1');
  let daemon: DaemonChild | null = null;
  try {
    let t0 = Date.now();
    const { rootId, seeded } = seedBox(web, 'Mirror', FILES, Math.ceil(FILES / FOLDERS));
    console.log(`box-server: the same tree created in ${sec(Date.now() - t0)} s`);

    t0 = Date.now();
    daemon = await startDaemon({ srv, dir: join(dir, 'idle'), remoteId: rootId, mirror });
    if (!(await until(() => settled(daemon!), INITIAL_MAX_MS, 500))) {
      console.log(`daemon: first pass did not finish within ${INITIAL_MAX_MS / 1000} s; no latency figures. Last output:\n${daemon.output()}`);
      return;
    }
    const first = await daemon.status();
    console.log(`daemon, run from ${runsFrom()}: first pass (list + scan + link ${FILES} files) took ${sec(Date.now() - t0)} s; ${first.engine.roots[0]!.inSync.files} files in sync`);

    await idleLatency(web, mirror, seeded, CHANGES, 'when idle');

    const pid = daemon.child.pid!;
    await until(async () => (await daemon!.status()).engine.phase === 'idle', 30_000, 200);
    const idleSec = 20;
    const c0 = await cpuTicks(pid);
    await sleep(idleSec * 1000);
    const c1 = await cpuTicks(pid);
    console.log(
      `daemon idle: ${(((c1 - c0) / 100 / idleSec) * 100).toFixed(2)} % CPU over ${idleSec} s, RSS ${(await rssMb(pid)).toFixed(0)} MB, ` +
        `${await countInotifyWatches(pid)} inotify watches`,
    );
  } finally {
    await daemon?.stop();
    await srv.close();
  }
}

interface Probe {
  readonly way: 'remote -> local' | 'local -> remote';
  readonly name: string;
  readonly text: string;
  readonly sentAtMs: number;
  /** Sent before every seeded file was local. */
  readonly duringFirstMirror: boolean;
  arrivedAtMs: number | null;
  lost: boolean;
}

/** How many of the seeded files are in the mirror, by name (folders found complete are not read again). */
function mirrorCounter(mirror: string, seeded: readonly SeededFile[]): () => Promise<number> {
  const expected = new Map<string, Set<string>>();
  for (const f of seeded) {
    const [folder, name] = f.rel.split('/') as [string, string];
    let names = expected.get(folder);
    if (!names) expected.set(folder, (names = new Set()));
    names.add(name);
  }
  const complete = new Set<string>();
  let completeFiles = 0;
  return async () => {
    let n = completeFiles;
    await Promise.all(
      [...expected].filter(([folder]) => !complete.has(folder)).map(async ([folder, names]) => {
        const present = (await readdir(join(mirror, folder)).catch(() => [] as string[])).filter((x) => names.has(x)).length;
        if (present === names.size) {
          complete.add(folder);
          completeFiles += present;
        }
        n += present;
      }),
    );
    return n;
  };
}

/** Part 4: latency of live changes while the first mirror of BENCH_BUSY_FILES files runs, then when idle. */
async function runBusy(dir: string): Promise<void> {
  const srv = await startBoxServer({ port: 0, tokens: ['T'], longPollTimeoutMs: 30_000 });
  const web = srv.control.as('1');
  let daemon: DaemonChild | null = null;
  try {
    let t0 = Date.now();
    const { rootId, seeded } = seedBox(web, 'Busy', BUSY_FILES, BUSY_PER_FOLDER);
    const folders = Math.ceil(BUSY_FILES / BUSY_PER_FOLDER);
    console.log(`busy: box-server seeded with ${BUSY_FILES} files in ${folders} folders in ${sec(Date.now() - t0)} s; the local folder is empty`);
    const mirror = join(dir, 'Busy');
    await mkdir(mirror, { recursive: true });
    const mirrored = mirrorCounter(mirror, seeded);

    t0 = Date.now();
    daemon = await startDaemon({ srv, dir: join(dir, 'busy'), remoteId: rootId, mirror });
    let firstMirrorAtMs: number | null = null;
    let count = 0;
    const samples: { ms: number; n: number }[] = [];
    const countNow = async (): Promise<number> => {
      count = await mirrored();
      samples.push({ ms: Date.now(), n: count });
      while (samples.length > 2 && samples[1]!.ms < Date.now() - 5000) samples.shift();
      if (count === BUSY_FILES && firstMirrorAtMs === null) firstMirrorAtMs = Date.now();
      return count;
    };
    // The first pass is running and far from done: 2% of the files are local; the rate from 2% to 5% spaces the probes.
    const from = Math.max(1, Math.ceil(BUSY_FILES * 0.02));
    const to = Math.max(from + 1, Math.ceil(BUSY_FILES * 0.05));
    const begun = await until(async () => (await countNow()) >= from, INITIAL_MAX_MS, 50);
    const fromAt = { ms: Date.now(), n: count };
    const going = begun && (await until(async () => (await countNow()) >= to, INITIAL_MAX_MS - (Date.now() - t0), 50));
    if (!going) {
      console.log(`busy: the daemon mirrored only ${count} of ${BUSY_FILES} files within ${INITIAL_MAX_MS / 1000} s; no figures. Last output:\n${daemon.output()}`);
      return;
    }
    const toAt = { ms: Date.now(), n: count };
    const total = 2 * BUSY_PROBES;
    const probesFromMs = Date.now();
    // The gap before the next probe: 30% of the estimated time left, shared among the probes left, with the rate
    // of the last 5 s (so the estimate follows the daemon as it speeds up or slows down). With a steady rate the
    // last probe goes out with a third of the mirror still to do or more, a margin for a rate that varies.
    const gapMs = (left: number): number => {
      if (BUSY_PROBE_EVERY_MS !== null) return BUSY_PROBE_EVERY_MS;
      const a = samples[0]!;
      const b = samples[samples.length - 1]!;
      const ratePerMs = (b.n - a.n) / Math.max(1, b.ms - a.ms);
      const remainingMs = ratePerMs > 0 ? (BUSY_FILES - count) / ratePerMs : 60_000;
      return Math.round(Math.min(30_000, Math.max(50, (0.3 * remainingMs) / left)));
    };
    const rate = (toAt.n - fromAt.n) / Math.max(1, toAt.ms - fromAt.ms);
    console.log(
      `busy: daemon run from ${runsFrom()}; ${toAt.n} of ${BUSY_FILES} files local after ${sec(probesFromMs - t0)} s ` +
        `(${Math.round(rate * 1000)} files/s, about ${sec((BUSY_FILES - toAt.n) / rate)} s to go); ${total} probes start, ` +
        (BUSY_PROBE_EVERY_MS === null ? 'spread over the first part of the time left' : `one every ${BUSY_PROBE_EVERY_MS} ms`),
    );

    const probes: Probe[] = [];
    const send = async (k: number): Promise<void> => {
      const n = Math.floor(k / 2);
      const way = k % 2 === 0 ? 'remote -> local' : 'local -> remote';
      const name = `probe-${way === 'remote -> local' ? 'down' : 'up'}-${String(n).padStart(3, '0')}.txt`;
      const text = `probe ${way} ${n} ${randomBytes(8).toString('hex')}\n`;
      const sentAtMs = Date.now();
      if (way === 'remote -> local') web.uploadFile(rootId, name, text);
      else await writeFile(join(mirror, name), text);
      probes.push({ way, name, text, sentAtMs, duringFirstMirror: firstMirrorAtMs === null, arrivedAtMs: null, lost: false });
    };
    const arrived = async (p: Probe): Promise<boolean> => {
      if (p.way === 'remote -> local') return (await readFile(join(mirror, p.name), 'utf8').catch(() => null)) === p.text;
      const item = web.findByPath(`Busy/${p.name}`);
      return item?.type === 'file' && web.readFile(item.id).toString('utf8') === p.text;
    };
    let sent = 0;
    let nextAtMs = probesFromMs;
    let lastCountMs = 0;
    // The daemon's own word: when it first recorded a successful pass (a later pass overwrites the value).
    let firstSuccessAtMs: number | null = null;
    let lastStatusMs = 0;
    for (;;) {
      const now = Date.now();
      if (sent < total && now >= nextAtMs) {
        await send(sent++);
        if (sent < total) nextAtMs = now + gapMs(total - sent);
      }
      await Promise.all(
        probes
          .filter((p) => p.arrivedAtMs === null && !p.lost)
          .map(async (p) => {
            if (await arrived(p)) p.arrivedAtMs = Date.now();
            else if (Date.now() - p.sentAtMs > BUSY_WAIT_MS) p.lost = true;
          }),
      );
      if (firstMirrorAtMs === null && now - lastCountMs >= 250) {
        lastCountMs = now;
        await countNow();
      }
      if (firstSuccessAtMs === null && now - lastStatusMs >= 500) {
        lastStatusMs = now;
        firstSuccessAtMs = (await daemon.status().catch(() => null))?.engine.lastSuccessfulSyncAtMs ?? null;
      }
      const probesDone = sent === total && probes.every((p) => p.arrivedAtMs !== null || p.lost);
      if (probesDone && (firstMirrorAtMs !== null || Date.now() - t0 > INITIAL_MAX_MS)) break;
      await sleep(20);
    }
    await until(async () => {
      firstSuccessAtMs ??= (await daemon!.status().catch(() => null))?.engine.lastSuccessfulSyncAtMs ?? null;
      return firstSuccessAtMs !== null;
    }, 120_000, 100);

    console.log(
      firstMirrorAtMs === null
        ? `busy: first mirror not complete after ${INITIAL_MAX_MS / 1000} s (${count} of ${BUSY_FILES} files local)`
        : `busy: first mirror of ${BUSY_FILES} files took ${sec(firstMirrorAtMs - t0)} s (every file local, counted every 250 ms)` +
            `${firstSuccessAtMs === null ? '' : `; the daemon first reported a successful pass at ${sec(firstSuccessAtMs - t0)} s (its status polled)`}`,
    );
    const sentAt = probes.map((p) => p.sentAtMs - t0);
    if (probes.length > 0) console.log(`busy: probes sent from ${sec(Math.min(...sentAt))} s to ${sec(Math.max(...sentAt))} s after the daemon started`);
    const before = (p: Probe): boolean => firstMirrorAtMs === null || (p.arrivedAtMs !== null && p.arrivedAtMs < firstMirrorAtMs);
    for (const way of ['remote -> local', 'local -> remote'] as const) {
      const mine = probes.filter((p) => p.way === way);
      const ms = mine.map((p) => (p.arrivedAtMs === null ? Number.POSITIVE_INFINITY : p.arrivedAtMs - p.sentAtMs)).sort((a, b) => a - b);
      const lost = mine.filter((p) => p.lost).length;
      const show = (x: number): string => (Number.isFinite(x) ? `${x} ms` : `lost (> ${BUSY_WAIT_MS / 1000} s)`);
      console.log(
        `latency while the first mirror runs, ${way}: p50 ${show(percentile(ms, 50))}, max ${show(ms[ms.length - 1] ?? NaN)} over ${mine.length} probes; ` +
          `${mine.filter((p) => p.duringFirstMirror).length} sent and ${mine.filter((p) => p.arrivedAtMs !== null && before(p)).length} landed before the first mirror was complete` +
          `${lost ? `; ${lost} lost` : ''}`,
      );
    }

    if (!(await until(() => settled(daemon!), 120_000, 200))) {
      console.log(`busy: the daemon did not settle after the first mirror; no idle figures. Last output:\n${daemon.output()}`);
      return;
    }
    await idleLatency(web, mirror, seeded, CHANGES, `when idle after that mirror (${BUSY_FILES} files)`);
  } finally {
    await daemon?.stop();
    await srv.close();
  }
}

const PROBE_FILES = Number(process.env.BENCH_PROBES_FILES ?? 10_000);
const PROBE_PER_FOLDER = Number(process.env.BENCH_PROBES_PER_FOLDER ?? 50);
const PROBE_EVERY_MS = Number(process.env.BENCH_PROBES_EVERY_MS ?? 2_500);

/** What the first pass was doing when a probe was made (see runProbes). */
type ProbePhase = 'before the downloads' | 'zip archive held' | 'no archive held' | 'after the mirror, pass still running';

interface PairProbe {
  readonly way: 'remote -> local' | 'local -> remote';
  readonly name: string;
  readonly text: string;
  readonly sentAtMs: number;
  readonly phase: ProbePhase;
  arrivedAtMs: number | null;
}

/**
 * 7. Live changes at any moment of a big first pass (issue 29 point 8): box-server holds BENCH_PROBES_FILES small files
 * (default 10,000, BENCH_PROBES_PER_FOLDER to a folder, 50 by default) and the mirror is empty. From 1 s after the
 * daemon starts, every BENCH_PROBES_EVERY_MS (2,500) until its first pass has ended, a pair of probes is made at the
 * top of the pair at once: a new file on Box (box-server's API) and a new file in the mirror, each timed until the
 * other side holds it with its exact content. Each probe is labelled with what the pass was doing when it was made:
 * before the downloads (no seeded file local yet), during the downloads with a zip archive held by the daemon (its
 * scratch file in <stateDir>/zip: the archive being fetched or its entries extracted) or with none (per-file
 * downloads, or planning between windows), or after the last seeded file was local while the pass had not ended.
 * Run with zip downloads on (the default, http.zipMinFiles 40) and off (zipMinFiles 0: every file downloaded alone);
 * BENCH_PROBES_ZIP=1 or 0 runs one of them. BENCH_PROBES=0 skips the row; BENCH_PROBES_ONLY=1 runs it alone.
 */
async function runProbes(dir: string, zip: boolean): Promise<void> {
  const label = zip ? 'zip downloads on' : 'zip downloads off';
  const srv = await startBoxServer({ port: 0, tokens: ['T'], longPollTimeoutMs: 30_000 });
  const web = srv.control.as('1');
  let daemon: DaemonChild | null = null;
  try {
    const { rootId, seeded } = seedBox(web, 'Probes', PROBE_FILES, PROBE_PER_FOLDER);
    const mirror = join(dir, `Probes-${zip ? 'zip' : 'files'}`);
    await mkdir(mirror, { recursive: true });
    const mirrored = mirrorCounter(mirror, seeded);
    const daemonDir = join(dir, `probes-${zip ? 'zip' : 'files'}`);
    const scratch = join(daemonDir, 'state', 'zip');
    const t0 = Date.now();
    daemon = await startDaemon({ srv, dir: daemonDir, remoteId: rootId, mirror, extra: zip ? {} : { http: { zipMinFiles: 0 } } });
    const d = daemon;
    let count = 0;
    let mirrorAtMs: number | null = null;
    let firstFileAtMs: number | null = null;
    let passEndedAtMs: number | null = null;
    const probes: PairProbe[] = [];
    const phaseNow = async (): Promise<ProbePhase> => {
      count = await mirrored();
      if (count === 0) return 'before the downloads';
      if (count === PROBE_FILES) return 'after the mirror, pass still running';
      const held = (await readdir(scratch).catch(() => [] as string[])).some((f) => f.endsWith('.zip'));
      return held ? 'zip archive held' : 'no archive held';
    };
    const arrived = async (p: PairProbe): Promise<boolean> => {
      if (p.way === 'remote -> local') return (await readFile(join(mirror, p.name), 'utf8').catch(() => null)) === p.text;
      const item = web.findByPath(`Probes/${p.name}`);
      return item?.type === 'file' && web.readFile(item.id).toString('utf8') === p.text;
    };
    // The first probe once the daemon answers `status` (its watcher and long poll are started then), or at
    // BENCH_PROBES_FIRST_MS after the start.
    const firstMs = process.env.BENCH_PROBES_FIRST_MS === undefined ? null : Number(process.env.BENCH_PROBES_FIRST_MS);
    if (firstMs === null) await until(async () => (await d.status().catch(() => null)) !== null, 60_000, 50);
    let n = 0;
    let nextAtMs = firstMs === null ? Date.now() : t0 + firstMs;
    let lastCountMs = 0;
    let lastStatusMs = 0;
    for (;;) {
      const now = Date.now();
      if (passEndedAtMs === null && now >= nextAtMs) {
        const phase = await phaseNow();
        const k = String(n++).padStart(3, '0');
        const sentAtMs = Date.now();
        const down = { way: 'remote -> local' as const, name: `probe-down-${k}.txt`, text: `probe down ${k} ${randomBytes(8).toString('hex')}\n` };
        const up = { way: 'local -> remote' as const, name: `probe-up-${k}.txt`, text: `probe up ${k} ${randomBytes(8).toString('hex')}\n` };
        web.uploadFile(rootId, down.name, down.text);
        await writeFile(join(mirror, up.name), up.text);
        for (const p of [down, up]) probes.push({ ...p, sentAtMs, phase, arrivedAtMs: null });
        nextAtMs = sentAtMs + PROBE_EVERY_MS;
      }
      await Promise.all(
        probes.filter((p) => p.arrivedAtMs === null).map(async (p) => {
          if (await arrived(p)) p.arrivedAtMs = Date.now();
        }),
      );
      if (mirrorAtMs === null && now - lastCountMs >= 250) {
        lastCountMs = now;
        count = await mirrored();
        if (count > 0) firstFileAtMs ??= now;
        if (count === PROBE_FILES) mirrorAtMs = now;
      }
      // The first pass has ended when the daemon first records a successful pass (a later pass overwrites it).
      if (passEndedAtMs === null && now - lastStatusMs >= 250) {
        lastStatusMs = now;
        const s = await d.status().catch(() => null);
        if (s?.engine.lastSuccessfulSyncAtMs != null) passEndedAtMs = s.engine.lastSuccessfulSyncAtMs;
      }
      const waited = probes.every((p) => p.arrivedAtMs !== null || Date.now() - p.sentAtMs > BUSY_WAIT_MS);
      if ((passEndedAtMs !== null && waited) || Date.now() - t0 > INITIAL_MAX_MS) break;
      await sleep(20);
    }
    const at = (ms: number | null): string => (ms === null ? 'never' : `${sec(ms - t0)} s`);
    console.log(
      `probes (${label}): ${PROBE_FILES} files in ${Math.ceil(PROBE_FILES / PROBE_PER_FOLDER)} folders on box-server, empty mirror; daemon run from ${runsFrom()}; ` +
        `first file local at ${at(firstFileAtMs)}, every file local at ${at(mirrorAtMs)}, first pass ended at ${at(passEndedAtMs)}; ${n} pairs of probes, one every ${PROBE_EVERY_MS} ms`,
    );
    const ms = (p: PairProbe): number => (p.arrivedAtMs === null ? Number.POSITIVE_INFINITY : p.arrivedAtMs - p.sentAtMs);
    const show = (x: number | undefined): string => (x === undefined ? '-' : Number.isFinite(x) ? `${x} ms` : 'lost');
    const during = (p: PairProbe): boolean => p.phase === 'zip archive held' || p.phase === 'no archive held';
    for (const way of ['remote -> local', 'local -> remote'] as const) {
      const mine = probes.filter((p) => p.way === way);
      const all = mine.map(ms).sort((a, b) => a - b);
      const byPhase = (['before the downloads', 'zip archive held', 'no archive held', 'after the mirror, pass still running'] as const)
        .map((ph) => {
          const xs = mine.filter((p) => p.phase === ph).map(ms).sort((a, b) => a - b);
          return xs.length === 0 ? null : `${ph}: ${xs.length}, p50 ${show(percentile(xs, 50))}, max ${show(xs.at(-1))}`;
        })
        .filter((x) => x !== null);
      const beforeEnd = mine.filter((p) => p.arrivedAtMs !== null && passEndedAtMs !== null && p.arrivedAtMs < passEndedAtMs).length;
      console.log(
        `probes (${label}), ${way}: p50 ${show(percentile(all, 50))}, max ${show(all.at(-1))} over ${mine.length} probes, ` +
          `${mine.filter(during).length} made during the downloads, ${beforeEnd} arrived before the first pass ended; ${byPhase.join('; ')}`,
      );
    }
    if (process.env.BENCH_PROBES_LIST === '1') {
      for (const p of probes) console.log(`  ${sec(p.sentAtMs - t0)} s ${p.way} ${p.phase}: ${show(ms(p))}`);
    }
  } finally {
    await daemon?.stop();
    await srv.close();
  }
}

const CHURN_FILES = Number(process.env.BENCH_CHURN_FILES ?? 25_000);

/**
 * 5. A build's churn: the daemon idle on a small mirror, then CHURN_FILES files written into 250 folders and the
 * whole folder deleted 2 s after the last one (2 x CHURN_FILES watcher events, 50,000 by default). `status` is asked
 * every 200 ms all along; prints the slowest answer, how long the event loop was blocked (the daemon's own
 * monitorEventLoopDelay figures from `status`), and how long until the daemon was idle with Box holding none of it.
 * The mass-delete guard is lifted for this run: files uploaded before the delete are deleted again on Box.
 */
async function runChurn(dir: string): Promise<void> {
  const srv = await startBoxServer({ port: 0, tokens: ['T'], longPollTimeoutMs: 30_000 });
  const web = srv.control.as('1');
  const rootId = web.createFolder('0', 'Churn').id;
  const mirror = join(dir, 'Churn');
  await mkdir(mirror, { recursive: true });
  await writeFile(join(mirror, 'keep.txt'), 'stays\n');
  const probeFile = join(dir, 'churn-loop-probe.txt');
  let daemon: DaemonChild | null = null;
  try {
    daemon = await startDaemon({ srv, dir: join(dir, 'churn-daemon'), remoteId: rootId, mirror, extra: { safety: { maxDeletes: 1_000_000, maxDeleteFraction: 1 } }, loopProbeFile: probeFile });
    const d = daemon;
    if (!(await until(() => settled(d), INITIAL_MAX_MS, 200))) {
      console.log(`churn: the daemon did not settle on the small mirror; no figures. Last output:\n${d.output()}`);
      return;
    }
    const asker = askStatusAllAlong(() => d.status().then(() => true, () => false));
    const t0 = Date.now();
    for (let i = 0; i < CHURN_FILES; i++) {
      const folder = join(mirror, 'build', `out${String(i % 250).padStart(3, '0')}`);
      if (i < 250) await mkdir(folder, { recursive: true });
      await writeFile(join(folder, `o${i}.o`), `object ${i}\n`);
    }
    const written = Date.now() - t0;
    await new Promise((r) => setTimeout(r, 2_000));
    await rm(join(mirror, 'build'), { recursive: true });
    const done = await until(async () => (await settled(d)) && web.findByPath('Churn/build') === null, INITIAL_MAX_MS, 500);
    const { answered, slowestMs: slowest } = await asker.stop();
    const last = await d.status();
    const loop = last.eventLoop;
    if (!done) {
      const guard = last.engine.heldGuard ? `; guard held: ${last.engine.heldGuard.message}` : '';
      console.log(`churn: not settled: phase ${last.engine.phase}, ${last.engine.errors.length} errors, Box still holds build/: ${web.findByPath('Churn/build') !== null}${guard}; notices: ${last.notices.join(' | ')}`);
    }
    console.log(
      `churn: ${CHURN_FILES} files written in ${sec(written)} s and deleted 2 s later (${2 * CHURN_FILES} events): ` +
        `${done ? `idle with Box clean ${sec(Date.now() - t0)} s after the first write` : `not settled within ${INITIAL_MAX_MS / 1000} s`}; ` +
        `status answered ${answered} times, the slowest in ${slowest} ms; event loop blocked at most ${loop.maxDelayMs} ms (p99 ${loop.p99DelayMs} ms)`,
    );
    console.log(`churn: ${await stalls(probeFile)}`);
  } finally {
    await daemon?.stop();
    await srv.close();
  }
}

/**
 * What test/bench/loop-probe.mjs saw in the daemon: its longest stall, and the longest in which the daemon's main
 * thread was on a CPU for at least half of it (its own work, not a wait for a core on a loaded machine).
 */
async function stalls(file: string): Promise<string> {
  const rows = (await readFile(file, 'utf8').catch(() => ''))
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split(' ').map(Number) as [number, number]);
  if (rows.length === 0) return 'loop probe: no turn of the event loop came more than 50 ms late';
  const longest = rows.reduce((a, b) => (b[0] > a[0] ? b : a));
  const own = rows.filter(([wall, cpu]) => cpu >= wall / 2);
  const ownLongest = own.reduce((a, b) => (b[0] > a[0] ? b : a), [0, 0] as [number, number]);
  const mostCpu = rows.reduce((a, b) => (b[1] > a[1] ? b : a));
  return (
    `loop probe: ${rows.length} turns more than 50 ms late; the longest ${longest[0].toFixed(0)} ms (main thread on a CPU ${longest[1]} ms of it); ` +
    `the longest that was the daemon's own work (on a CPU at least half of it) ${ownLongest[0].toFixed(0)} ms; the most CPU in one stall ${mostCpu[1]} ms (of ${mostCpu[0].toFixed(0)} ms)`
  );
}

const LANE_EDITS = Number(process.env.BENCH_LANE_EDITS ?? 100);
const LANE_BIG_MB = Number(process.env.BENCH_LANE_BIG_MB ?? 500);

/**
 * 6. Small edits during a big upload (engine/live-lane.ts): the daemon idle on a mirror of LANE_EDITS small files;
 * a LANE_BIG_MB MB file is written, and once its upload is in flight each small file is edited (one every 20 ms).
 * Prints p50 and max of each edit's time to reach Box, and how many arrived while the big upload was still
 * running (box-server's request log says when it ended). Figures, never asserted.
 */
async function runLane(dir: string, bwlimitKiBps: number | null): Promise<void> {
  const label = bwlimitKiBps === null ? 'no bandwidth limit' : `--bwlimit ${bwlimitKiBps / 1024}M`;
  const srv = await startBoxServer({ port: 0, tokens: ['T'], longPollTimeoutMs: 30_000 });
  const web = srv.control.as('1');
  const rootId = web.createFolder('0', 'Lane').id;
  const ids: string[] = [];
  for (let i = 0; i < LANE_EDITS; i++) ids.push(web.uploadFile(rootId, `s${i}.txt`, `small ${i}\n`).id);
  const mirror = join(dir, `Lane-${bwlimitKiBps ?? 'free'}`);
  await mkdir(mirror, { recursive: true });
  let daemon: DaemonChild | null = null;
  try {
    daemon = await startDaemon({ srv, dir: join(dir, `lane-daemon-${bwlimitKiBps ?? 'free'}`), remoteId: rootId, mirror, extra: bwlimitKiBps === null ? {} : { http: { bwlimitKiBps } } });
    const d = daemon;
    if (!(await until(() => settled(d), INITIAL_MAX_MS, 200))) {
      console.log(`lane (${label}): the daemon did not settle; no figures. Last output:\n${d.output()}`);
      return;
    }
    const big = join(mirror, 'big.bin');
    const chunk = randomBytes(1024 * 1024);
    for (let m = 0; m < LANE_BIG_MB; m++) await writeFile(big, chunk, { flag: m === 0 ? 'w' : 'a' });
    const started = await until(async () => (await d.status()).engine.roots.some((r) => r.inFlight.some((t) => t.path === 'big.bin')), 120_000, 50);
    if (!started) {
      console.log(`lane (${label}): the big upload was not seen in flight; no figures`);
      return;
    }
    const sentAt: number[] = [];
    const arrivedAt: (number | null)[] = Array.from({ length: LANE_EDITS }, () => null);
    let bigSeenAt: number | null = null;
    const watch = setInterval(() => {
      if (bigSeenAt === null && web.findByPath('Lane/big.bin') !== null) bigSeenAt = Date.now();
      for (let i = 0; i < LANE_EDITS; i++) if (arrivedAt[i] === null && sentAt[i] !== undefined && web.readFile(ids[i]!).toString() === `edited ${i}\n`) arrivedAt[i] = Date.now();
    }, 10);
    try {
      for (let i = 0; i < LANE_EDITS; i++) {
        sentAt.push(Date.now());
        await writeFile(join(mirror, `s${i}.txt`), `edited ${i}\n`);
        await sleep(20);
      }
      await until(() => arrivedAt.every((a) => a !== null), 600_000, 50);
    } finally {
      clearInterval(watch);
    }
    const bigDone = await until(() => web.findByPath('Lane/big.bin') !== null, INITIAL_MAX_MS, 200);
    const lat = arrivedAt.flatMap((a, i) => (a === null ? [] : [a - sentAt[i]!])).sort((a, b) => a - b);
    const bigEndedAt: number | null = bigSeenAt;
    const beforeBig = bigEndedAt === null ? lat.length : arrivedAt.filter((a) => a !== null && a < bigEndedAt).length;
    console.log(
      `small edits during a big upload (${LANE_BIG_MB} MB, ${label}): p50 ${percentile(lat, 50)} ms, max ${lat.at(-1) ?? '-'} ms over ${lat.length} of ${LANE_EDITS} edits; ` +
        `${beforeBig} arrived before the big file was on Box${bigDone ? '' : ' (it never arrived)'}`,
    );
  } finally {
    await daemon?.stop();
    await srv.close();
  }
}

export async function run(): Promise<void> {
  const { dir, cleanup } = await makeTempDir('boxsync-bench-daemon-');
  try {
    if (process.env.BENCH_CHURN_ONLY === '1') return await runChurn(dir);
    const probeModes = process.env.BENCH_PROBES_ZIP === undefined ? [true, false] : [process.env.BENCH_PROBES_ZIP !== '0'];
    if (process.env.BENCH_PROBES_ONLY === '1') {
      for (const zip of probeModes) await runProbes(dir, zip);
      return;
    }
    if (process.env.BENCH_LANE_ONLY === '1') {
      for (const limit of [null, 20 * 1024]) await runLane(dir, limit);
      return;
    }
    if (process.env.BENCH_BUSY_ONLY !== '1') {
      const mirror = join(dir, 'Box');
      const t0 = Date.now();
      await makeTree(mirror);
      console.log(`tree: ${FILES} files in ${FOLDERS} folders, created in ${sec(Date.now() - t0)} s; fs.inotify.max_user_watches = ${await inotifyWatchLimit()}`);
      for (const kind of ['inotify', 'dirs', 'chokidar'] as const) console.log(await measureWatcher(kind, mirror));
      if (process.env.BENCH_DAEMON === '0') return;
      await runIdle(dir, mirror);
    }
    if (process.env.BENCH_BUSY !== '0' && process.env.BENCH_DAEMON !== '0') await runBusy(dir);
    if (process.env.BENCH_PROBES !== '0' && process.env.BENCH_DAEMON !== '0') for (const zip of probeModes) await runProbes(dir, zip);
    if (process.env.BENCH_CHURN !== '0' && process.env.BENCH_DAEMON !== '0') await runChurn(dir);
    if (process.env.BENCH_LANE !== '0' && process.env.BENCH_DAEMON !== '0') for (const limit of [null, 20 * 1024]) await runLane(dir, limit);
  } finally {
    await cleanup();
  }
}
