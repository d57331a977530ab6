/**
 * `node --max-old-space-size=8192 --import tsx test/bench/pairs.ts FILES ROUNDS CLI_A CLI_B`: two builds of the CLI
 * (a compiled main.js or a build's bin/boxsync.js each, e.g. of two trees) measured in interleaved pairs on
 * one synced fixture of FILES files (journal-fixture.ts): each round makes 100 + 100 edits (edits.ts) before each
 * `sync --once` of A and of B, then runs a no-change `sync --once` of each, the order of A and B swapped every round.
 * Each run prints its exit code, wall seconds, CPU seconds (/usr/bin/time), the CPU seconds of its main thread and
 * of its other threads (thread-cpu.mjs), and its peak RSS in MiB. On a loaded machine compare CPU seconds and
 * medians of several pairs (issue 29 point 7, README Performance).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { startBoxServer } from '../../src/box-server/index.js';
import { repoRoot } from '../support/cli.js';
import { makeTempDir } from '../support/tmp.js';
import { editBothSides } from './edits.js';
import { buildSyncedFixture } from './journal-fixture.js';

const [files, rounds] = [Number(process.argv[2] ?? 100_000), Number(process.argv[3] ?? 4)];
const builds: readonly (readonly [string, string])[] = [
  ['A', process.argv[4] ?? ''],
  ['B', process.argv[5] ?? ''],
];
if (builds.some(([, cli]) => cli === '')) throw new Error('usage: pairs.ts FILES ROUNDS CLI_A CLI_B');
const threadCpu = join(repoRoot, 'test', 'bench', 'thread-cpu.mjs');
const tmp = await makeTempDir('boxsync-pairs-');
const srv = await startBoxServer({ port: 0, tokens: ['PAIRS'] });

async function run(cli: string): Promise<string> {
  const t0 = performance.now();
  const args = ['-f', 'TIME %U %S %M', process.execPath, '--import', threadCpu, cli, 'sync', '--once', '--config', fx.configFile];
  const child = spawn('/usr/bin/time', args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, BOXSYNC_LOG_LEVEL: 'warn' } });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-20_000)));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const wall = (performance.now() - t0) / 1000;
  const time = /TIME ([\d.]+) ([\d.]+) (\d+)/.exec(err);
  const threads = /main ([\d.]+) s, other threads ([\d.]+) s/.exec(err);
  if (time === null || threads === null) return `exit ${code}, no measurement: ${err.slice(-300)}`;
  return `exit ${code} wall ${wall.toFixed(2)} cpu ${(Number(time[1]) + Number(time[2])).toFixed(2)} main ${threads[1]} other ${threads[2]} rss ${Math.round(Number(time[3]) / 1024)}`;
}

const fx = await buildSyncedFixture({ srv, token: 'PAIRS', dir: tmp.dir, files });
try {
  // One unmeasured run each: the first after the fixture refreshes a row per folder.
  for (const [, cli] of builds) await run(cli);
  let round = 0;
  for (let i = 0; i < rounds; i++) {
    const order = i % 2 === 0 ? builds : [...builds].reverse();
    for (const [name, cli] of order) {
      await editBothSides(srv, fx.boxFolderId, fx.mirror, 100, round++);
      console.log(`edits ${name}: ${await run(cli)}`);
    }
    for (const [name, cli] of order) console.log(`nochange ${name}: ${await run(cli)}`);
  }
} finally {
  await srv.close();
  await tmp.cleanup();
}
