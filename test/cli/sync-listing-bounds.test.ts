/**
 * Issue 26, point 11: every listing ends, whatever Box answers.
 * - A tree with no bottom (every folder holds one more new folder): the walk stops where a Linux path would be too
 *   long (core/path-limits.ts, 4031 bytes), and the folder beyond is parked, not listed.
 * - A paging marker that changes on every page while the pages repeat the same entries: the listing stops as
 *   incomplete after two pages that bring nothing new.
 * Each ends within a bound of requests, is reported, exits 1, and trashes nothing on either side.
 */
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_LOCAL_PATH_BYTES } from '../../src/core/path-limits.js';
import { exists, explain, listTree, readText, startSyncEnv, writeText, writeRequests, type SyncEnv } from './sync-harness.js';

const envs: SyncEnv[] = [];
afterEach(async () => {
  for (const e of envs.splice(0)) await e.close();
});

async function firstSync(): Promise<SyncEnv & { remoteRootId: string; aId: string; docsId: string; b: { id: string; etag: string; sha1: string } }> {
  const env = await startSyncEnv();
  envs.push(env);
  const a = env.web.uploadFile(env.remoteRootId, 'a.txt', 'a v1');
  const docs = env.web.createFolder(env.remoteRootId, 'docs');
  const b = env.web.uploadFile(docs.id, 'b.txt', 'b v1');
  await env.syncOk();
  // A pending local edit that the bad listing must not hold back.
  await writeText(join(env.mirror, 'a.txt'), 'a v2 (local edit)');
  return { ...env, aId: a.id, docsId: docs.id, b };
}

/** The deepest folder below `dir`, as an absolute path (the chain has one folder per level). */
async function deepest(dir: string): Promise<string> {
  let cur = dir;
  for (;;) {
    const subs = (await readdir(cur, { withFileTypes: true })).filter((e) => e.isDirectory());
    if (subs.length === 0) return cur;
    cur = join(cur, subs[0]!.name);
  }
}

const listingsOf = (env: SyncEnv, re: RegExp): number => env.srv.control.requests().filter((q) => q.method === 'GET' && re.test(q.path)).length;

describe('sync --once: every listing ends', () => {
  it('a Box tree with no bottom stops where a Linux path would be too long: the folder beyond is parked, nothing is trashed', async () => {
    const env = await firstSync();
    // A real folder made on Box after the first sync (its event leads the next pass to list it), below which
    // every listing answers one more new folder, forever. Names of 191 bytes: about 20 levels to the bound.
    const top = env.web.createFolder(env.remoteRootId, 'deep');
    const levelName = (n: number): string => `level-${String(n).padStart(4, '0')}-${'x'.repeat(180)}`;
    const FAKE = 9_000_000;
    env.srv.control.failNext({
      method: 'GET',
      path: new RegExp(`^/2\\.0/folders/(${top.id}|9\\d{6})/items$`),
      count: 100_000,
      respond: ({ path }) => {
        const id = /folders\/(\d+)\/items/.exec(path)![1]!;
        const n = id === top.id ? 1 : Number(id) - FAKE + 1;
        const child = { type: 'folder', id: String(FAKE + n), etag: '0', sequence_id: '0', name: levelName(n), item_status: 'active' };
        return { entries: [child], limit: 1000, next_marker: null };
      },
    });
    env.srv.control.clearRequests();
    // Run 1 finds the folder by its event; run 2 (a new process, an item parked) lists everything again.
    for (let run = 1; run <= 2; run++) {
      const r = await env.sync([], { timeoutMs: 120_000 });
      const out = r.stdout + r.stderr;
      expect(r.code, explain(r)).toBe(1);
      expect(out).toMatch(/PARKED .*level-\d{4}-x+: Box sent a folder \(Box id 9\d{6}\).*more than the 4031 .*not listed or synced/);
    }
    // Bounded: about 20 listings of the chain a run (4031 bytes at 192 a level), never an endless walk.
    const levels = Math.ceil(MAX_LOCAL_PATH_BYTES / 192);
    expect(listingsOf(env, /^\/2\.0\/folders\/9\d{6}\/items$/)).toBeLessThanOrEqual(2 * levels);
    // The chain is mirrored down to the bound, and no path in it is longer than the bound.
    const bottom = await deepest(join(env.mirror, 'deep'));
    expect(Buffer.byteLength(bottom)).toBeLessThanOrEqual(MAX_LOCAL_PATH_BYTES);
    expect(Buffer.byteLength(bottom)).toBeGreaterThan(MAX_LOCAL_PATH_BYTES - 2 * 192);
    // The rest synced, and nothing was trashed on either side.
    expect(env.web.readFile(env.aId).toString()).toBe('a v2 (local edit)');
    expect(await readText(join(env.mirror, 'docs', 'b.txt'))).toBe('b v1');
    expect(await exists(join(env.stateDir, 'trash'))).toBe(false);
    expect(writeRequests(env.srv).filter((q) => q.method === 'DELETE')).toEqual([]);
  });

  it('a paging marker that changes on every page while the pages repeat stops as incomplete, and deletes nothing', async () => {
    const env = await firstSync();
    const bEntry = { type: 'file', id: env.b.id, etag: env.b.etag, sequence_id: '0', name: 'b.txt', sha1: env.b.sha1, size: 4, content_modified_at: '2026-01-01T00:00:00Z', item_status: 'active' };
    let marker = 0;
    env.srv.control.failNext({
      method: 'GET',
      path: `/2.0/folders/${env.docsId}/items`,
      count: 100_000,
      respond: () => ({ entries: [bEntry], limit: 1000, next_marker: `marker-${++marker}` }),
    });
    env.srv.control.clearRequests();
    const r = await env.sync(['--full-rescan'], { timeoutMs: 60_000 });
    expect(r.code, explain(r)).toBe(1);
    expect(r.stdout + r.stderr).toMatch(/incomplete \(2 pages in a row brought no entry not already listed\)/);
    // The first page, then two that repeat it.
    expect(listingsOf(env, new RegExp(`^/2\\.0/folders/${env.docsId}/items$`))).toBeLessThanOrEqual(3);
    expect(await listTree(env.mirror)).toEqual(['a.txt', 'docs/', 'docs/b.txt']);
    expect(env.web.readFile(env.aId).toString()).toBe('a v2 (local edit)');
    expect(await exists(join(env.stateDir, 'trash'))).toBe(false);
    expect(writeRequests(env.srv).filter((q) => q.method === 'DELETE')).toEqual([]);
    expect((await lstat(join(env.mirror, 'docs', 'b.txt'))).isFile()).toBe(true);
  });
});
