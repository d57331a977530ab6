/**
 * `node --import tsx test/bench/profile-mirror.ts [FILES] [FOLDERS] [BYTES]`: seeds box-server (in this process) with a tree
 * and runs one `boxsync sync --once` (the compiled CLI when built) under `node --cpu-prof`, writing the profile
 * to $PROFILE_DIR (default /tmp/boxsync-prof). With BOXSERVER_PROF=1 this process profiles box-server too. With
 * PROFILE_NO_CHANGE=1 the first run mirrors unprofiled and a second, no-change run is profiled.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Session } from 'node:inspector/promises';
import { startBoxServer } from '../../src/box-server/index.js';
import { writeBoxConfig } from '../support/box-config.js';
import { repoRoot } from '../support/cli.js';
import { makeTempDir } from '../support/tmp.js';
import { content, fileSizes, prng } from './sync.bench.js';

const files = Number(process.argv[2] ?? 2000);
const folders = Number(process.argv[3] ?? 40);
const bytes = Number(process.argv[4] ?? 256 * 1024);
const profDir = process.env.PROFILE_DIR ?? '/tmp/boxsync-prof';
await mkdir(profDir, { recursive: true });
const tmp = await makeTempDir('boxsync-prof-');
const srv = await startBoxServer({ port: 0, tokens: ['PROF'] });
const web = srv.control.as('1');
const root = web.createFolder('0', 'Prof');
const sizes = fileSizes(files, bytes, prng(7));
const per = Math.ceil(files / folders);
let fid = root.id;
for (let i = 0; i < files; i++) {
  if (i % per === 0) fid = web.createFolder(root.id, `dir-${i / per}`).id;
  web.uploadFile(fid, `file-${i}.bin`, content(i, sizes[i]!));
}
const configFile = join(tmp.dir, 'config.json');
await writeBoxConfig(configFile, { srv, token: 'PROF', remoteId: root.id, localPath: join(tmp.dir, 'mirror'), stateDir: join(tmp.dir, 'state'), socketPath: join(tmp.dir, 'c.sock'), extra: { rateLimit: undefined } });
const dist = join(repoRoot, 'dist', 'cli', 'main.js');
const entry = existsSync(dist) ? [dist] : ['--import', 'tsx', join(repoRoot, 'src', 'cli', 'main.ts')];
const session = process.env.BOXSERVER_PROF ? new Session() : null;
if (session) {
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
}
// PROFILE_NO_CHANGE=1: mirror first without the profiler, then profile a second, no-change run.
const runs = process.env.PROFILE_NO_CHANGE === '1' ? [false, true] : [true];
let code: number | null = null;
let t0 = performance.now();
for (const profiled of runs) {
t0 = performance.now();
code = await new Promise<number | null>((resolve) => {
  const child = spawn(process.execPath, [...(profiled ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : []), ...entry, 'sync', '--once', '--config', configFile], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, BOXSYNC_LOG_LEVEL: 'warn' },
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-2000)));
  child.on('close', (c) => {
    console.log(out.trim().split('\n').at(-1));
    resolve(c);
  });
});
console.log(`sync --once${profiled ? ' (profiled)' : ''}: exit ${code}, ${((performance.now() - t0) / 1000).toFixed(2)} s`);
}
if (session) {
  const { profile } = await session.post('Profiler.stop');
  await writeFile(join(profDir, 'box-server.cpuprofile'), JSON.stringify(profile));
}
await srv.close();
await tmp.cleanup();
