/**
 * The young generation held bigger during a big transfer (src/local/young-generation.ts, issue 29 point 4): in a real
 * child process with the CLI's heap flags (heap-tuning.ts), a real TransferQueue running tasks that allocate as
 * downloads do. Read from V8's own heap statistics: a small run leaves the young generation at its small size, a
 * big transfer grows it to BULK_SEMI_SPACE_MIB per semi-space and never past it, and once the queue has emptied the
 * growth factor is back to 1 (after a full collection shrinks it, the same allocation no longer grows it). With
 * BOXSYNC_V8_HEAP=default (V8's own sizing) boxsync does not touch the factor at all.
 */
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { BULK_SEMI_SPACE_MIB, BULK_TRANSFERS } from '../../src/local/young-generation.js';
import { repoRoot } from '../support/cli.js';
import { makeTempDir } from '../support/tmp.js';

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

const tsxLoader = pathToFileURL(createRequire(join(repoRoot, 'package.json')).resolve('tsx')).href;

interface Phases {
  /** Largest semi-space (MiB) seen during each phase. */
  readonly small: number;
  readonly big: number;
  readonly afterShrink: number;
  readonly after: number;
}

async function probe(env: NodeJS.ProcessEnv): Promise<Phases> {
  const tmp = await makeTempDir('boxsync-young-');
  cleanup.push(() => tmp.cleanup());
  const script = join(tmp.dir, 'probe.mjs');
  const src = (p: string): string => JSON.stringify(pathToFileURL(join(repoRoot, p)).href);
  await writeFile(
    script,
    `await import(${src('src/cli/heap-tuning.ts')});
const { getHeapSpaceStatistics, setFlagsFromString } = await import('node:v8');
const { runInNewContext } = await import('node:vm');
const { TransferQueue } = await import(${src('src/engine/transfer-queue.ts')});
const { ManualClock } = await import(${src('test/engine/support/manual-clock.ts')});
const semi = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size / 2 / 1048576;
// Each task allocates as a small download does: garbage, and a little that outlives a few scavenges.
const kept = [];
let largest = 0;
const churn = (n) => {
  for (let i = 0; i < n; i++) {
    const batch = [];
    for (let j = 0; j < 400; j++) batch.push({ j, s: 'x' + j });
    kept.push(batch);
    if (kept.length > 200) kept.shift();
    largest = Math.max(largest, semi());
  }
};
// A clock that does not move: every task of a phase falls in one window of the queue's count.
const queue = new TransferQueue({ concurrency: 4, clock: new ManualClock() });
const run = async (tasks) => {
  largest = semi();
  await Promise.all(Array.from({ length: tasks }, (_, i) => queue.add({ root: 'r', path: 'f' + i, direction: 'down', totalBytes: 100, run: async () => { churn(4); await null; return { status: 'done' }; } })));
  return largest;
};
const small = await run(${Math.floor(BULK_TRANSFERS / 5)});
const big = await run(${BULK_TRANSFERS * 8});
// The queue emptied: a full collection lets V8 shrink the young generation (it does under --optimize-for-size);
// the same allocation then must not grow it again.
setFlagsFromString('--expose-gc');
runInNewContext('gc')();
const afterShrink = semi();
largest = semi();
churn(${BULK_TRANSFERS * 8 * 4});
process.stdout.write(JSON.stringify({ small, big, afterShrink, after: largest }));
`,
  );
  const child = spawn(process.execPath, ['--import', tsxLoader, script], { cwd: tmp.dir, env: { ...process.env, NODE_OPTIONS: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  expect(code, err).toBe(0);
  return JSON.parse(out) as Phases;
}

describe('young generation during a big transfer', () => {
  it('stays small for a small run, grows to its bulk size and no further for a big one, and grows no more after', async () => {
    const p = await probe({});
    // tsx's loading, before the flags were set, may have grown it to 2 MiB already; never to the bulk size.
    expect(p.small).toBeLessThan(BULK_SEMI_SPACE_MIB);
    expect(p.big).toBe(BULK_SEMI_SPACE_MIB);
    expect(p.afterShrink).toBeLessThan(BULK_SEMI_SPACE_MIB);
    expect(p.after).toBe(p.afterShrink);
  }, 120_000);

  it("leaves V8's own sizing alone with BOXSYNC_V8_HEAP=default", async () => {
    const p = await probe({ BOXSYNC_V8_HEAP: 'default' });
    // V8's default factor lets it grow past the bulk size (to its 16 MiB maximum) in the same allocation.
    expect(p.big).toBeGreaterThan(BULK_SEMI_SPACE_MIB);
  }, 120_000);
});
