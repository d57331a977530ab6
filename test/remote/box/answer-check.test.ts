/**
 * The Box adapter checks an answer that contradicts its request (another parent, another name, another item)
 * with a GET of the item: the GET's view is used when it matches the request, else the call fails with
 * `remote_answer_inconsistent` (skip), so the engine parks the item instead of committing a wrong place.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BoxServer } from '../../../src/box-server/index.js';
import { asRemoteId } from '../../../src/core/model.js';
import type { BoxAdapter } from '../../../src/remote/box/create-box-adapter.js';
import { makeTempDir } from '../../support/tmp.js';
import { adapterFor, startServer, syncFailure } from './harness.js';
import { uploadSource } from '../../support/upload-source.js';

describe('Box adapter: answers that contradict the request', () => {
  let server: BoxServer;
  let adapter: BoxAdapter;
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let n = 0;
  const folder = (parent = '0'): string => server.control.as('1').createFolder(parent, `ac-${++n}`).id;
  const reparent = (to: string) => (body: unknown): unknown => {
    const b = body as { entries?: { parent?: { id: string } }[]; parent?: { id: string } };
    for (const item of b.entries ?? [b]) if (item.parent) item.parent = { ...item.parent, id: to };
    return body;
  };
  const rename = (to: string) => (body: unknown): unknown => ({ ...(body as object), name: to });

  beforeAll(async () => {
    server = await startServer();
    adapter = adapterFor(server);
    tmp = await makeTempDir('boxsync-ac-');
  });
  afterAll(async () => {
    await adapter.close();
    await server.close();
    await tmp.cleanup();
  });

  it('a folder create answered in another parent is read again; the GET shows it where asked, and that is returned', async () => {
    const parent = folder();
    const other = folder();
    server.control.failNext({ method: 'POST', path: '/2.0/folders', transform: reparent(other) });
    server.control.clearRequests();
    const made = await adapter.store.createFolder(asRemoteId(parent), 'child');
    expect(made).toMatchObject({ parentId: parent, name: 'child', kind: 'folder' });
    expect(server.control.requests().map((r) => `${r.method} ${r.path}`)).toEqual(['POST /2.0/folders', `GET /2.0/folders/${made.id}`]);
  });

  it('a move answered under another name, which a GET repeats, fails remote_answer_inconsistent (skip) with the reason', async () => {
    const parent = folder();
    const f = server.control.as('1').uploadFile(parent, 'a.txt', 'x');
    server.control.failNext({ method: 'PUT', path: `/2.0/files/${f.id}`, transform: rename('not-b.txt') });
    server.control.failNext({ method: 'GET', path: `/2.0/files/${f.id}`, transform: rename('not-b.txt') });
    const e = await syncFailure(adapter.store.move({ id: asRemoteId(f.id), kind: 'file', parentId: asRemoteId(parent), name: 'b.txt' }));
    expect(e.code).toBe('remote_answer_inconsistent');
    expect(e.disposition).toBe('skip');
    expect(e.message).toMatch(/contradicts the request \(it names the item "not-b\.txt", not "b\.txt"\)/);
    expect(e.message).toMatch(/nothing local was moved or trashed/);
  });

  it('a new version answered in another folder than the file is in is checked too', async () => {
    const parent = folder();
    const other = folder();
    const f = server.control.as('1').uploadFile(parent, 'v.txt', 'one');
    const src = join(tmp.dir, 'v.txt');
    await writeFile(src, 'two');
    server.control.failNext({ method: 'POST', path: `/api/2.0/files/${f.id}/content`, transform: reparent(other) });
    server.control.failNext({ method: 'GET', path: `/2.0/files/${f.id}`, transform: reparent(other) });
    const e = await syncFailure(adapter.store.uploadVersion({ id: asRemoteId(f.id), name: 'v.txt', parentId: asRemoteId(parent), source: await uploadSource(src), modifiedAtMs: 0 }));
    expect(e.code).toBe('remote_answer_inconsistent');
    expect(e.message).toContain(`not ${parent}`);
  });

  it('an answer that matches the request costs no extra call', async () => {
    const parent = folder();
    server.control.clearRequests();
    await adapter.store.createFolder(asRemoteId(parent), 'plain');
    expect(server.control.requests().map((r) => r.method)).toEqual(['POST']);
  });
});
