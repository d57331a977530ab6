/**
 * How the abort reason decides an interrupted upload session's fate: a shutdown (`shutdownReason()`) keeps the
 * session on the server and its record, and the next adapter instance resumes it; a cancel (any other reason)
 * aborts it on the server and forgets it; a source file changed after a shutdown starts over.
 */
import { createHash, randomBytes } from 'node:crypto';
import { utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BoxServer } from '../../../src/box-server/index.js';
import { isSyncError, shutdownReason } from '../../../src/core/errors.js';
import { asRemoteId } from '../../../src/core/model.js';
import { makeTempDir } from '../../support/tmp.js';
import { adapterFor, MemorySessionStore, startServer, TOKEN } from './harness.js';
import { uploadSource } from '../../support/upload-source.js';

const PART = 1024 * 1024;
const SIZE = 20_000_000 + 777;
const TOTAL_PARTS = Math.ceil(SIZE / PART);
const sha1 = (b: Buffer): string => createHash('sha1').update(b).digest('hex');
const isPartPut = (r: { method: string; path: string }): boolean => r.method === 'PUT' && /\/files\/upload_sessions\/[^/]+$/.test(r.path);
const isCreate = (r: { method: string; path: string }): boolean => r.method === 'POST' && r.path.endsWith('/upload_sessions');
const isAbort = (r: { method: string; path: string }): boolean => r.method === 'DELETE' && /\/files\/upload_sessions\/[^/]+$/.test(r.path);

async function failure(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (e) {
    if (isSyncError(e)) return { code: e.code, message: e.message };
    throw e;
  }
  throw new Error('expected the upload to fail');
}

