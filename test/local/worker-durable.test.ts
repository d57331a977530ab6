/**
 * One durability point for a batch of temp files on a file worker thread (src/local/worker-durable.ts,
 * native/syncfs.c): on real files with a real pool, every file is made durable (a syncfs(2) of its batch, or its own
 * fsync) before it is linked under its final name (or, replacing a synced file, renamed over it) and before its
 * job is answered; a burst of files on a trusted file system (ext4, XFS, Btrfs, F2FS) with the addon built goes
 * through syncfs(2) in batches; without the addon, and on a file system the addon refuses (tmpfs), each file is
 * fsynced on its own, with the same result.
 */
import { createHash } from 'node:crypto';
import * as nodeFs from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileWorkerPool, type WorkerTrace as Trace } from '../../src/local/file-workers.js';
import { syncfsAddonPath } from '../../src/local/syncfs-native.js';
import { TEMP_PREFIX } from '../../src/local/temp-name.js';
import { MIN_BATCH } from '../../src/local/worker-durable.js';
import { makeTempDir } from '../support/tmp.js';


const sha1 = (b: Buffer): string => createHash('sha1').update(b).digest('hex');
const BOX_MTIME = Date.parse('2021-05-06T07:08:09Z');
/** ext2/3/4, XFS, Btrfs, F2FS: where native/syncfs.c trusts syncfs(2). */
const TRUSTED = new Set([0xef53, 0x58465342, 0x9123683e, 0xf2f52010]);
/** Files posted at once: several batches' worth. */
const FILES = 4 * MIN_BATCH;

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
  delete process.env.BOXSYNC_SYNCFS_ADDON;
});

/**
 * FILES files committed by one worker thread, posted at once; what the thread did, in order. With `replace` each
 * replaces a synced file already there (worker-replace.ts: a rename over it) instead of being new.
 */
async function burst(root: string, replace = false): Promise<{ traces: Trace[] }> {
  const traces: Trace[] = [];
  const pool = new FileWorkerPool({ size: 1, onTrace: (t) => traces.push(t) });
  cleanup.push(() => pool.close());
  await mkdir(join(root, 'd'), { recursive: true });
  await Promise.all(
    Array.from({ length: FILES }, async (_, i) => {
      const data = Buffer.from(`file ${i} `.repeat(i + 1));
      const rel = `d/f${i}.txt`;
      const temp = join(root, 'd', `${TEMP_PREFIX}${i}`);
      let guard: { replace?: { ino: number; size: number; mtimeMs: number } } = {};
      if (replace) {
        await writeFile(join(root, rel), 'the synced version');
        const st = await stat(join(root, rel));
        guard = { replace: { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs } };
      }
      const r = await pool.run({ op: 'put', path: temp, fd: null, position: 0, data, sync: true, close: true, commit: { root, rel, target: join(root, rel), mtimeMs: BOX_MTIME, sha1: sha1(data), ...guard } });
      expect(r.committed).toHaveProperty('entry');
    }),
  );
  for (let i = 0; i < FILES; i++) {
    const data = Buffer.from(`file ${i} `.repeat(i + 1));
    expect(await readFile(join(root, 'd', `f${i}.txt`))).toEqual(data);
    expect((await stat(join(root, 'd', `f${i}.txt`))).mtimeMs).toBe(BOX_MTIME);
  }
  expect(nodeFs.readdirSync(join(root, 'd')).filter((n) => n.startsWith(TEMP_PREFIX))).toEqual([]);
  return { traces };
}

/** Every file was made durable before it was linked: its temp path is in a syncfs or fsync trace before its commit. */
function durableBeforeLinked(traces: readonly Trace[]): Set<string> {
  const durable = new Set<string>();
  const ops = new Set<string>();
  let committed = 0;
  for (const t of traces) {
    ops.add(t.op);
    if (t.op === 'syncfs' || t.op === 'fsync') for (const p of t.paths) durable.add(p);
    if (t.op === 'committed') {
      committed++;
      for (const p of t.paths) expect(durable.has(p), `${p} was linked before it was durable`).toBe(true);
    }
  }
  expect(committed).toBe(FILES);
  return ops;
}

describe('one durability point for a batch of temp files', () => {
  it('a burst of new files: each is durable (syncfs of its batch where trusted, else its fsync) before its link and its answer', async () => {
    const tmp = await makeTempDir('boxsync-durable-');
    cleanup.push(tmp.cleanup);
    const { traces } = await burst(tmp.dir);
    const ops = durableBeforeLinked(traces);
    const trusted = TRUSTED.has(nodeFs.statfsSync(tmp.dir).type);
    // With the addon on a trusted file system the burst goes through syncfs(2), in batches of more than one file.
    expect(ops.has('syncfs')).toBe(syncfsAddonPath() !== null && trusted);
    if (ops.has('syncfs')) expect(Math.max(...traces.filter((t) => t.op === 'syncfs').map((t) => t.paths.length))).toBeGreaterThan(1);
  });

  it('a burst of downloads that replace synced files: each is durable before it is renamed over the old one', async () => {
    const tmp = await makeTempDir('boxsync-durable-replace-');
    cleanup.push(tmp.cleanup);
    const { traces } = await burst(tmp.dir, true);
    const ops = durableBeforeLinked(traces);
    expect(ops.has('syncfs')).toBe(syncfsAddonPath() !== null && TRUSTED.has(nodeFs.statfsSync(tmp.dir).type));
  });

  it('without the addon (BOXSYNC_SYNCFS_ADDON=off) each file is fsynced on its own, before its link', async () => {
    process.env.BOXSYNC_SYNCFS_ADDON = 'off';
    const tmp = await makeTempDir('boxsync-durable-off-');
    cleanup.push(tmp.cleanup);
    const { traces } = await burst(tmp.dir);
    expect([...durableBeforeLinked(traces)].sort()).toEqual(['committed', 'fsync']);
    expect(traces.filter((t) => t.op === 'fsync')).toHaveLength(FILES);
  });

  it.skipIf(!nodeFs.existsSync('/dev/shm') || syncfsAddonPath() === null)('on a file system the addon does not trust (tmpfs) each file is fsynced on its own, before its link', async () => {
    const dir = await mkdtemp('/dev/shm/boxsync-durable-');
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    expect(TRUSTED.has(nodeFs.statfsSync(dir).type)).toBe(false);
    const { traces } = await burst(dir);
    expect([...durableBeforeLinked(traces)].sort()).toEqual(['committed', 'fsync']);
  });
});
