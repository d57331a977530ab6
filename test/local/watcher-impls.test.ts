/**
 * The LocalWatcher contract, run against every implementation on a real temp directory (the native inotify
 * watcher's own cases are in watcher-inotify.test.ts).
 */
import { mkdir, readdir, rename, rm, writeFile, appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LocalWatcher, WatcherHealth, WatchHint } from '../../src/ports/local-watcher.js';
import { createWatcher } from '../../src/local/watcher-factory.js';
import type { WatcherKind } from '../../src/local/watcher-options.js';
import { countInotifyWatches } from '../../src/local/watcher-inotify-usage.js';
import { makeTempDir } from '../support/tmp.js';
import { waitFor } from '../support/wait.js';

const TEMP_PREFIX = '.boxsync-tmp-';

interface Rec {
  readonly batches: { readonly atMs: number; readonly hints: readonly WatchHint[] }[];
  readonly health: WatcherHealth[];
}

function hintedPaths(rec: Rec): string[] {
  return rec.batches.flatMap((b) => b.hints.map((h) => h.path as string));
}

describe.each<WatcherKind>(['inotify', 'dirs', 'chokidar'])('LocalWatcher (%s)', (kind) => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let watcher: LocalWatcher;
  let rec: Rec;

  async function startWatcher(extra: { maxWatches?: number; minBatchIntervalMs?: number; settleMs?: number; deleteHoldMs?: number } = {}): Promise<void> {
    rec = { batches: [], health: [] };
    watcher = createWatcher(kind, {
      rootPath: dir,
      isIgnored: (p) => p.split('/').some((seg) => seg.startsWith(TEMP_PREFIX)) || p.endsWith('.excluded'),
      settleMs: 200,
      deleteHoldMs: 400,
      fallbackScanMs: 5_000,
      ...extra,
    });
    await watcher.start(
      (hints) => rec.batches.push({ atMs: Date.now(), hints }),
      (h) => rec.health.push(h),
    );
  }

  beforeEach(async () => {
    ({ dir, cleanup } = await makeTempDir());
    await mkdir(join(dir, 'a/b'), { recursive: true });
    await writeFile(join(dir, 'a/one.txt'), 'one');
  });

  afterEach(async () => {
    await watcher?.close();
    await cleanup();
  });

  it('reports ok health with a watch count once started', async () => {
    await startWatcher();
    const h = watcher.health();
    expect(h.state).toBe('ok');
    if (h.state === 'ok') expect(h.watches).toBeGreaterThanOrEqual(3);
    const used = await countInotifyWatches();
    expect(used).toBeGreaterThanOrEqual(kind === 'chokidar' ? 4 : 3);
  });

  it('hints a created file', async () => {
    await startWatcher();
    await writeFile(join(dir, 'a/b/new.txt'), 'x');
    await waitFor(() => hintedPaths(rec).includes('a/b/new.txt'), { what: 'hint for a/b/new.txt' });
    expect(rec.batches.every((b) => b.hints.every((h) => h.type === 'change' || h.type === 'rescan'))).toBe(true);
  });

  it('holds a file that is still being written until it stops changing', async () => {
    await startWatcher();
    const path = join(dir, 'a/growing.bin');
    await writeFile(path, 'start');
    const writesAtMs = [Date.now()];
    for (let i = 0; i < 8; i++) {
      await new Promise((r) => setTimeout(r, 80));
      await appendFile(path, 'more data '.repeat(100));
      writesAtMs.push(Date.now());
    }
    await waitFor(() => hintedPaths(rec).includes('a/growing.bin'), { what: 'hint after the writes stopped' });
    const first = rec.batches.find((b) => b.hints.some((h) => h.path === 'a/growing.bin'))!;
    // The hint waits until the file stopped changing: at least 150 ms after the write before it. (On a loaded
    // machine a pause between two of the test's own writes may be that long; the rule holds all the same.)
    const before = writesAtMs.filter((t) => t <= first.atMs);
    expect(before.length).toBeGreaterThan(0);
    expect(first.atMs).toBeGreaterThanOrEqual(before[before.length - 1]! + 150);
  });

  it('puts both halves of a rename into one batch', async () => {
    await startWatcher();
    await rename(join(dir, 'a/one.txt'), join(dir, 'a/b/moved.txt'));
    await waitFor(() => hintedPaths(rec).includes('a/one.txt') && hintedPaths(rec).includes('a/b/moved.txt'), { what: 'both halves' });
    const withOld = rec.batches.findIndex((b) => b.hints.some((h) => h.path === 'a/one.txt'));
    const withNew = rec.batches.findIndex((b) => b.hints.some((h) => h.path === 'a/b/moved.txt'));
    expect(withOld).toBe(withNew);
  });

  it('hints a delete', async () => {
    await startWatcher();
    await rm(join(dir, 'a/one.txt'));
    await waitFor(() => hintedPaths(rec).includes('a/one.txt'), { what: 'delete hint' });
  });

  it('hints the contents of a folder that appears with files in it', async () => {
    await startWatcher();
    const { dir: outside, cleanup: c2 } = await makeTempDir();
    await mkdir(join(outside, 'pack/inner'), { recursive: true });
    await writeFile(join(outside, 'pack/inner/deep.txt'), 'deep');
    await rename(join(outside, 'pack'), join(dir, 'pack'));
    await c2();
    await waitFor(() => hintedPaths(rec).includes('pack/inner/deep.txt'), { what: 'hint inside the new folder' });
    await writeFile(join(dir, 'pack/inner/later.txt'), 'later');
    await waitFor(() => hintedPaths(rec).includes('pack/inner/later.txt'), { what: 'the new folder is watched' });
  });

  it('never hints temp files or excluded names', async () => {
    await startWatcher();
    await writeFile(join(dir, `a/${TEMP_PREFIX}123`), 'partial download');
    await writeFile(join(dir, 'a/skip.excluded'), 'x');
    await writeFile(join(dir, 'a/marker.txt'), 'x');
    await waitFor(() => hintedPaths(rec).includes('a/marker.txt'), { what: 'marker hint' });
    expect(hintedPaths(rec).filter((p) => p.includes(TEMP_PREFIX) || p.endsWith('.excluded'))).toEqual([]);
  });

  it('batches a burst of creates into few batches', async () => {
    // The contract is a rate, not a count: batches are at least minBatchIntervalMs apart, so a burst yields at
    // most one batch per interval however slowly a loaded machine writes it.
    const interval = 500;
    await startWatcher({ minBatchIntervalMs: interval });
    await mkdir(join(dir, 'burst'));
    const t0 = Date.now();
    for (let i = 0; i < 500; i++) await writeFile(join(dir, `burst/f${i}.txt`), String(i));
    await waitFor(() => new Set(hintedPaths(rec).filter((p) => p.startsWith('burst/f'))).size === 500, { what: '500 hints' });
    const elapsed = Date.now() - t0;
    const burst = rec.batches.filter((b) => b.hints.some((h) => (h.path as string).startsWith('burst/')));
    for (let i = 1; i < rec.batches.length; i++) {
      // Timers may fire a millisecond early against Date.now(): allow that much.
      expect(rec.batches[i]!.atMs - rec.batches[i - 1]!.atMs).toBeGreaterThanOrEqual(interval - 2);
    }
    expect(burst.length).toBeLessThanOrEqual(Math.ceil(elapsed / interval) + 1);
    // Duplicate events collapse: far fewer hints than the create and write events the burst made.
    expect(hintedPaths(rec).filter((p) => p.startsWith('burst/f')).length).toBeLessThan(1000);
  });

  if (kind === 'chokidar') {
    it('has no barrier (the sync --once hand-off scans its root in full instead)', async () => {
      await startWatcher();
      expect(watcher.barrier).toBeUndefined();
    });
  }

  if (kind !== 'chokidar') {
    it('barrier: when it resolves, every change made before it was handed on, settled or not; its own file is never hinted and is gone', async () => {
      // Nothing would settle for a minute: only the barrier can hand these on within the test.
      await startWatcher({ settleMs: 60_000, deleteHoldMs: 60_000 });
      await writeFile(join(dir, 'a/b/edit.txt'), 'x');
      await mkdir(join(dir, 'fresh/deeper'), { recursive: true });
      await writeFile(join(dir, 'fresh/deeper/inside.txt'), 'y');
      await rename(join(dir, 'a/one.txt'), join(dir, 'a/b/moved.txt'));
      expect(hintedPaths(rec)).toEqual([]);
      const name = `${TEMP_PREFIX}barrier-test-1`;
      await watcher.barrier!(name, 10_000);
      const paths = hintedPaths(rec);
      expect(paths).toEqual(expect.arrayContaining(['a/b/edit.txt', 'fresh', 'fresh/deeper/inside.txt', 'a/one.txt', 'a/b/moved.txt']));
      expect(paths.filter((p) => p.includes('barrier'))).toEqual([]);
      await expect(readdir(dir)).resolves.not.toContain(name);
      // A second barrier with nothing new hands on nothing more; the watcher keeps working after it.
      const before = paths.length;
      await watcher.barrier!(`${TEMP_PREFIX}barrier-test-2`, 10_000);
      expect(hintedPaths(rec).length).toBe(before);
      expect(watcher.health().state).toBe('ok');
    });

    it('barrier: rejects at once on a closed watcher, and within its bound when its file cannot be made', async () => {
      await startWatcher();
      await mkdir(join(dir, 'taken'));
      // A folder already holds the name: the file cannot be made ('wx'), so no event can come.
      await expect(watcher.barrier!('taken', 10_000)).rejects.toThrow(/EEXIST/);
      await watcher.close();
      await expect(watcher.barrier!(`${TEMP_PREFIX}barrier-test-3`, 10_000)).rejects.toThrow(/not running/);
    });

    it('refuses to start on a root that does not exist, saying so', async () => {
      const w = createWatcher(kind, { rootPath: join(dir, 'missing'), isIgnored: () => false });
      await expect(w.start(() => undefined, () => undefined)).rejects.toThrow(/sync root .*missing is not a folder \(missing or unmounted\?\)/);
      await w.close();
    });

    it('degrades with a reason when its watch budget is used up, and keeps the watches it has', async () => {
      await startWatcher({ maxWatches: 2 });
      const h = watcher.health();
      expect(h.state).toBe('degraded');
      if (h.state === 'degraded') {
        expect(h.reason).toMatch(/watch budget of 2/);
        expect(h.reason).toMatch(/full scan every 5 s/);
        expect(h.fallbackScanMs).toBe(5_000);
      }
      expect(rec.health.at(-1)?.state).toBe('degraded');
      await writeFile(join(dir, 'top.txt'), 'still seen at the root');
      await waitFor(() => hintedPaths(rec).includes('top.txt'), { what: 'root watch still works' });
    });
  }
});
