import { createHash, randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BoxServer } from '../../../src/box-server/index.js';
import { asRemoteId } from '../../../src/core/model.js';
import { makeTempDir } from '../../support/tmp.js';
import { adapterFor, MemorySessionStore, startServer, syncFailure } from './harness.js';
import { uploadSource } from '../../support/upload-source.js';

const PART = 1024 * 1024;
const SIZE = 20_000_000 + 12_345;
const TOTAL_PARTS = Math.ceil(SIZE / PART);
const sha1 = (b: Buffer | string): string => createHash('sha1').update(b).digest('hex');
const isPartPut = (r: { method: string; path: string }): boolean => r.method === 'PUT' && /\/files\/upload_sessions\/[^/]+$/.test(r.path);

async function failure(p: Promise<unknown>): Promise<{ code: string; disposition: string }> {
  const e = await syncFailure(p);
  return { code: e.code, disposition: e.disposition };
}

describe('Box adapter: upload sessions', () => {
  let server: BoxServer;
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let body: Buffer;
  let src: string;
  let n = 0;
  const folder = (): string => server.control.as('1').createFolder('0', `s-${++n}`).id;

  beforeAll(async () => {
    server = await startServer({ chunkedPartSizeBytes: PART });
    tmp = await makeTempDir('boxsync-sess-');
    body = randomBytes(SIZE);
    src = join(tmp.dir, 'big.bin');
    await writeFile(src, body);
  });
  afterAll(async () => {
    await server.close();
    await tmp.cleanup();
  });

  it('uploads parts with Content-Range and a per-part Digest, then commits with the whole-file SHA-1 through a 202', async () => {
    const parent = folder();
    const sessions = new MemorySessionStore();
    const adapter = adapterFor(server, { uploadSessions: sessions, partConcurrency: 3 });
    server.control.commitAccepted(1, 1);
    server.control.clearRequests();
    const progress: number[] = [];
    const e = await adapter.store.uploadNew({
      parentId: asRemoteId(parent),
      name: 'big.bin',
      source: await uploadSource(src),
      modifiedAtMs: 1_700_000_000_000,
      resumeKey: 'root:big.bin',
      onProgress: (p) => progress.push(p.doneBytes),
    });
    expect(e).toMatchObject({ name: 'big.bin', sizeBytes: SIZE, sha1: sha1(body), modifiedAtMs: 1_700_000_000_000 });
    const reqs = server.control.requests();
    const puts = reqs.filter(isPartPut);
    expect(puts).toHaveLength(TOTAL_PARTS);
    for (const p of puts) {
      expect(p.headers.digest).toMatch(/^sha=[A-Za-z0-9+/]+=*$/);
      expect(p.headers['content-range']).toMatch(new RegExp(`^bytes \\d+-\\d+/${SIZE}$`));
    }
    const commits = reqs.filter((r) => r.method === 'POST' && r.path.endsWith('/commit'));
    expect(commits.map((c) => c.status)).toEqual([202, 201]);
    expect(commits[1]!.atMs - commits[0]!.atMs).toBeGreaterThanOrEqual(1000);
    expect(commits[1]!.headers.digest).toBe(`sha=${createHash('sha1').update(body).digest('base64')}`);
    expect(progress.at(-1)).toBe(SIZE);
    expect(sessions.list()).toEqual([]);
    expect(sha1(server.control.as('1').readFile(e.id))).toBe(sha1(body));
  });

  it('keeps several parts in flight at once (partConcurrency)', async () => {
    const parent = folder();
    const a = adapterFor(server, { partConcurrency: 4 });
    // Every part takes at least 200 ms on the server: one-at-a-time starts would be 200 ms apart.
    server.control.failNext({ method: 'PUT', path: /\/files\/upload_sessions\/[^/]+$/, delayMs: 200, count: 1000 });
    server.control.clearRequests();
    try {
      await a.store.uploadNew({ parentId: asRemoteId(parent), name: 'parallel.bin', source: await uploadSource(src), modifiedAtMs: 0 });
    } finally {
      server.control.clearFaults();
    }
    const starts = server.control.requests().filter(isPartPut).map((r) => r.atMs).sort((x, y) => x - y);
    expect(starts).toHaveLength(TOTAL_PARTS);
    const maxTogether = Math.max(...starts.map((t) => starts.filter((u) => u >= t && u < t + 150).length));
    expect(maxTogether).toBeGreaterThanOrEqual(3);
    expect(maxTogether).toBeLessThanOrEqual(4);
  });

  it('resumes a session interrupted halfway from a new client instance, sending only the missing parts', async () => {
    const parent = folder();
    const sessions = new MemorySessionStore();
    // The first process dies (every part upload fails) once 5 parts are confirmed and recorded.
    sessions.onAddPart = (_key, count) => {
      if (count === 5) server.control.failNext({ method: 'PUT', path: /\/files\/upload_sessions\/[^/]+$/, status: 500, count: 1000 });
    };
    const first = adapterFor(server, { uploadSessions: sessions, partConcurrency: 1, maxAttempts: 1 });
    const req = { parentId: asRemoteId(parent), name: 'resume.bin', source: await uploadSource(src), modifiedAtMs: 1_700_000_000_000, resumeKey: 'root:resume.bin' };
    expect(await failure(first.store.uploadNew(req))).toMatchObject({ code: 'server_error', disposition: 'retry' });
    const rec = sessions.get('root:resume.bin');
    expect(rec?.parts).toHaveLength(5);
    expect(rec?.totalParts).toBe(TOTAL_PARTS);

    server.control.clearFaults();
    sessions.onAddPart = undefined;
    server.control.clearRequests();
    const second = adapterFor(server, { uploadSessions: sessions, partConcurrency: 4 });
    const e = await second.store.uploadNew(req);
    expect(e).toMatchObject({ sha1: sha1(body), sizeBytes: SIZE });
    const reqs = server.control.requests();
    expect(reqs.some((r) => r.method === 'GET' && r.path === `/api/2.0/files/upload_sessions/${rec!.sessionId}/parts`)).toBe(true);
    expect(reqs.filter((r) => r.method === 'POST' && r.path.endsWith('/upload_sessions'))).toHaveLength(0);
    const sentOffsets = reqs.filter(isPartPut).map((r) => Number(/^bytes (\d+)-/.exec(r.headers['content-range']!)![1]));
    expect(sentOffsets).toHaveLength(TOTAL_PARTS - 5);
    expect(sentOffsets.some((o) => rec!.parts.some((p) => p.offset === o))).toBe(false);
    expect(sessions.list()).toEqual([]);
  });

  it('aborts the session on the server when the upload is cancelled', async () => {
    const parent = folder();
    const sessions = new MemorySessionStore();
    const ctrl = new AbortController();
    sessions.onAddPart = (_k, count) => {
      if (count === 2) ctrl.abort();
    };
    const adapter = adapterFor(server, { uploadSessions: sessions, partConcurrency: 1 });
    server.control.clearRequests();
    const f = await failure(
      adapter.store.uploadNew({ parentId: asRemoteId(parent), name: 'cancel.bin', source: await uploadSource(src), modifiedAtMs: 0, resumeKey: 'k', signal: ctrl.signal }),
    );
    expect(f.code).toBe('aborted');
    const reqs = server.control.requests();
    const created = reqs.find((r) => r.method === 'POST' && r.path.endsWith('/upload_sessions'));
    expect(created).toBeDefined();
    expect(reqs.some((r) => r.method === 'DELETE' && /\/files\/upload_sessions\/[^/]+$/.test(r.path) && r.status === 204)).toBe(true);
    expect(sessions.list()).toEqual([]);
  });

  it('cleans up expired persisted sessions: aborted on the server and dropped from the store', async () => {
    const parent = folder();
    const sessions = new MemorySessionStore();
    sessions.onAddPart = (_k, count) => {
      if (count === 1) server.control.failNext({ method: 'PUT', path: /\/files\/upload_sessions\/[^/]+$/, status: 500, count: 1000 });
    };
    const a = adapterFor(server, { uploadSessions: sessions, partConcurrency: 1, maxAttempts: 1 });
    await failure(a.store.uploadNew({ parentId: asRemoteId(parent), name: 'stale.bin', source: await uploadSource(src), modifiedAtMs: 0, resumeKey: 'stale' }));
    server.control.clearFaults();
    const rec = sessions.get('stale')!;
    expect(await a.cleanupUploadSessions()).toBe(0);
    sessions.put({ ...rec, expiresAtMs: Date.now() - 1 });
    server.control.clearRequests();
    expect(await a.cleanupUploadSessions()).toBe(1);
    expect(sessions.list()).toEqual([]);
    expect(server.control.requests().map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([`DELETE /api/2.0/files/upload_sessions/${rec.sessionId} 204`]);
  });

  it('a session upload of a new version with a stale etag is precondition_failed, and the session is dropped', async () => {
    const parent = folder();
    const f = server.control.as('1').uploadFile(parent, 'ver.bin', 'small first version');
    server.control.as('1').uploadVersion(f.id, 'someone else changed it');
    const sessions = new MemorySessionStore();
    const adapter = adapterFor(server, { uploadSessions: sessions });
    server.control.clearRequests();
    const res = await failure(
      adapter.store.uploadVersion({ id: asRemoteId(f.id), ifMatch: f.etag, name: 'ver.bin', source: await uploadSource(src), modifiedAtMs: 0, resumeKey: 'ver' }),
    );
    expect(res).toMatchObject({ code: 'precondition_failed', disposition: 'replan' });
    expect(sessions.list()).toEqual([]);
    expect(server.control.requests().some((r) => r.method === 'DELETE')).toBe(true);
    expect(server.control.as('1').readFile(f.id).toString()).toBe('someone else changed it');
  });
});
