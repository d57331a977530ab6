/**
 * The native inotify watcher's own cases (the shared contract runs in watcher-impls.test.ts): a queue overflow,
 * a folder moved out and back in, a deep new tree, the watch budget, the wd table kept in step with the kernel's
 * (/proc/self/fdinfo), and the fallback to DirWatcher when the addon cannot load.
 */
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { WatcherHealth, WatchHint } from '../../src/ports/local-watcher.js';
import { chooseWatcher, createWatcher } from '../../src/local/watcher-factory.js';
import { loadInotifyAddon } from '../../src/local/inotify-native.js';
import { DirWatcher } from '../../src/local/watcher-dirs.js';
import { InotifyWatcher } from '../../src/local/watcher-inotify.js';
import type { WatcherOptions } from '../../src/local/watcher-options.js';
import { makeTempDir } from '../support/tmp.js';
import { waitFor } from '../support/wait.js';

interface Rec {
  readonly hints: WatchHint[];
  readonly health: WatcherHealth[];
}

/** The wds the kernel holds on this inotify fd. */
async function kernelWatches(fd: number): Promise<number> {
  const info = await readFile(`/proc/self/fdinfo/${fd}`, 'utf8');
  return info.split('\n').filter((l) => l.startsWith('inotify wd:')).length;
}

