/**
 * Issue 10 regressions: a Box that answers with malformed or hostile items, loops and incomplete listings.
 * Each case starts from a good first sync with one unsynced local edit pending, and checks that the bad items are
 * parked and reported (escaped), that the pending edit and every other change still sync in the same run, that
 * nothing outside the mirror is written, and that nothing is deleted on the strength of a partial answer.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { exists, listTree, readText, startSyncEnv, writeText, type SyncEnv } from './sync-harness.js';

const envs: SyncEnv[] = [];
afterEach(async () => {
  for (const e of envs.splice(0)) await e.close();
});

async function goodFirstSync(): Promise<SyncEnv & { remoteRootId: string; docsId: string; aId: string }> {
  const env = await startSyncEnv();
  envs.push(env);
  const a = env.web.uploadFile(env.remoteRootId, 'a.txt', 'a v1');
  const docs = env.web.createFolder(env.remoteRootId, 'docs');
  env.web.uploadFile(docs.id, 'b.txt', 'b v1');
  await env.syncOk();
  expect(await listTree(env.mirror)).toEqual(['a.txt', 'docs/', 'docs/b.txt']);
  // The pending local edit that a bad item must not hold back.
  await writeText(join(env.mirror, 'a.txt'), 'a v2 (local edit)');
  return { ...env, docsId: docs.id, aId: a.id };
}

const entryOf = (over: Record<string, unknown>, id: string): Record<string, unknown> => ({
  type: 'file',
  id,
  etag: '0',
  sequence_id: '0',
  name: `f${id}.txt`,
  sha1: 'da39a3ee5e6b4b0d3255bfef95601890afd80709',
  size: 0,
  content_modified_at: '2026-01-01T00:00:00Z',
  item_status: 'active',
  ...over,
});

/** Entries that must each be refused on their own, with the fields the issue lists. */
const HOSTILE: readonly Record<string, unknown>[] = [
  entryOf({ name: '..' }, '9000001'),
  entryOf({ name: '.' }, '9000002'),
  entryOf({ name: '../x' }, '9000003'),
  entryOf({ name: '/abs/path' }, '9000004'),
  entryOf({ name: 'docs/../../x' }, '9000005'),
  entryOf({ name: '' }, '9000006'),
  entryOf({ name: 'docs/injected.txt' }, '9000007'),
  entryOf({ name: '\u001b[2Jclear.txt' }, '9000008'),
  entryOf({ id: undefined }, '9000009'),
  entryOf({ name: undefined }, '9000010'),
  entryOf({ name: { a: 1 } }, '9000011'),
  entryOf({ name: ['x'] }, '9000012'),
  entryOf({ sha1: 12345 }, '9000013'),
  entryOf({ sha1: { x: 1 } }, '9000014'),
  entryOf({ size: 1e300 }, '9000015'),
  entryOf({ parent: 'nope' }, '9000016'),
  entryOf({ name: 'trailing ' }, '9000017'),
  entryOf({ name: `${'é'.repeat(200)}.txt` }, '9000018'),
];

