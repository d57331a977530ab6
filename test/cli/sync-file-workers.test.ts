/**
 * `http.fileWorkers` (src/local/file-workers.ts): the real CLI against box-server mirrors the same tree with the
 * temp files written by worker threads as with the main thread: the same names, bytes and mtimes, with zip downloads
 * on (the small files' entries read, checked and written by the workers) and off (each small file one download,
 * written by a worker in one job), a file past the workers' size written by the main thread, an empty file. A new
 * file is committed into place by the worker that wrote it (src/local/worker-commit.ts): a run killed while they
 * commit leaves nothing half-written under a final name, and the next run converges.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnCli } from '../support/cli.js';
import { waitFor } from '../support/wait.js';
import { explain, listTree, readText, startSyncEnv, type SyncEnv } from './sync-harness.js';

let e: SyncEnv | undefined;
afterEach(async () => {
  await e?.close();
  e = undefined;
});

/** Every file's bytes (as hex SHA-free text: the bytes themselves) and mtime, by path. */
async function snapshot(dir: string): Promise<Record<string, { bytes: string; mtimeMs: number }>> {
  const out: Record<string, { bytes: string; mtimeMs: number }> = {};
  for (const p of await listTree(dir)) {
    if (p.endsWith('/')) continue;
    out[p] = { bytes: (await readFile(join(dir, p))).toString('base64'), mtimeMs: (await stat(join(dir, p))).mtimeMs };
  }
  return out;
}

describe('file worker threads (http.fileWorkers)', () => {
  it('mirror the same tree as the main thread, with zip downloads on and off', async () => {
    const env = await startSyncEnv();
    e = env;
    for (let d = 0; d < 3; d++) {
      const folder = env.web.createFolder(env.remoteRootId, `d${d}`);
      for (let i = 0; i < 25; i++) env.web.uploadFile(folder.id, `f${i}.txt`, `folder ${d} file ${i}\n`.repeat(1 + i), { contentModifiedAt: `2022-0${1 + d}-1${i % 10}T10:00:00Z` });
    }
    env.web.uploadFile(env.remoteRootId, 'empty.txt', '', { contentModifiedAt: '2021-01-01T00:00:00Z' });
    // Past the workers' 256 KiB: written by the main thread after all.
    env.web.uploadFile(env.remoteRootId, 'big.bin', Buffer.alloc(3 * 1024 * 1024 + 5, 'b'), { contentModifiedAt: '2020-02-02T02:02:02Z' });

    // A pass this small would be written on the main thread (http.fileWorkersMinFiles): the threads are asked for.
    const runs = [
      { name: 'main', http: { fileWorkers: 0 } },
      { name: 'workers', http: { fileWorkers: 'auto', fileWorkersMinFiles: 0 } },
      { name: 'workers-no-zip', http: { fileWorkers: 2, zipMinFiles: 0, fileWorkersMinFiles: 0 } },
    ];
    const trees: Record<string, Awaited<ReturnType<typeof snapshot>>> = {};
    for (const r of runs) {
      const mirror = join(env.dir, `mirror-${r.name}`);
      await env.writeConfig({ folder: { localPath: mirror }, extra: { stateDir: join(env.dir, `state-${r.name}`), http: r.http } });
      const out = await env.sync([], { env: { BOXSYNC_LOG_LEVEL: 'debug' } });
      expect(out.code, out.stderr.slice(-2000)).toBe(0);
      const log = out.stdout + out.stderr;
      // The workers did the work: none fell back to the main thread.
      expect(log).not.toMatch(/could not use the archive entry|written on the main thread|file worker thread stopped/);
      if (r.name === 'workers') expect(log).toMatch(/zip archive/);
      trees[r.name] = await snapshot(mirror);
    }
    const main = trees['main']!;
    expect(Object.keys(main)).toHaveLength(3 * 25 + 2);
    expect(main['empty.txt']).toEqual({ bytes: '', mtimeMs: Date.parse('2021-01-01T00:00:00Z') });
    expect(main['d1/f3.txt']?.mtimeMs).toBe(Date.parse('2022-02-13T10:00:00Z'));
    expect(trees['workers']).toEqual(main);
    expect(trees['workers-no-zip']).toEqual(main);
  });

  it('kill -9 while the workers commit small files into place: nothing half-written under a final name; the next run converges', async () => {
    const env = await startSyncEnv();
    e = env;
    const content = (d: number, i: number): string => `folder ${d} file ${i}\n`.repeat(1 + (i % 9));
    for (let d = 0; d < 4; d++) {
      const folder = env.web.createFolder(env.remoteRootId, `d${d}`);
      for (let i = 0; i < 40; i++) env.web.uploadFile(folder.id, `f${i}.txt`, content(d, i), { contentModifiedAt: `2022-0${1 + d}-1${i % 10}T10:00:00Z` });
    }
    // One download a file: each is written, fsynced, given its mtime and linked into place by a worker thread.
    await env.writeConfig({ extra: { http: { fileWorkers: 1, zipMinFiles: 0, fileWorkersMinFiles: 0 } } });
    const child = spawnCli(['sync', '--once', '--config', env.configFile], { env: { BOXSYNC_LOG_LEVEL: 'warn' } });
    const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
    const count = async (): Promise<number> => (await listTree(env.mirror).catch(() => [] as string[])).filter((p) => p.endsWith('.txt')).length;
    try {
      await waitFor(async () => (await count()) >= 5, { timeoutMs: 60_000, intervalMs: 2, what: 'the first files in place' });
    } finally {
      child.kill('SIGKILL');
      await closed;
    }
    const landed = (await listTree(env.mirror)).filter((x) => /^d\d\/f\d+\.txt$/.test(x));
    expect(landed.length).toBeGreaterThanOrEqual(5);
    for (const p of landed) {
      const [, d, n] = /^d(\d)\/f(\d+)\.txt$/.exec(p)!;
      expect(await readText(join(env.mirror, p)), p).toBe(content(Number(d), Number(n)));
      expect((await stat(join(env.mirror, p))).mtimeMs, p).toBe(Date.parse(`2022-0${1 + Number(d)}-1${Number(n) % 10}T10:00:00Z`));
    }
    const again = await env.sync();
    expect(again.code, explain(again)).toBe(0);
    const tree = await listTree(env.mirror);
    expect(tree.filter((p) => p.includes('.boxsync-'))).toEqual([]);
    expect(tree.filter((p) => p.endsWith('.txt'))).toHaveLength(4 * 40);
    for (let d = 0; d < 4; d++) for (let i = 0; i < 40; i++) expect(await readText(join(env.mirror, `d${d}/f${i}.txt`))).toBe(content(d, i));
  });
});
