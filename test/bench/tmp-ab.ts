import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { startBoxServer } from '../../src/box-server/index.js';
import { repoRoot } from '../support/cli.js';
import { makeTempDir } from '../support/tmp.js';
import { buildSyncedFixture } from './journal-fixture.js';
const files = Number(process.argv[2] ?? 100000);
const tmp = await makeTempDir('boxsync-nc-');
const srv = await startBoxServer({ port: 0, tokens: ['T'] });
const fx = await buildSyncedFixture({ srv, token: 'T', dir: tmp.dir, files, progress: () => undefined });
let i = -1; for (const prof of (process.env.RUNS ?? "0,0,0,1").split(",").map((x) => x === "1")) { i++;
  const t0 = performance.now();
  const r = await new Promise<string>((resolve) => {
    const { spawn } = require('node:child_process');
    const c = spawn(process.execPath, [...(prof ? ['--cpu-prof', '--cpu-prof-dir=/tmp/nc-prof'] : []), join(process.env.ALT && i % 2 === 1 ? process.env.ALT : repoRoot, "bin", "boxsync.js"), 'sync', '--once', '--config', fx.configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = ''; c.stdout.on('data', (d: Buffer) => (out += d)); c.stderr.on('data', (d: Buffer) => (out += d));
    c.on('close', () => resolve(out.trim().split('\n').at(-1) ?? ''));
  });
  console.log(process.env.ALT && i % 2 === 1 ? 'OLD' : 'NEW', prof ? 'profiled' : 'plain', ((performance.now() - t0) / 1000).toFixed(2), 's', r);
}
await srv.close();
await tmp.cleanup();
void spawnSync;
