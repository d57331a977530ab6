/**
 * Interrupted runs lose nothing: Ctrl-C (SIGINT) ends `sync --once` with exit 1 after checkpointing, and a
 * `kill -9` mid-run leaves a stale lock and half-done work that the next run takes over and finishes.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readStateLock } from '../../src/daemon/lock.js';
import { spawnCli } from '../support/cli.js';
import { waitFor } from '../support/wait.js';
import { explain, listTree, readText, startSyncEnv, summaryLine, type SyncEnv } from './sync-harness.js';

const FILES = 400;
let e: (SyncEnv & { remoteRootId: string }) | undefined;
afterEach(async () => {
  await e?.close();
  e = undefined;
});

async function seeded(): Promise<SyncEnv & { remoteRootId: string }> {
  const env = await startSyncEnv();
  for (let d = 0; d < 4; d++) {
    const folder = env.web.createFolder(env.remoteRootId, `d${d}`);
    for (let i = 0; i < FILES / 4; i++) env.web.uploadFile(folder.id, `f${i}.txt`, `d${d} f${i}\n`);
  }
  return env;
}

async function countFiles(dir: string): Promise<number> {
  try {
    return (await readdir(dir, { recursive: true, withFileTypes: true })).filter((d) => d.isFile() && d.name.endsWith('.txt')).length;
  } catch {
    return 0;
  }
}

/** Start a sync child, wait until `atFiles` files are down, send `signal`, and return its exit. */
async function interruptAt(env: SyncEnv, atFiles: number, signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  const child = spawnCli(['sync', '--once', '--config', env.configFile], { env: { BOXSYNC_LOG_LEVEL: 'warn' } });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, sig) => resolve({ code, signal: sig })));
  await waitFor(async () => (await countFiles(env.mirror)) >= atFiles, { timeoutMs: 60_000, intervalMs: 20, what: `${atFiles} files in the mirror` });
  child.kill(signal);
  return { ...(await closed), stderr };
}

async function expectComplete(env: SyncEnv): Promise<void> {
  const tree = await listTree(env.mirror);
  expect(tree.filter((p) => p.includes('.boxsync-'))).toEqual([]);
  expect(tree.filter((p) => !p.endsWith('/'))).toHaveLength(FILES);
  expect(await readText(join(env.mirror, 'd3', `f${FILES / 4 - 1}.txt`))).toBe(`d3 f${FILES / 4 - 1}\n`);
}

describe('interrupted runs', () => {
  it('SIGINT: exit 1 with a message, lock released; the next run converges', async () => {
    e = await seeded();
    const r = await interruptAt(e, 50, 'SIGINT');
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/SIGINT/);
    expect(readStateLock(e.stateDir)).toBeNull();
    expect(await countFiles(e.mirror)).toBeLessThan(FILES);

    const again = await e.sync();
    expect(again.code, explain(again)).toBe(0);
    expect(summaryLine(again)).toMatch(/converged/);
    await expectComplete(e);
  });

  it('kill -9 mid-run: the next run takes over the stale lock and converges with nothing lost', async () => {
    e = await seeded();
    const r = await interruptAt(e, 50, 'SIGKILL');
    expect(r.signal).toBe('SIGKILL');
    expect(readStateLock(e.stateDir)).not.toBeNull();

    const again = await e.sync();
    expect(again.code, explain(again)).toBe(0);
    expect(again.stderr).toContain('stale lock');
    await expectComplete(e);
    expect(readStateLock(e.stateDir)).toBeNull();
  });
});
