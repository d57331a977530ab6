/**
 * `node --import tsx test/bench/handoff-runs.ts FILES FOLDERS EDITS RUNS`: what a `sync --once` handed to a running
 * daemon costs (cli/commands/sync.ts handToDaemon), as medians. Seeds box-server (in this process) with FILES small
 * files in FOLDERS folders, mirrors them with one `sync --once`, starts the daemon on the mirror, and once its first
 * pass is done runs RUNS rounds of: a `sync --once` with nothing changed, then EDITS files changed on Box and EDITS in
 * the mirror (edits.ts) and a `sync --once` at once. Each run is timed from its start to its exit (wall), with its own
 * CPU and, with BOXSYNC_PHASES=1, its phases (`asking the daemon`, `daemon answered`): what the command costs against
 * what the daemon's pass took. Exit 0 of a run after edits means the daemon's pass had every edit on the other side.
 */
import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { sendControl } from '../../src/daemon/control/control-client.js';
import type { DaemonStatus } from '../../src/daemon/control/control-protocol.js';
import { writeBoxConfig } from '../support/box-config.js';
import { repoRoot } from '../support/cli.js';
import { makeTempDir } from '../support/tmp.js';
import { firstPassDone } from './daemon-ready.js';
import { editBothSides } from './edits.js';
import { seedTree } from './seed-tree.js';

const files = Number(process.argv[2] ?? 10_000);
const folders = Number(process.argv[3] ?? Math.max(1, Math.round(files / 50)));
const edits = Number(process.argv[4] ?? 100);
const runs = Number(process.argv[5] ?? 5);
const bin = join(repoRoot, 'bin', 'boxsync.js');
const tmp = await makeTempDir('boxsync-handoff-');
const { srv, rootId } = await seedTree({ files, folders, bytes: 64 * files, name: 'Handoff', token: 'HAND' });
const mirror = join(tmp.dir, 'mirror');
const configFile = join(tmp.dir, 'config.json');
const socketPath = join(tmp.dir, 'c.sock');
await mkdir(tmp.dir, { recursive: true });
await writeBoxConfig(configFile, { srv, token: 'HAND', remoteId: rootId, localPath: mirror, stateDir: join(tmp.dir, 'state'), socketPath, extra: { rateLimit: undefined } });
const env = { ...process.env, BOXSYNC_LOG_LEVEL: 'warn', BOXSYNC_PHASES: '1' };

interface Run {
  readonly wall: number;
  readonly code: number | null;
  readonly phases: Map<string, number>;
  readonly summary: string;
}

function syncOnce(): Promise<Run> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, 'sync', '--once', '--config', configFile], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('close', (code) => {
      const line = /^boxsync: phases: (.*)$/m.exec(err)?.[1] ?? '';
      const phases = new Map(line === '' ? [] : line.split(', ').map((p): [string, number] => [p.slice(0, p.lastIndexOf(' ')), Number(p.slice(p.lastIndexOf(' ') + 1))]));
      if (process.env.HANDOFF_SHOW === "1") console.log(`  ${line}\n  ${err.split("\n").filter((l) => l.includes("cache")).join(" / ")}`);
      resolve({ wall: (performance.now() - t0) / 1000, code, phases, summary: out.trim().split('\n')[0] ?? '' });
    });
  });
}

const first = await syncOnce();
console.log(`${files} files / ${folders} folders mirrored by a run of its own in ${first.wall.toFixed(2)} s (exit ${first.code})`);
const daemon = spawn(process.execPath, [bin, 'daemon', '--config', configFile], { env: { ...env, BOXSYNC_PHASES: '', BOXSYNC_UI_PORT: '0' }, stdio: 'ignore' });
try {
  const bound = performance.now() + 120_000;
  let ready = false;
  while (!ready && performance.now() < bound) {
    ready = firstPassDone(await sendControl<DaemonStatus>(socketPath, { verb: 'status' }, 5_000).catch(() => null));
    if (!ready) await new Promise((r) => setTimeout(r, 200));
  }
  if (!ready) throw new Error('the daemon did not finish its first pass within 120 s');
  const samples = new Map<string, Run[]>();
  for (let round = 1; round <= runs; round++) {
    const idle = await syncOnce();
    await editBothSides(srv, rootId, mirror, edits, round);
    const edited = await syncOnce();
    for (const [k, r] of [['nothing changed', idle], [`after ${edits} + ${edits} edits`, edited]] as const) {
      if (r.code !== 0) console.log(`  ${k}: exit ${r.code}: ${r.summary}`);
      samples.set(k, [...(samples.get(k) ?? []), r]);
    }
  }
  const median = (xs: number[]): number => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  };
  for (const [k, rs] of samples) {
    const at = (name: string): number => median(rs.map((r) => r.phases.get(name) ?? NaN).filter((x) => !Number.isNaN(x)));
    const asked = at('asking the daemon');
    const answered = at('daemon answered');
    console.log(
      `handed over, ${k.padEnd(24)} wall median ${median(rs.map((r) => r.wall)).toFixed(3)} s (min ${Math.min(...rs.map((r) => r.wall)).toFixed(3)}, max ${Math.max(...rs.map((r) => r.wall)).toFixed(3)}); ` +
        `median ms since the command started: asking the daemon ${asked.toFixed(0)}, its answer ${answered.toFixed(0)} (+${(answered - asked).toFixed(0)}), exit ${at('exit').toFixed(0)}`,
    );
  }
} finally {
  daemon.kill('SIGTERM');
  await new Promise((r) => daemon.on('close', r));
  await srv.close();
  await tmp.cleanup();
}
