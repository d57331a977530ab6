/**
 * The next window's zip archive is asked for while the current window runs (engine/window-prefetch.ts): the
 * engine with the real Box adapter (zip downloads on) against box-server, a real journal and disk. Each folder
 * of the tree is a planning window of its own; the adapter's prefetch is watched (not replaced) to see when each
 * window's files are announced, how many announcements are held at once, and that all are released, and the
 * scratch dir is checked for archives left behind.
 */
import { createHash } from 'node:crypto';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { PrefetchFile, PrefetchHandle } from '../../src/ports/remote-store.js';
import { makeTempDir } from '../support/tmp.js';

type TempDir = Awaited<ReturnType<typeof makeTempDir>>;
import { waitFor } from '../support/wait.js';
import { makeBoxHarness, type BoxHarness } from './support/box-harness.js';

const FOLDERS = 5;
const PER_FOLDER = 12;
/** About 700 bytes that do not compress, so a window's archive is longer than box-server's 4 KiB mid-body cut. */
const contentOf = (d: number, i: number): string =>
  `folder ${d} file ${i}\n${[0, 1, 2, 3, 4].map((k) => createHash('sha512').update(`${d}/${i}/${k}`).digest('hex')).join('')}\n`;

let h: BoxHarness | undefined;
let scratch: TempDir | undefined;
afterEach(async () => {
  await h?.close();
  await scratch?.cleanup();
  h = undefined;
  scratch = undefined;
});

interface Watched {
  /** In order: each announcement (the folders its files are in) and each release. */
  readonly events: ({ kind: 'announce'; n: number; folders: string[] } | { kind: 'release'; n: number })[];
  /** Announcements not released yet, by number. */
  readonly held: Map<number, string[]>;
  /** The most folders whose files were held at one time. */
  maxFolders: number;
}

/** A first mirror of FOLDERS folders of PER_FOLDER small files, each folder one window, the prefetch watched. */
async function setUp(): Promise<{ h: BoxHarness; w: Watched; scratchDir: string }> {
  scratch = await makeTempDir('boxsync-zip-scratch-');
  const scratchDir = scratch.dir;
  h = await makeBoxHarness({ windowEntries: PER_FOLDER + 1 }, { zipDownloads: { scratchDir, minFiles: 5 } });
  const folderOf = new Map<string, string>();
  for (let d = 0; d < FOLDERS; d++) {
    const folder = h.actor.createFolder(h.topId, `d${d}`);
    for (let i = 0; i < PER_FOLDER; i++) folderOf.set(h.actor.uploadFile(folder.id, `f${i}.txt`, contentOf(d, i)).id, `d${d}`);
  }
  const w: Watched = { events: [], held: new Map(), maxFolders: 0 };
  const store = h.adapter.store;
  const prefetch = store.prefetch!.bind(store);
  let n = 0;
  store.prefetch = (files: readonly PrefetchFile[], signal?: AbortSignal): PrefetchHandle => {
    const handle = prefetch(files, signal);
    const me = n++;
    const folders = [...new Set(files.map((f) => folderOf.get(f.id) ?? '?'))].sort();
    w.events.push({ kind: 'announce', n: me, folders });
    w.held.set(me, folders);
    w.maxFolders = Math.max(w.maxFolders, new Set([...w.held.values()].flat()).size);
    return {
      release: () => {
        w.held.delete(me);
        w.events.push({ kind: 'release', n: me });
        handle.release();
      },
    };
  };
  return { h, w, scratchDir };
}

const zipCalls = (b: BoxHarness): { zips: number; single: number } => {
  const reqs = b.srv.control.requests();
  return {
    zips: reqs.filter((r) => r.method === 'POST' && /\/zip_downloads$/.test(r.path)).length,
    single: reqs.filter((r) => r.method === 'GET' && /\/files\/[^/]+\/content$/.test(r.path)).length,
  };
};

