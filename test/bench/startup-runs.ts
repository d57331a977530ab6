/**
 * `node --import tsx test/bench/startup-runs.ts FILES FOLDERS BYTES RUNS`: the fixed cost of a `boxsync sync --once`
 * (issue 29 point 4 at small sizes), as medians. Seeds box-server (in this process) once with the tree of
 * profile-mirror.ts, then RUNS times: a first mirror into an empty folder and a fresh state dir, then a no-change run
 * of the same pair; each timed (wall) and, through /usr/bin/time, its user + system CPU and peak RSS. Variants run interleaved
 * within each round (A, B, A, B ...), so that load from other processes falls on all of them alike:
 * STARTUP_VARIANTS is a JSON list of { "name", "entry" (a CLI entry, default bin/boxsync.js), "env" (added to the
 * CLI's environment), "nodeArgs" (node flags), "config" (merged into the config) }, e.g. '[{"name":"cache off","env":{"BOXSYNC_CODE_CACHE":"off"}},{"name":"cache on"}]'.
 * Each variant gets its own XDG_CACHE_HOME (kept across its runs) unless its env names one. STARTUP_WRAP: a command
 * put before node (e.g. 'strace -f -o /tmp/s.txt'). STARTUP_PHASES=1: each run with BOXSYNC_PHASES=1 (bin/boxsync.js),
 * and after the medians, each phase's median time since the process started and since the phase before (where the
 * fixed cost goes: Node's start, the bundle's compile, the config, the pass, the exit).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeBoxConfig } from '../support/box-config.js';
import { repoRoot } from '../support/cli.js';
import { makeTempDir } from '../support/tmp.js';
import { seedTree } from './seed-tree.js';

interface Variant {
  readonly name: string;
  readonly entry?: string;
  readonly env?: Record<string, string>;
  /** node flags before the entry. */
  readonly nodeArgs?: string[];
  /** Merged into the config's top level (e.g. {"http":{"zipMinFiles":40}}). */
  readonly config?: Record<string, unknown>;
}

const files = Number(process.argv[2] ?? 50);
const folders = Number(process.argv[3] ?? 1);
const bytes = Number(process.argv[4] ?? 6400);
const runs = Number(process.argv[5] ?? 15);
const variants = JSON.parse(process.env.STARTUP_VARIANTS ?? '[{"name":"default"}]') as Variant[];
const phasesOn = process.env.STARTUP_PHASES === '1';
const timeBin = existsSync('/usr/bin/time') ? '/usr/bin/time' : null;
const tmp = await makeTempDir('boxsync-startup-');
const { srv, rootId } = await seedTree({ files, folders, bytes, name: 'Startup', token: 'START' });

interface Sample {
  /** BOXSYNC_PHASES=1's marks (STARTUP_PHASES=1): [name, ms since the process started]. */
  readonly phases: [string, number][];
  readonly wall: number;
  readonly cpu: number;
  /** Peak RSS, MiB (NaN without /usr/bin/time). */
  readonly rss: number;
}
const samples = new Map<string, Sample[]>();
const add = (key: string, s: Sample): void => void samples.set(key, [...(samples.get(key) ?? []), s]);

async function timed(args: readonly string[], env: NodeJS.ProcessEnv, timeOut: string): Promise<Sample> {
  const t0 = performance.now();
  let stderr = '';
  const code = await new Promise<number | null>((resolve) => {
    const wrap = (process.env.STARTUP_WRAP ?? '').split(' ').filter(Boolean);
    const cmd = [...(timeBin ? [timeBin, '-o', timeOut, '-f', '%U %S %M'] : []), ...wrap, process.execPath, ...args];
    const child = spawn(cmd[0]!, cmd.slice(1), { stdio: ['ignore', 'ignore', 'pipe'], env });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (!phasesOn) process.stderr.write(d);
    });
    child.on('close', resolve);
  });
  const wall = (performance.now() - t0) / 1000;
  if (code !== 0) throw new Error(`sync exited ${code}`);
  const [user, sys, rssKb] = timeBin ? (await readFile(timeOut, 'utf8')).trim().split('\n').at(-1)!.split(' ').map(Number) : [NaN, NaN, NaN];
  const line = /^boxsync: phases: (.*)$/m.exec(stderr)?.[1] ?? '';
  const phases = line === '' ? [] : line.split(', ').map((p): [string, number] => [p.slice(0, p.lastIndexOf(' ')), Number(p.slice(p.lastIndexOf(' ') + 1))]);
  return { phases, wall, cpu: user! + sys!, rss: rssKb! / 1024 };
}

for (let round = 0; round < runs; round++) {
  for (const [vi, v] of variants.entries()) {
    const dir = join(tmp.dir, `r${round}-v${vi}`);
    const configFile = join(dir, 'config.json');
    const { mkdir } = await import('node:fs/promises');
    await mkdir(dir, { recursive: true });
    await writeBoxConfig(configFile, { srv, token: 'START', remoteId: rootId, localPath: join(dir, 'mirror'), stateDir: join(dir, 'state'), socketPath: join(dir, 'c.sock'), extra: { rateLimit: undefined, ...v.config } });
    const env = { BOXSYNC_LOG_LEVEL: 'warn', ...process.env, ...(phasesOn ? { BOXSYNC_PHASES: '1' } : {}), XDG_CACHE_HOME: join(tmp.dir, `cache-v${vi}`), ...v.env };
    const args = [...(v.nodeArgs ?? []), v.entry ?? join(repoRoot, 'bin', 'boxsync.js'), 'sync', '--once', '--config', configFile];
    add(`${v.name}: first mirror`, await timed(args, env, join(dir, 'time.txt')));
    add(`${v.name}: no-change run`, await timed(args, env, join(dir, 'time.txt')));
  }
}
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
console.log(`${files} files / ${folders} folders / ${bytes} bytes, ${runs} rounds`);
for (const [key, xs] of samples) {
  console.log(`${key.padEnd(40)} wall median ${median(xs.map((x) => x.wall)).toFixed(3)} s (min ${Math.min(...xs.map((x) => x.wall)).toFixed(3)}), CPU median ${median(xs.map((x) => x.cpu)).toFixed(3)} s (min ${Math.min(...xs.map((x) => x.cpu)).toFixed(3)}), peak RSS median ${median(xs.map((x) => x.rss)).toFixed(0)} MiB`);
}
if (phasesOn) {
  // Each phase's median over the runs that reached it, in the order of the first run that has the most.
  for (const [key, xs] of samples) {
    const order = xs.reduce((a, x) => (x.phases.length > a.length ? x.phases : a), [] as [string, number][]).map(([n]) => n);
    let before = 0;
    const cells = order.map((name) => {
      const at = median(xs.map((x) => x.phases.find(([n]) => n === name)?.[1]).filter((t): t is number => t !== undefined));
      const cell = `${name} ${at.toFixed(0)} (+${(at - before).toFixed(0)})`;
      before = at;
      return cell;
    });
    console.log(`${key.padEnd(40)} phases, median ms since the process started (+ since the one before): ${cells.join(', ')}`);
  }
}
await srv.close();
await tmp.cleanup();