describe('InotifyWatcher', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let watcher: InotifyWatcher;
  let rec: Rec;

  async function startWatcher(extra: Partial<WatcherOptions> = {}): Promise<void> {
    rec = { hints: [], health: [] };
    const w = createWatcher('inotify', { rootPath: dir, isIgnored: (p) => p.endsWith('.excluded'), settleMs: 100, deleteHoldMs: 300, fallbackScanMs: 5_000, ...extra });
    expect(w).toBeInstanceOf(InotifyWatcher);
    watcher = w as InotifyWatcher;
    await watcher.start((h) => rec.hints.push(...h), (h) => rec.health.push(h));
  }
  const hinted = (p: string, type: WatchHint['type'] = 'change') => rec.hints.some((h) => h.path === p && h.type === type);
  const watches = () => { const h = watcher.health(); return h.state === 'ok' ? h.watches : -1; };

  beforeEach(async () => {
    ({ dir, cleanup } = await makeTempDir());
    await mkdir(join(dir, 'a/b'), { recursive: true });
  });

  afterEach(async () => {
    await watcher?.close();
    await cleanup();
  });

  it('loads its addon here (Linux, built by npm ci)', () => {
    const load = loadInotifyAddon();
    expect(load.ok ? 'loaded' : load.reason).toBe('loaded');
    expect(chooseWatcher('inotify')).toEqual({ kind: 'inotify', note: null });
  });

  it('holds one kernel wd per watched folder, and frees them all on close', async () => {
    await startWatcher();
    expect(watches()).toBe(3);
    const fd = watcher.fd;
    expect(await kernelWatches(fd)).toBe(3);
    await watcher.close();
    expect(watcher.fd).toBe(-1);
    // The fd is closed (or, reused since, not an inotify one).
    expect(await readFile(`/proc/self/fdinfo/${fd}`, 'utf8').catch(() => '')).not.toMatch(/inotify wd:/);
  });

  it('watches a deep new tree made after the start, hints all of it, and drops its wds when it is deleted', async () => {
    await startWatcher();
    const deep = Array.from({ length: 12 }, (_, i) => `d${i}`).join('/');
    await mkdir(join(dir, 'new', deep), { recursive: true });
    await writeFile(join(dir, 'new', deep, 'leaf.txt'), 'leaf');
    await waitFor(() => hinted(`new/${deep}/leaf.txt`), { what: 'hint for the deepest file' });
    await waitFor(() => watches() === 3 + 13, { what: '13 new watches' });
    expect(await kernelWatches(watcher.fd)).toBe(16);
    await writeFile(join(dir, 'new', deep, 'later.txt'), 'later');
    await waitFor(() => hinted(`new/${deep}/later.txt`), { what: 'the deepest folder is watched' });
    await rm(join(dir, 'new'), { recursive: true });
    await waitFor(() => hinted('new') && watches() === 3, { what: 'the deleted tree hinted and unwatched' });
    await waitFor(async () => (await kernelWatches(watcher.fd)) === 3, { what: 'the kernel dropped them too' });
  });

  it('drops a folder moved out of the root, and watches it again when moved back in', async () => {
    await startWatcher();
    await writeFile(join(dir, 'a/b/f.txt'), 'x');
    const { dir: outside, cleanup: c2 } = await makeTempDir();
    try {
      await rename(join(dir, 'a'), join(outside, 'a'));
      await waitFor(() => hinted('a') && watches() === 1, { what: 'a hinted and its two watches dropped' });
      expect(await kernelWatches(watcher.fd)).toBe(1);
      // Events out there are not ours: nothing is hinted under a path that no longer holds them.
      await writeFile(join(outside, 'a/b/out.txt'), 'out');
      await rename(join(outside, 'a'), join(dir, 'back'));
      await waitFor(() => hinted('back/b/f.txt') && hinted('back/b/out.txt'), { what: 'contents of the folder moved in' });
      await waitFor(() => watches() === 3, { what: 'the moved-in folders watched' });
      await writeFile(join(dir, 'back/b/new.txt'), 'new');
      await waitFor(() => hinted('back/b/new.txt'), { what: 'new file in the moved-in folder' });
      expect(rec.hints.filter((h) => (h.path as string).includes('out.txt') && !(h.path as string).startsWith('back/'))).toEqual([]);
    } finally {
      await c2();
    }
  });

  it('re-points a folder renamed inside the root: both names hinted, events land under the new name', async () => {
    await startWatcher();
    await rename(join(dir, 'a'), join(dir, 'z'));
    await waitFor(() => hinted('a') && hinted('z') && hinted('z/b'), { what: 'both names and the contents' });
    await waitFor(() => watches() === 3, { what: 'watches back to 3' });
    await writeFile(join(dir, 'z/b/after.txt'), 'x');
    await waitFor(() => hinted('z/b/after.txt'), { what: 'event under the new name' });
    expect(rec.hints.some((h) => h.path === 'a/b/after.txt')).toBe(false);
  });

  it('watches a folder moved over a watched one of the same name', async () => {
    await startWatcher();
    await mkdir(join(dir, 'c'));
    await waitFor(() => watches() === 4, { what: 'c watched' });
    const { dir: outside, cleanup: c2 } = await makeTempDir();
    try {
      await mkdir(join(outside, 'c/inner'), { recursive: true });
      await rename(join(outside, 'c'), join(dir, 'c')); // replaces the empty folder c
      await waitFor(() => hinted('c/inner'), { what: 'the new c hinted' });
      await waitFor(() => watches() === 5, { what: 'the new c and c/inner watched' });
      await writeFile(join(dir, 'c/inner/x.txt'), 'x');
      await waitFor(() => hinted('c/inner/x.txt'), { what: 'events from the new c/inner' });
      expect(await kernelWatches(watcher.fd)).toBe(5);
    } finally {
      await c2();
    }
  });

  it('turns a kernel queue overflow into a full rescan hint, and watches the folders whose creates were lost', async () => {
    const queued = Number((await readFile('/proc/sys/fs/inotify/max_queued_events', 'utf8')).trim());
    await startWatcher();
    // Made while the event loop is blocked, so nothing is read until the queue has overflowed: each file is a
    // create and a modify.
    for (let i = 0; i < queued / 2 + 100; i++) writeFileSync(join(dir, `a/f${i}`), 'x');
    mkdirSync(join(dir, 'a/lost'));
    await waitFor(() => hinted('', 'rescan'), { what: 'a rescan hint for the whole root' });
    await waitFor(() => watches() === 4, { what: 'the folder made during the overflow is watched' });
    await writeFile(join(dir, 'a/lost/seen.txt'), 'x');
    await waitFor(() => hinted('a/lost/seen.txt'), { what: 'events from it' });
  });

  it('degrades with a reason when its watch budget is used up mid-way, keeping what it watches', async () => {
    await startWatcher({ maxWatches: 4 });
    expect(watches()).toBe(3);
    await mkdir(join(dir, 'c/d'), { recursive: true });
    await waitFor(() => watcher.health().state === 'degraded', { what: 'degraded' });
    const h = watcher.health();
    if (h.state !== 'degraded') throw new Error('not degraded');
    expect(h.reason).toMatch(/watch budget of 4 .*full scan every 5 s/);
    expect(await kernelWatches(watcher.fd)).toBe(4);
    await writeFile(join(dir, 'a/b/still.txt'), 'x');
    await waitFor(() => hinted('a/b/still.txt'), { what: 'the watches placed keep working' });
  });

  it('degrades and asks for a full rescan when the root itself is moved away', async () => {
    await startWatcher();
    await rename(dir, `${dir}-moved`);
    try {
      await waitFor(() => hinted('', 'rescan') && watcher.health().state === 'degraded', { what: 'rescan and degraded' });
      const h = watcher.health();
      expect(h.state === 'degraded' && h.reason).toMatch(/sync root .* was moved\); falling back to a full scan every 5 s/);
      expect(await kernelWatches(watcher.fd)).toBe(0);
    } finally {
      await rename(`${dir}-moved`, dir);
    }
  });
});

describe('the inotify watcher without its addon', () => {
  it('falls back to DirWatcher, and says why', async () => {
    const missing = () => loadInotifyAddon('/nonexistent/boxsync_inotify.node');
    expect(missing()).toEqual({ ok: false, reason: expect.stringMatching(/is not built/) });
    const choice = chooseWatcher('inotify', missing);
    expect(choice.kind).toBe('dirs');
    expect(choice.note).toMatch(/native inotify watcher unavailable \(.*is not built.*\); using one fs\.watch per folder/);
    expect(chooseWatcher('dirs', missing)).toEqual({ kind: 'dirs', note: null });
    const { dir, cleanup } = await makeTempDir();
    const w = createWatcher('inotify', { rootPath: dir, isIgnored: () => false, settleMs: 50 }, missing);
    try {
      expect(w).toBeInstanceOf(DirWatcher);
      const hints: WatchHint[] = [];
      await w.start((h) => hints.push(...h), () => undefined);
      await writeFile(join(dir, 'x.txt'), 'x');
      await waitFor(() => hints.some((h) => h.path === 'x.txt'), { what: 'the fallback watcher works' });
    } finally {
      await w.close();
      await cleanup();
    }
  });
});