describe('Box adapter: upload sessions interrupted by shutdown or by a cancel', () => {
  let server: BoxServer;
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let body: Buffer;
  let n = 0;
  const folder = (): string => server.control.as('1').createFolder('0', `sd-${++n}`).id;

  /** Status of the session on the server, asked directly (not through the adapter under test). */
  const sessionStatus = async (sessionId: string): Promise<number> =>
    (await fetch(`${server.uploadUrl}/files/upload_sessions/${sessionId}`, { headers: { authorization: `Bearer ${TOKEN}` } })).status;

  beforeAll(async () => {
    server = await startServer({ chunkedPartSizeBytes: PART });
    tmp = await makeTempDir('boxsync-sess-stop-');
    body = randomBytes(SIZE);
  });
  afterAll(async () => {
    await server.close();
    await tmp.cleanup();
  });

  async function interrupted(name: string, reason: () => unknown): Promise<{ src: string; sessions: MemorySessionStore; parent: string; f: { code: string; message: string } }> {
    const parent = folder();
    const src = join(tmp.dir, name);
    await writeFile(src, body);
    await utimes(src, 1_700_000_000, 1_700_000_000);
    const sessions = new MemorySessionStore();
    const ctrl = new AbortController();
    sessions.onAddPart = (_k, count) => {
      if (count === 3) ctrl.abort(reason());
    };
    const first = adapterFor(server, { uploadSessions: sessions, partConcurrency: 1 });
    server.control.clearRequests();
    const f = await failure(
      first.store.uploadNew({ parentId: asRemoteId(parent), name, source: await uploadSource(src), modifiedAtMs: 1_700_000_000_000, resumeKey: `root:${name}`, signal: ctrl.signal }),
    );
    sessions.onAddPart = undefined;
    await first.close();
    return { src, sessions, parent, f };
  }

  it('a shutdown keeps the session and its record; the next instance resumes it and sends only the missing parts', async () => {
    const { src, sessions, parent, f } = await interrupted('stop.bin', () => shutdownReason());
    expect(f.code).toBe('aborted');
    expect(f.message).toMatch(/interrupted by shutdown; 3 confirmed part\(s\) are kept/);
    expect(server.control.requests().some(isAbort)).toBe(false);
    const rec = sessions.get('root:stop.bin');
    expect(rec?.parts.map((p) => p.offset)).toEqual([0, PART, 2 * PART]);
    expect(await sessionStatus(rec!.sessionId)).toBe(200);

    server.control.clearRequests();
    const second = adapterFor(server, { uploadSessions: sessions, partConcurrency: 4 });
    const e = await second.store.uploadNew({ parentId: asRemoteId(parent), name: 'stop.bin', source: await uploadSource(src), modifiedAtMs: 1_700_000_000_000, resumeKey: 'root:stop.bin' });
    await second.close();
    expect(e).toMatchObject({ name: 'stop.bin', sizeBytes: SIZE, sha1: sha1(body) });
    const reqs = server.control.requests();
    expect(reqs.filter(isCreate)).toHaveLength(0);
    const sent = reqs.filter(isPartPut).map((r) => Number(/^bytes (\d+)-/.exec(r.headers['content-range']!)![1]));
    expect(sent).toHaveLength(TOTAL_PARTS - 3);
    expect(sent.filter((o) => o < 3 * PART)).toEqual([]);
    expect(sessions.list()).toEqual([]);
    expect(sha1(server.control.as('1').readFile(e.id))).toBe(sha1(body));
  });

  it('a cancel (any other abort reason) aborts the session on the server and forgets it; the next attempt starts over', async () => {
    const { src, sessions, parent, f } = await interrupted('cancel.bin', () => new Error('the user cancelled'));
    expect(f.code).toBe('aborted');
    expect(f.message).toMatch(/was cancelled; the upload session was aborted/);
    const reqs = server.control.requests();
    const created = reqs.find(isCreate);
    expect(created).toBeDefined();
    expect(reqs.filter(isAbort).map((r) => r.status)).toEqual([204]);
    const abortedId = reqs.find(isAbort)!.path.split('/').at(-1)!;
    expect(await sessionStatus(abortedId)).toBe(404);
    expect(sessions.list()).toEqual([]);

    server.control.clearRequests();
    const second = adapterFor(server, { uploadSessions: sessions, partConcurrency: 4 });
    const e = await second.store.uploadNew({ parentId: asRemoteId(parent), name: 'cancel.bin', source: await uploadSource(src), modifiedAtMs: 1_700_000_000_000, resumeKey: 'root:cancel.bin' });
    await second.close();
    expect(e.sha1).toBe(sha1(body));
    expect(server.control.requests().filter(isCreate)).toHaveLength(1);
    expect(server.control.requests().filter(isPartPut)).toHaveLength(TOTAL_PARTS);
  });

  it('a file that changed after a shutdown is not resumed: the kept session is aborted and a new one uploads the new content', async () => {
    const { src, sessions, parent } = await interrupted('changed.bin', () => shutdownReason());
    const old = sessions.get('root:changed.bin');
    expect(old).toBeDefined();
    const edited = Buffer.from(body);
    edited[5] = edited[5]! ^ 0xff;
    await writeFile(src, edited);
    await utimes(src, 1_700_000_100, 1_700_000_100);

    server.control.clearRequests();
    const second = adapterFor(server, { uploadSessions: sessions, partConcurrency: 4 });
    const e = await second.store.uploadNew({ parentId: asRemoteId(parent), name: 'changed.bin', source: await uploadSource(src), modifiedAtMs: 1_700_000_100_000, resumeKey: 'root:changed.bin' });
    await second.close();
    expect(e.sha1).toBe(sha1(edited));
    const reqs = server.control.requests();
    expect(reqs.filter(isAbort).map((r) => r.path)).toEqual([`/api/2.0/files/upload_sessions/${old!.sessionId}`]);
    expect(reqs.filter(isCreate)).toHaveLength(1);
    expect(await sessionStatus(old!.sessionId)).toBe(404);
    expect(sessions.list()).toEqual([]);
  });
});
