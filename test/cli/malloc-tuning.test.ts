/**
 * glibc malloc's tuning (src/cli/malloc-native.ts, native/malloc.c, bin/boxsync.js; issue 29 point 5): who gets it,
 * that the loader never throws, and, in the real CLI started through bin/boxsync.js as users start it, a first
 * mirror that ends with at most 2 malloc arenas (many more without the tuning), and one that still converges when the
 * addon is missing. The CLI reports what it tuned in its debug log at the end of `sync --once` (memory-report.ts).
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadMallocAddon, mallocTuningWanted } from '../../src/cli/malloc-native.js';
import type { MemoryReport } from '../../src/cli/memory-report.js';
import { RUN_CACHE_MIN_KIB } from '../../src/journal/cache-size.js';
import { repoRoot } from '../support/cli.js';
import { listTree, startSyncEnv, type SyncEnv } from './sync-harness.js';

describe('mallocTuningWanted and loadMallocAddon', () => {
  it('tunes unless the environment chose malloc settings of its own or opted out', () => {
    expect(mallocTuningWanted({})).toBe(true);
    expect(mallocTuningWanted({ MALLOC_ARENA_MAX: '4' })).toBe(false);
    expect(mallocTuningWanted({ GLIBC_TUNABLES: 'glibc.malloc.arena_max=8' })).toBe(false);
    expect(mallocTuningWanted({ GLIBC_TUNABLES: 'glibc.pthread.rseq=0' })).toBe(true);
    expect(mallocTuningWanted({ BOXSYNC_MALLOC: 'default' })).toBe(false);
  });

  it('answers with the reason, never throws, when the addon is missing or is another file', () => {
    const missing = loadMallocAddon('/nonexistent/boxsync_malloc.node');
    expect(missing.ok).toBe(false);
    if (!missing.ok) expect(missing.reason).toMatch(/\/nonexistent\/boxsync_malloc\.node is not built/);
    const other = loadMallocAddon(join(repoRoot, 'package.json'));
    expect(other.ok).toBe(false);
    if (!other.ok) expect(other.reason).toMatch(/is not the boxsync malloc addon/);
  });
});

let env: SyncEnv | null = null;
afterEach(async () => {
  await env?.close();
  env = null;
});

/** `bin/boxsync.js sync --once` (from the sources) at debug level: its exit code and its memory report. */
function syncThroughBin(e: SyncEnv, extra: NodeJS.ProcessEnv): Promise<{ code: number | null; report: (MemoryReport & { journalCacheKiB?: number }) | null; stderr: string }> {
  const child = spawn(process.execPath, [join(repoRoot, 'bin', 'boxsync.js'), 'sync', '--once', '--config', e.configFile], {
    cwd: repoRoot,
    env: { ...process.env, NODE_OPTIONS: '', BOXSYNC_FROM_SOURCE: '1', BOXSYNC_LOG_LEVEL: 'debug', ...extra },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`sync did not exit within 120 s\n${stderr.slice(-4000)}`));
    }, 120_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      const line = stderr.split('\n').find((l) => l.includes('"msg":"memory tuning"'));
      resolve({ code, report: line === undefined ? null : (JSON.parse(line) as MemoryReport & { journalCacheKiB?: number }), stderr: stderr.slice(-4000) });
    });
  });
}

async function seeded(): Promise<SyncEnv> {
  const e = await startSyncEnv();
  for (let i = 0; i < 30; i++) e.web.uploadFile(e.remoteRootId, `f${i}.bin`, Buffer.alloc(64 * 1024 + i, i));
  return e;
}

describe('malloc tuning in the real CLI (bin/boxsync.js)', () => {
  it('ends a first mirror with at most 2 malloc arenas; with BOXSYNC_MALLOC=default the threads have more', async () => {
    env = await seeded();
    const tuned = await syncThroughBin(env, {});
    expect(tuned.code, tuned.stderr).toBe(0);
    expect(tuned.report?.malloc).toEqual({ applied: ['arena_max=2'] });
    expect(tuned.report?.mallocArenas).toBeGreaterThanOrEqual(1);
    expect(tuned.report?.mallocArenas).toBeLessThanOrEqual(2);
    expect(tuned.report?.v8Flags).toEqual(['--optimize-for-size', '--semi-space-growth-factor=1']);
    // A first mirror's journal page cache: the least (journal/cache-size.ts), not better-sqlite3's 16,000 KiB.
    expect(tuned.report?.journalCacheKiB).toBe(RUN_CACHE_MIN_KIB);
    expect((await listTree(env.mirror)).filter((p) => p.endsWith('.bin'))).toHaveLength(30);

    await env.writeConfig({ extra: { stateDir: join(env.dir, 'state-2') }, folder: { localPath: join(env.dir, 'mirror-2') } });
    const plain = await syncThroughBin(env, { BOXSYNC_MALLOC: 'default' });
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.report?.malloc).toEqual({ applied: [], reason: 'the environment chose' });
    expect(plain.report?.mallocArenas).toBeGreaterThan(2);
  }, 300_000);

  it('converges without the addon (a missing file), malloc left as it is, and says why in the report', async () => {
    env = await seeded();
    const r = await syncThroughBin(env, { BOXSYNC_MALLOC_ADDON: '/nonexistent/boxsync_malloc.node' });
    expect(r.code, r.stderr).toBe(0);
    expect(r.report?.malloc?.applied).toEqual([]);
    expect(r.report?.malloc?.reason).toMatch(/\/nonexistent\/boxsync_malloc\.node is not built/);
    expect(r.report?.mallocArenas).toBeNull();
    const files = (await listTree(env.mirror)).filter((p) => p.endsWith('.bin'));
    expect(files).toHaveLength(30);
    expect((await readFile(join(env.mirror, 'f7.bin'))).equals(Buffer.alloc(64 * 1024 + 7, 7))).toBe(true);
  }, 300_000);
});
