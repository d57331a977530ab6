/**
 * V8's heap sizing set by the CLI as it starts (src/cli/heap-flags.ts, heap-tuning.ts; issue 29 point 5): who gets
 * the flag, and, in a real child process that loads the CLI's first module and then starts a file worker thread
 * (Node resets some V8 flags when it starts one), that the old generation grows far less while a loop allocates
 * and keeps some of it than in the same process with BOXSYNC_V8_HEAP=default.
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
  it('sets the flag by default, not when the user gave it (or its --no- form) to node or opted out', () => {
    expect(heapFlagsWanted([], {})).toBe(true);
    expect(heapFlagsWanted(['--max-old-space-size=4096'], { NODE_OPTIONS: '--enable-source-maps' })).toBe(true);
    expect(heapFlagsWanted([], { BOXSYNC_V8_HEAP: 'default' })).toBe(false);
    expect(heapFlagsWanted(['--optimize-for-size'], {})).toBe(false);
    expect(heapFlagsWanted(['--optimize_for_size'], {})).toBe(false);
    expect(heapFlagsWanted([], { NODE_OPTIONS: '--no-optimize-for-size' })).toBe(false);
  });
});

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

const tsxLoader = pathToFileURL(createRequire(join(repoRoot, 'package.json')).resolve('tsx')).href;

/** Run the probe in a child node: the old generation's largest committed MiB during the churn, and whether a thread ran the job. */
async function probe(dir: string, name: string, env: NodeJS.ProcessEnv): Promise<{ oldSpaceMiB: number; threaded: boolean }> {
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
for (let i = 0; i < 6e6; i++) {
  keep.push({ a: i, b: 'x' + i });
  if (keep.length < 50000) continue;
  kept.push(keep);
  if (kept.length > 8) kept.shift();
  keep = [];
  oldSpace = Math.max(oldSpace, getHeapSpaceStatistics().find((s) => s.space_name === 'old_space').space_size);
}
process.stdout.write(JSON.stringify({ oldSpaceMiB: oldSpace / 1048576, threaded: pool.threaded }));
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
  return JSON.parse(out) as { oldSpaceMiB: number; threaded: boolean };
}

describe('the CLI heap flag in a real process', () => {
  it('keeps the old generation near what is live, after a worker thread started; without it the generation grows far more', async () => {
    const tmp = await makeTempDir('boxsync-heap-flags-');
    cleanup.push(tmp.cleanup);
    const tuned = await probe(tmp.dir, 'tuned', {});
    expect(tuned.threaded).toBe(true);
    const plain = await probe(tmp.dir, 'plain', { BOXSYNC_V8_HEAP: 'default' });
    expect(plain.threaded).toBe(true);
    // Measured here: about 45 MiB with the flag, 130 MiB without.
    expect(tuned.oldSpaceMiB).toBeGreaterThan(0);
    expect(tuned.oldSpaceMiB).toBeLessThan(plain.oldSpaceMiB * 0.6);
  }, 120_000);
});