describe('engine: the next window’s archive is asked for while the current window runs', () => {
  it('each window’s files are announced before the window before it ends; one archive per window, at most two windows held', async () => {
    const { h, w, scratchDir } = await setUp();
    const s = await h.run();
    expect(s.outcome).toBe('converged');
    expect(s.windows).toBeGreaterThanOrEqual(FOLDERS);
    expect(s.ops.download).toBe(FOLDERS * PER_FOLDER);
    for (let d = 0; d < FOLDERS; d++) expect(await h.read(`d${d}/f3.txt`)).toBe(contentOf(d, 3));
    // Every file came out of an archive, and each window's files were asked for once.
    expect(zipCalls(h)).toEqual({ zips: FOLDERS, single: 0 });
    // The announcement of window d(k) came before the release of window d(k-1)'s own: while it still ran.
    const announcedAt = (folder: string): number => w.events.findIndex((e) => e.kind === 'announce' && e.folders.includes(folder));
    const ownOf = (folder: string): number => {
      const own = w.events.filter((e) => e.kind === 'announce' && e.folders.length === 1 && e.folders[0] === folder).at(-1)!;
      return w.events.findIndex((e) => e.kind === 'release' && e.n === own.n);
    };
    for (let d = 1; d < FOLDERS; d++) {
      expect(announcedAt(`d${d}`)).toBeGreaterThanOrEqual(0);
      expect(announcedAt(`d${d}`)).toBeLessThan(ownOf(`d${d - 1}`));
    }
    // Bounded: the current window's files and the next window's, never more.
    expect(w.maxFolders).toBe(2);
    expect(w.held.size).toBe(0);
    await waitFor(async () => (await readdir(scratchDir)).length === 0, { timeoutMs: 10_000, what: 'the scratch dir empty' });
  });

  it('archives a killed run left in the scratch dir are removed before the first new one is written; nothing else there is', async () => {
    const { h, scratchDir } = await setUp();
    await writeFile(join(scratchDir, '0123456789abcdef.zip'), 'left by a run killed with kill -9');
    await writeFile(join(scratchDir, 'notes.txt'), 'not an archive of ours');
    expect((await h.run()).outcome).toBe('converged');
    expect(zipCalls(h).single).toBe(0);
    // Each archive is removed as it is released (without waiting for the removal): wait for the last one.
    await waitFor(async () => (await readdir(scratchDir)).join() === 'notes.txt', { timeoutMs: 10_000, what: 'only notes.txt in the scratch dir' });
  });

  it('a lookahead archive cut mid-stream: its files are downloaded alone, and no scratch file is left', async () => {
    const { h, scratchDir } = await setUp();
    // The first two archives asked for: window d1's (the lookahead, asked first) and window d0's.
    h.srv.control.failNext({ method: 'GET', path: /\/zip_downloads\/[^/]+\/content$/, reset: 'mid-body', count: 2 });
    const s = await h.run();
    expect(s.outcome).toBe('converged');
    expect(s.ops.download).toBe(FOLDERS * PER_FOLDER);
    expect(zipCalls(h).single).toBe(2 * PER_FOLDER);
    for (let d = 0; d < FOLDERS; d++) expect(await h.read(`d${d}/f11.txt`)).toBe(contentOf(d, 11));
    await waitFor(async () => (await readdir(scratchDir)).length === 0, { timeoutMs: 10_000, what: 'the scratch dir empty' });
  });

  it('cancelled while the next window’s archive is on its way: every announcement is released and no scratch file is left', async () => {
    const { h, w, scratchDir } = await setUp();
    const stop = new AbortController();
    // Box answers archives slowly, so the cancel lands while one is being asked for or written.
    h.srv.control.failNext({ method: 'GET', path: /\/zip_downloads\/[^/]+\/content$/, delayMs: 300, count: 10 });
    const run = h.engine.runOnce({ signal: stop.signal });
    await waitFor(() => w.events.filter((e) => e.kind === 'announce').length >= 2, { timeoutMs: 30_000, what: 'the lookahead announced' });
    stop.abort(new Error('test cancel'));
    const s = await run.catch((err: unknown) => err);
    expect(s instanceof Error || (s as { outcome: string }).outcome !== 'converged').toBe(true);
    expect(w.held.size).toBe(0);
    // A write under way when it was released removes its own file as it ends.
    await waitFor(async () => (await readdir(scratchDir)).length === 0, { timeoutMs: 10_000, what: 'the scratch dir empty' });
  });
});
