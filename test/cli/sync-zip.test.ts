/**
 * Zip downloads for a first mirror of many small files (`http.zipMinFiles`): the real CLI against box-server.
 * The files arrive through `POST /zip_downloads` instead of one download each, with the same content and mtimes
 * (a big prefetch as several archives, one after the other);
 * a refused zip, an archive cut mid-stream, a missing or corrupted entry and an entry under another path each fall back
 * to downloading those files one by one; a run killed while extracting leaves nothing half-written under a final
 * name, and the next run converges.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ZIP_PART_MIN_BYTES, ZIP_PARTS } from '../../src/remote/box/zip-prefetch.js';
import { spawnCli } from '../support/cli.js';
import { waitFor } from '../support/wait.js';
import { explain, listTree, readText, startSyncEnv, type SyncEnv } from './sync-harness.js';

const FOLDERS = 3;
const PER_FOLDER = 30;
let e: (SyncEnv & { remoteRootId: string }) | undefined;
afterEach(async () => {
  await e?.close();
  e = undefined;
});

const content = (d: number, i: number): string => `folder ${d} file ${i}\n`.repeat(1 + (i % 7));
/** Unique names, but for the last file of each folder: `same.txt` everywhere (Box renames those in the archive). */
const name = (d: number, i: number): string => (i === PER_FOLDER - 1 ? 'same.txt' : `f${d * PER_FOLDER + i}.txt`);

async function seeded(): Promise<SyncEnv & { remoteRootId: string }> {
  const env = await startSyncEnv();
  for (let d = 0; d < FOLDERS; d++) {
    const folder = env.web.createFolder(env.remoteRootId, `d${d}`);
    for (let i = 0; i < PER_FOLDER; i++) env.web.uploadFile(folder.id, name(d, i), content(d, i), { contentModifiedAt: `2022-0${1 + d}-1${i % 10}T10:00:00Z` });
  }
  return env;
}

function requestsOf(env: SyncEnv): { zips: number; archives: number; single: number } {
  const reqs = env.srv.control.requests();
  return {
    zips: reqs.filter((r) => r.method === 'POST' && /\/zip_downloads$/.test(r.path)).length,
    archives: reqs.filter((r) => r.method === 'GET' && /\/zip_downloads\/[^/]+\/content$/.test(r.path)).length,
    single: reqs.filter((r) => r.method === 'GET' && /\/files\/\d+\/content$/.test(r.path)).length,
  };
}

async function expectMirrored(env: SyncEnv): Promise<void> {
  const tree = await listTree(env.mirror);
  expect(tree.filter((p) => p.includes('.boxsync-'))).toEqual([]);
  expect(tree.filter((p) => !p.endsWith('/'))).toHaveLength(FOLDERS * PER_FOLDER);
  for (let d = 0; d < FOLDERS; d++) {
    for (let i = 0; i < PER_FOLDER; i++) expect(await readText(join(env.mirror, `d${d}`, name(d, i)))).toBe(content(d, i));
  }
  expect((await stat(join(env.mirror, 'd2', name(2, 3)))).mtimeMs).toBe(Date.parse('2022-03-13T10:00:00Z'));
}