describe('sync --once against a hostile Box', () => {
  it('parks every malformed or hostile entry, escapes it, and syncs everything else in the same run, on every run', async () => {
    const env = await goodFirstSync();
    const beside = (await readdir(env.dir)).sort();
    // A folder created on the web side: its listing carries the hostile entries next to one good file.
    const incoming = env.web.createFolder(env.remoteRootId, 'incoming');
    const good = env.web.uploadFile(incoming.id, 'good.txt', 'good');
    env.srv.control.failNext({
      method: 'GET',
      path: `/2.0/folders/${incoming.id}/items`,
      count: 1000,
      transform: (b) => {
        const body = b as { entries: Record<string, unknown>[] };
        const dup = body.entries.find((e) => e.id === good.id)!;
        return { ...body, entries: [...body.entries, ...HOSTILE, { ...dup, name: 'dup.txt' }] };
      },
    });
    for (let run = 1; run <= 2; run++) {
      const r = await env.sync();
      const out = r.stdout + r.stderr;
      expect(r.code, out).toBe(1);
      // Nothing raw reaches the terminal: the escape sequence is shown escaped.
      expect(out).not.toContain('\u001b[2J');
      expect(out).toContain('\\x1b[2Jclear.txt');
      expect(out).toMatch(/parked and not syncing/);
      expect(out).toMatch(/PARKED .*Box id 9000015.*size/s);
    }
    // The pending edit went up and the good file came down, while the bad ones were refused.
    expect(env.web.readFile(env.aId).toString()).toBe('a v2 (local edit)');
    expect(await readText(join(env.mirror, 'incoming', 'good.txt'))).toBe('good');
    expect(await listTree(env.mirror)).toEqual(['a.txt', 'docs/', 'docs/b.txt', 'incoming/', 'incoming/good.txt']);
    expect(await exists(join(env.mirror, 'docs', 'injected.txt'))).toBe(false);
    // Nothing was written beside the mirror (`../x`, `/abs/path`, `docs/../../x`).
    expect((await readdir(env.dir)).sort()).toEqual(beside);
    expect(await exists('/abs/path')).toBe(false);
    // Once Box answers properly again, the next run (a new process) retries the parked items and is clean.
    env.srv.control.clearFaults();
    const clean = await env.sync();
    expect(clean.code, clean.stdout + clean.stderr).toBe(0);
    expect(clean.stderr).not.toMatch(/PARKED/);
  });

  it('a listing that ends short of its total_count deletes nothing locally', async () => {
    const env = await goodFirstSync();
    const c = env.web.uploadFile(env.remoteRootId, 'c.txt', 'c');
    await env.sync();
    // An offset-style answer: 5 announced, 1 sent.
    env.srv.control.failNext({
      method: 'GET',
      path: `/2.0/folders/${env.remoteRootId}/items`,
      count: 1000,
      transform: (b) => {
        const body = b as { entries: Record<string, unknown>[] };
        return { entries: body.entries.filter((e) => e.id === c.id), total_count: 5, offset: 0, limit: 1000 };
      },
    });
    const r = await env.sync(['--full-rescan']);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stdout + r.stderr).toMatch(/incomplete/);
    expect(await listTree(env.mirror)).toEqual(['a.txt', 'c.txt', 'docs/', 'docs/b.txt']);
    expect(await exists(join(env.stateDir, 'trash'))).toBe(false);
    // Box unchanged too: nothing was trashed there.
    expect(env.web.listFolder(env.remoteRootId).map((e) => e.name).sort()).toEqual(['a.txt', 'c.txt', 'docs']);
    // Once Box answers in full again, the run converges.
    env.srv.control.clearFaults();
    const ok = await env.sync(['--full-rescan']);
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
  });

  it('a folder that lists itself, the root, or its parent ends (no endless walk) and deletes nothing', async () => {
    const env = await goodFirstSync();
    const loop = env.web.createFolder(env.docsId, 'loop');
    env.web.uploadFile(loop.id, 'inner.txt', 'inner');
    const self = (id: string, name: string): Record<string, unknown> => ({ type: 'folder', id, etag: '0', sequence_id: '0', name, item_status: 'active' });
    env.srv.control.failNext({
      method: 'GET',
      path: `/2.0/folders/${loop.id}/items`,
      count: 1000,
      transform: (b) => {
        const body = b as { entries: Record<string, unknown>[] };
        return { ...body, entries: [...body.entries, self(loop.id, 'me'), self(env.remoteRootId, 'root'), self(env.docsId, 'up')] };
      },
    });
    env.srv.control.clearRequests();
    const r = await env.sync(['--full-rescan']);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    const listings = env.srv.control.requests().filter((q) => q.method === 'GET' && q.path.endsWith('/items'));
    expect(listings.length).toBeLessThan(20);
    expect(await listTree(env.mirror)).toEqual(['a.txt', 'docs/', 'docs/b.txt', 'docs/loop/', 'docs/loop/inner.txt']);
    expect(env.web.readFile(env.aId).toString()).toBe('a v2 (local edit)');
  });

  it('an event that moves the root into its own child, or a folder into its own subtree, ends the run and deletes nothing', async () => {
    const env = await goodFirstSync();
    const sub = env.web.createFolder(env.docsId, 'sub');
    expect((await env.sync()).code).toBe(0);
    const folderAnswer = (id: string, parent: string, name: string) => (b: unknown) => ({ ...(b as object), id, name, parent: { type: 'folder', id: parent } });
    // Box now claims: the root lives inside docs/sub, and docs lives inside its own child sub.
    env.srv.control.failNext({ method: 'GET', path: `/2.0/folders/${env.remoteRootId}`, count: 1000, transform: folderAnswer(env.remoteRootId, sub.id, 'Mirror') });
    env.srv.control.failNext({ method: 'GET', path: `/2.0/folders/${env.docsId}`, count: 1000, transform: folderAnswer(env.docsId, sub.id, 'docs') });
    const event = (id: string, seq: string) => ({ type: 'event', event_id: `cyc-${id}-${seq}`, event_type: 'ITEM_MOVE', source: { type: 'folder', id, sequence_id: seq, name: 'x', parent: { type: 'folder', id: sub.id } } });
    env.srv.control.failNext({
      method: 'GET',
      path: '/2.0/events',
      count: 1,
      transform: (b) => ({ ...(b as object), chunk_size: 2, entries: [event(env.remoteRootId, '9007199254740993123'), event(env.docsId, '9007199254740993124')] }),
    });
    const r = await env.sync([], { timeoutMs: 60_000 });
    expect([0, 1]).toContain(r.code);
    expect(await listTree(env.mirror)).toEqual(['a.txt', 'docs/', 'docs/b.txt', 'docs/sub/']);
    expect(env.web.readFile(env.aId).toString()).toBe('a v2 (local edit)');
    env.srv.control.clearFaults();
    expect((await env.sync()).code).toBe(0);
    expect(await listTree(env.mirror)).toEqual(['a.txt', 'docs/', 'docs/b.txt', 'docs/sub/']);
  });

  it('an event stream whose position goes backwards keeps the last good position', async () => {
    const env = await goodFirstSync();
    env.srv.control.clearRequests();
    env.srv.control.failNext({ method: 'GET', path: '/2.0/events', count: 1000, body: { chunk_size: 0, next_stream_position: 1, entries: [] } });
    const r = await env.sync([], { timeoutMs: 30_000 });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(env.srv.control.requests().filter((q) => q.path === '/2.0/events').length).toBeLessThanOrEqual(2);
    // The pending edit still went up.
    expect(env.web.readFile(env.aId).toString()).toBe('a v2 (local edit)');
  });

  it('a paging marker that never ends makes the listing incomplete after one repeat, and deletes nothing', async () => {
    const env = await goodFirstSync();
    env.srv.control.clearRequests();
    env.srv.control.failNext({
      method: 'GET',
      path: `/2.0/folders/${env.docsId}/items`,
      count: 1000,
      // A canned answer (the route is not run), so the repeated marker is never judged by box-server itself.
      body: { entries: [], limit: 1000, next_marker: 'same-marker-forever' },
    });
    const r = await env.sync(['--full-rescan'], { timeoutMs: 30_000 });
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).toMatch(/repeated a paging marker/);
    expect(env.srv.control.requests().filter((q) => q.path === `/2.0/folders/${env.docsId}/items`).length).toBeLessThanOrEqual(3);
    expect(await listTree(env.mirror)).toEqual(['a.txt', 'docs/', 'docs/b.txt']);
  });
});
