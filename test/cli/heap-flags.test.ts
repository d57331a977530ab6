/**
 * V8's heap sizing set by the CLI as it starts (src/cli/heap-flags.ts, heap-tuning.ts; issue 29 point 5): who gets
 * the flag, and, in a real child process that loads the CLI's first module and then starts a file worker thread
 * (Node resets some V8 flags when it starts one), that the old generation grows far less while a loop allocates
 * and keeps some of it, and the young generation not at all, than in the same process with BOXSYNC_V8_HEAP=default.
 */
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { heapFlagsWanted } from '../../src/cli/heap-flags.js';
import { repoRoot } from '../support/cli.js';
import { makeTempDir } from '../support/tmp.js';

describe('heapFlagsWanted', () => {
  it('sets both flags by default, each not when the user gave node a flag on its matter, none when opted out', () => {
    const both = ['--optimize-for-size', '--semi-space-growth-factor=1'];
    expect(heapFlagsWanted([], {})).toEqual(both);
    expect(heapFlagsWanted(['--max-old-space-size=4096'], { NODE_OPTIONS: '--enable-source-maps' })).toEqual(both);
    expect(heapFlagsWanted([], { BOXSYNC_V8_HEAP: 'default' })).toEqual([]);
    expect(heapFlagsWanted(['--optimize-for-size'], {})).toEqual(['--semi-space-growth-factor=1']);
    expect(heapFlagsWanted(['--optimize_for_size'], {})).toEqual(['--semi-space-growth-factor=1']);
    expect(heapFlagsWanted([], { NODE_OPTIONS: '--no-optimize-for-size' })).toEqual(['--semi-space-growth-factor=1']);
    expect(heapFlagsWanted(['--max-semi-space-size=8'], {})).toEqual(['--optimize-for-size']);
    expect(heapFlagsWanted([], { NODE_OPTIONS: '--semi_space_growth_factor=2' })).toEqual(['--optimize-for-size']);
  });
});

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

const tsxLoader = pathToFileURL(createRequire(join(repoRoot, 'package.json')).resolve('tsx')).href;

/** Run the probe in a child node: the old and young generations' largest committed MiB during the churn, and whether a thread ran the job. */
async function probe(dir: string, name: string, env: NodeJS.ProcessEnv): Promise<{ oldSpaceMiB: number; newSpaceAtStartMiB: number; newSpaceMiB: number; threaded: boolean }> {
  const script = join(dir, `${name}.mjs`);
  const src = (p: string): string => JSON.stringify(pathToFileURL(join(repoRoot, 'src', p)).href);
  await writeFile(
    script,
    `await import(${src('cli/heap-tuning.ts')});
const { getHeapSpaceStatistics } = await import('node:v8');
const { FileWorkerPool } = await import(${src('local/file-workers.ts')});
const pool = new FileWorkerPool({ size: 1 });
await pool.run({ op: 'put', path: ${JSON.stringify(join(dir, `${name}.tmp`))}, fd: null, position: 0, data: new Uint8Array(8), sync: false, close: true });
// Garbage, and the last 8 batches of 50,000 objects kept (about 30 MiB live), as a pass's listings and plans are.
let keep = [];
const kept = [];
let oldSpace = 0;
// The young generation as the churn starts (tsx's loading, before the flags were set, may have grown it already).
const newSpaceAtStart = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
let newSpace = 0;
for (let i = 0; i < 6e6; i++) {
  keep.push({ a: i, b: 'x' + i });
  if (keep.length < 50000) continue;
  kept.push(keep);
  if (kept.length > 8) kept.shift();
  keep = [];
  const spaces = getHeapSpaceStatistics();
  oldSpace = Math.max(oldSpace, spaces.find((s) => s.space_name === 'old_space').space_size);
  newSpace = Math.max(newSpace, spaces.find((s) => s.space_name === 'new_space').space_size);
}
process.stdout.write(JSON.stringify({ oldSpaceMiB: oldSpace / 1048576, newSpaceAtStartMiB: newSpaceAtStart / 1048576, newSpaceMiB: newSpace / 1048576, threaded: pool.threaded }));
await pool.close();
`,
  );
  const child = spawn(process.execPath, ['--import', tsxLoader, script], { cwd: dir, env: { ...process.env, NODE_OPTIONS: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  expect(code, err).toBe(0);
  return JSON.parse(out) as { oldSpaceMiB: number; newSpaceAtStartMiB: number; newSpaceMiB: number; threaded: boolean };
}

describe('the CLI heap flags in a real process', () => {
  it('keeps the old generation near what is live and the young one at its first size, after a worker thread started; without them both grow far more', async () => {
    const tmp = await makeTempDir('boxsync-heap-flags-');
    cleanup.push(tmp.cleanup);
    const tuned = await probe(tmp.dir, 'tuned', {});
    expect(tuned.threaded).toBe(true);
    const plain = await probe(tmp.dir, 'plain', { BOXSYNC_V8_HEAP: 'default' });
    expect(plain.threaded).toBe(true);
    // Measured here: about 45 MiB with the flag, 130 MiB without.
    expect(tuned.oldSpaceMiB).toBeGreaterThan(0);
    expect(tuned.oldSpaceMiB).toBeLessThan(plain.oldSpaceMiB * 0.6);
    // The young generation does not grow during the churn though a worker thread started before it (the thread's
    // start resets the flag; the pool sets it again); V8's default lets it grow to 2 x 16 MiB.
    expect(tuned.newSpaceMiB).toBeGreaterThan(0);
    expect(tuned.newSpaceMiB).toBeLessThanOrEqual(tuned.newSpaceAtStartMiB);
    expect(tuned.newSpaceMiB).toBeLessThanOrEqual(4);
    expect(plain.newSpaceMiB).toBeGreaterThanOrEqual(8);
    expect(plain.newSpaceMiB).toBeGreaterThan(plain.newSpaceAtStartMiB);
  }, 120_000);
});