describe('zip downloads for many small files', () => {
  it('a first mirror of 90 small files comes as zip archives, with the same bytes and mtimes', async () => {
    e = await seeded();
    e.srv.control.clearRequests();
    await e.syncOk();
    const r = requestsOf(e);
    expect(r.zips).toBeGreaterThanOrEqual(1);
    expect(r.archives).toBe(r.zips);
    expect(r.single).toBe(0);
    await expectMirrored(e);
    expect(await readdir(join(e.stateDir, 'zip')).catch(() => [])).toEqual([]);
  });

  it('a prefetch of more than ZIP_PART_MIN_BYTES comes as about ZIP_PARTS archives, one after the other, every byte right', async () => {
    e = await startSyncEnv();
    // 60 files of 300,000 bytes (18 MB, each under the 1 MiB cap): archives of at most max(8 MiB, 18 MB / 4) bytes.
    const folder = e.web.createFolder(e.remoteRootId, 'big');
    const body = (i: number): Buffer => Buffer.alloc(300_000, i % 251);
    for (let i = 0; i < 60; i++) e.web.uploadFile(folder.id, `b${i}.bin`, body(i));
    e.srv.control.clearRequests();
    await e.syncOk();
    const r = requestsOf(e);
    // 18 MB / ZIP_PARTS is under ZIP_PART_MIN_BYTES: archives of 8 MiB, which hold 27 of these files (27, 27, 6).
    expect([ZIP_PARTS, ZIP_PART_MIN_BYTES]).toEqual([4, 8 * 1024 * 1024]);
    const expected = 3;
    expect(r).toEqual({ zips: expected, archives: expected, single: 0 });
    // Each archive is asked for once the one before it was read: its POST comes after that one's content GET.
    const order = e.srv.control.requests().filter((q) => /\/zip_downloads/.test(q.path)).map((q) => (q.method === 'POST' ? 'create' : 'content'));
    expect(order).toEqual(Array.from({ length: expected }, () => ['create', 'content']).flat());
    for (let i = 0; i < 60; i++) expect((await readFile(join(e.mirror, 'big', `b${i}.bin`))).equals(body(i))).toBe(true);
  });

  it('http.zipMinFiles 0 downloads every file alone', async () => {
    e = await seeded();
    await e.writeConfig({ extra: { http: { zipMinFiles: 0 } } });
    e.srv.control.clearRequests();
    await e.syncOk();
    expect(requestsOf(e)).toEqual({ zips: 0, archives: 0, single: FOLDERS * PER_FOLDER });
    await expectMirrored(e);
  });

  it('the default http.zipMinFiles (40): 40 small files and two empty ones come as an archive, 39 one by one', async () => {
    for (const [small, zipped] of [[40, true], [39, false]] as const) {
      const env = await startSyncEnv();
      e = env;
      for (let i = 0; i < small; i++) env.web.uploadFile(env.remoteRootId, `f${i}.txt`, `file ${i}\n`);
      // Empty files need no download and are not counted towards the threshold (1 byte to 1 MiB).
      for (const n of ['empty-a.txt', 'empty-b.txt']) env.web.uploadFile(env.remoteRootId, n, '');
      env.srv.control.clearRequests();
      await env.syncOk();
      expect(requestsOf(env)).toEqual(zipped ? { zips: 1, archives: 1, single: 0 } : { zips: 0, archives: 0, single: small });
      for (const i of [0, small - 1]) expect(await readText(join(env.mirror, `f${i}.txt`))).toBe(`file ${i}\n`);
      expect(await readText(join(env.mirror, 'empty-b.txt'))).toBe('');
      await env.close();
      e = undefined;
    }
  });

  it('a refused zip (403, an enterprise policy) falls back to one download per file', async () => {
    e = await seeded();
    e.srv.control.failNext({ method: 'POST', path: /\/zip_downloads$/, status: 403, code: 'access_denied_insufficient_permissions', count: 10 });
    e.srv.control.clearRequests();
    await e.syncOk();
    expect(requestsOf(e).single).toBe(FOLDERS * PER_FOLDER);
    await expectMirrored(e);
  });

  it('an archive cut mid-stream falls back to one download per file', async () => {
    e = await seeded();
    e.srv.control.failNext({ method: 'GET', path: /\/zip_downloads\/[^/]+\/content$/, reset: 'mid-body', count: 10 });
    e.srv.control.clearRequests();
    await e.syncOk();
    expect(requestsOf(e).archives).toBeGreaterThanOrEqual(1);
    expect(requestsOf(e).single).toBe(FOLDERS * PER_FOLDER);
    await expectMirrored(e);
  });

  it('a missing, a corrupted and a renamed entry are each downloaded alone; the rest come from the archive', async () => {
    e = await seeded();
    e.srv.control.zipFaults({ drop: ['f1.txt'], corrupt: ['f2.txt'], rename: { 'f3.txt': 'other.txt' } });
    e.srv.control.clearRequests();
    await e.syncOk();
    const r = requestsOf(e);
    expect(r.zips).toBeGreaterThanOrEqual(1);
    expect(r.single).toBe(3);
    await expectMirrored(e);
  });

  it('an entry under a path the request did not ask for is never written there: that file is downloaded alone', async () => {
    e = await seeded();
    e.srv.control.zipFaults({ rename: { 'f0.txt': 'd1/f0.txt' } });
    e.srv.control.clearRequests();
    await e.syncOk();
    expect(requestsOf(e).single).toBe(1);
    await expectMirrored(e);
    expect((await listTree(join(e.mirror, 'd1'))).filter((x) => x === 'f0.txt')).toEqual([]);
  });

  it('kill -9 while the archive is extracted: nothing half-written under a final name; the next run converges', async () => {
    e = await seeded();
    const child = spawnCli(['sync', '--once', '--config', e.configFile], { env: { BOXSYNC_LOG_LEVEL: 'warn' } });
    const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
    const count = async (): Promise<number> => (await listTree(e!.mirror).catch(() => [] as string[])).filter((p) => p.endsWith('.txt')).length;
    try {
      await waitFor(async () => (await count()) >= 5, { timeoutMs: 60_000, intervalMs: 2, what: 'the first files out of the archive' });
    } finally {
      child.kill('SIGKILL');
      await closed;
    }
    // Every file under its final name is whole.
    for (const p of (await listTree(e.mirror)).filter((x) => /^d\d\/f\d+\.txt$/.test(x))) {
      const [, d, n] = /^d(\d)\/f(\d+)\.txt$/.exec(p)!;
      expect(await readText(join(e.mirror, p))).toBe(content(Number(d), Number(n) - Number(d) * PER_FOLDER));
    }
    const again = await e.sync();
    expect(again.code, explain(again)).toBe(0);
    await expectMirrored(e);
  });
});
