/**
 * `node --import tsx test/bench/profile-mirror.ts [FILES] [FOLDERS] [BYTES]`: seeds box-server (in this process) with a tree
 * and runs one `boxsync sync --once` (the compiled CLI when built) under `node --cpu-prof`, writing the profile
 * to $PROFILE_DIR (default /tmp/boxsync-prof). With BOXSERVER_PROF=1 this process profiles box-server too. With
 * PROFILE_NO_CHANGE=1 the first run mirrors unprofiled and a second, no-change run is profiled. PROFILE_ENTRY names
 * another compiled CLI (a build of another tree, for a before/after comparison); PROFILE_OFF=1 runs without the
 * profiler; PROFILE_CONFIG is JSON merged into the config (e.g. '{"transfers":{"workers":0}}'). Where /usr/bin/time
 * exists, each run's user and system CPU seconds and peak RSS are printed too. PROFILE_THREAD_CPU=1 prints the CPU
 * seconds of the CLI's main thread and of its other threads (test/bench/thread-cpu.mjs). PROFILE_NODE_ARGS: node flags
 * for the CLI's process, space-separated (e.g. '--max-semi-space-size=8'). Each run also prints this process's CPU
 * seconds during the run (box-server's own cost, the seeding excluded).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Session } from 'node:inspector/promises';
import { writeBoxConfig } from '../support/box-config.js';
import { repoRoot } from '../support/cli.js';
import { makeTempDir } from '../support/tmp.js';
import { seedTree } from './seed-tree.js';

const files = Number(process.argv[2] ?? 2000);
const folders = Number(process.argv[3] ?? 40);
const bytes = Number(process.argv[4] ?? 256 * 1024);
const profDir = process.env.PROFILE_DIR ?? '/tmp/boxsync-prof';
await mkdir(profDir, { recursive: true });
const tmp = await makeTempDir('boxsync-prof-');
const { srv, rootId } = await seedTree({ files, folders, bytes, name: 'Prof', token: 'PROF' });
const configFile = join(tmp.dir, 'config.json');
await writeBoxConfig(configFile, { srv, token: 'PROF', remoteId: rootId, localPath: join(tmp.dir, 'mirror'), stateDir: join(tmp.dir, 'state'), socketPath: join(tmp.dir, 'c.sock'), extra: { rateLimit: undefined, ...(process.env.PROFILE_CONFIG ? (JSON.parse(process.env.PROFILE_CONFIG) as Record<string, unknown>) : {}) } });
const dist = join(repoRoot, 'dist', 'cli', 'main.js');
const entry = process.env.PROFILE_ENTRY ? [process.env.PROFILE_ENTRY] : existsSync(dist) ? [dist] : ['--import', 'tsx', join(repoRoot, 'src', 'cli', 'main.ts')];
const session = process.env.BOXSERVER_PROF ? new Session() : null;
if (session) {
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
}
// PROFILE_NO_CHANGE=1: mirror first without the profiler, then profile a second, no-change run.
const runs = process.env.PROFILE_NO_CHANGE === '1' ? [false, true] : [process.env.PROFILE_OFF !== '1'];
const timeBin = existsSync('/usr/bin/time') ? '/usr/bin/time' : null;
const timeOut = join(tmp.dir, 'time.txt');
let code: number | null = null;
let t0 = performance.now();
for (const profiled of runs) {
t0 = performance.now();
const serverCpu0 = process.cpuUsage();
code = await new Promise<number | null>((resolve) => {
  const threadCpu = process.env.PROFILE_THREAD_CPU === '1' ? ['--import', join(repoRoot, 'test', 'bench', 'thread-cpu.mjs')] : [];
  const nodeArgs = (process.env.PROFILE_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const args = [...nodeArgs, ...(profiled ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : []), ...threadCpu, ...entry, 'sync', '--once', '--config', configFile];
  const child = spawn(timeBin ?? process.execPath, timeBin ? ['-o', timeOut, '-f', '%U %S %M', process.execPath, ...args] : args, {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { BOXSYNC_LOG_LEVEL: 'warn', ...process.env },
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-2000)));
  child.on('close', (c) => {
    console.log(out.trim().split('\n').at(-1));
    resolve(c);
  });
});
const wall = ((performance.now() - t0) / 1000).toFixed(2);
const [user, sys, rssKb] = timeBin ? (await readFile(timeOut, 'utf8')).trim().split('\n').at(-1)!.split(' ').map(Number) : [];
const usage = user === undefined ? '' : `, CPU ${user} s user + ${sys} s system, peak RSS ${Math.round(rssKb! / 1024)} MiB`;
console.log(`sync --once${profiled ? ' (profiled)' : ''}: exit ${code}, ${wall} s${usage}`);
const serverCpu = process.cpuUsage(serverCpu0);
console.log(`box-server (this process) CPU: ${(serverCpu.user / 1e6).toFixed(2)} s user + ${(serverCpu.system / 1e6).toFixed(2)} s system`);
}
if (session) {
  const { profile } = await session.post('Profiler.stop');
  await writeFile(join(profDir, 'box-server.cpuprofile'), JSON.stringify(profile));
}
await srv.close();
await tmp.cleanup();
