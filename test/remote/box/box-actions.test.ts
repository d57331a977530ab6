/**
 * BoxActions (item info, locks, shared links, versions) against box-server, and their answers validated at the
 * boundary: a shared link that is not an http(s) URL, or a malformed version, is a clear malformed_response.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BoxServer } from '../../../src/box-server/index.js';
import { asRemoteId } from '../../../src/core/model.js';
import { adapterFor, startServer, syncFailure } from './harness.js';

let server: BoxServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => server.close());

describe('BoxActions over HTTP', () => {
  it('item info with its path, a lock, a shared link and versions', async () => {
    const a = adapterFor(server);
    const web = server.control.as('1');
    const folder = web.createFolder('0', 'Actions');
    const f = web.uploadFile(folder.id, 'v.txt', 'one');
    web.uploadVersion(f.id, 'two');
    const id = asRemoteId(f.id);
    const info = await a.actions.itemInfo(id, 'file');
    expect(info).toMatchObject({ entry: { id: f.id, name: 'v.txt' }, pathIds: ['0', folder.id], pathNames: ['All Files', 'Actions'], lock: null, sharedLink: null });
    const lock = await a.actions.lock(id, { preventDownload: true });
    expect(lock).toMatchObject({ isDownloadPrevented: true });
    expect((await a.actions.itemInfo(id, 'file'))?.lock).not.toBeNull();
    await a.actions.unlock(id);
    const link = await a.actions.createSharedLink(id, 'file', { access: 'open' });
    expect(link.url).toMatch(/^https?:\/\//);
    const versions = await a.actions.listVersions(id);
    expect(versions).toHaveLength(1);
    expect(versions[0]!.sha1).toMatch(/^[0-9a-f]{40}$/);
    const promoted = await a.actions.promoteVersion(id, versions[0]!.id);
    expect(promoted.sha1).toBe(versions[0]!.sha1);
    await a.close();
  });

  it('refuses a shared link that is not an http(s) URL and a malformed version list, naming the field', async () => {
    const a = adapterFor(server);
    const web = server.control.as('1');
    const f = web.uploadFile('0', `bad-${Date.now()}.txt`, 'x');
    const id = asRemoteId(f.id);
    server.control.failNext({ method: 'PUT', path: `/2.0/files/${f.id}`, transform: (b) => ({ ...(b as object), shared_link: { url: 'javascript:alert(1)' } }) });
    expect(await syncFailure(a.actions.createSharedLink(id, 'file', { access: 'open' }))).toMatchObject({ code: 'malformed_response', message: expect.stringMatching(/shared_link|url/) });
    server.control.failNext({ method: 'GET', path: `/2.0/files/${f.id}/versions`, body: { entries: [{ id: 'x y', size: 'lots' }], total_count: 1 } });
    expect(await syncFailure(a.actions.listVersions(id))).toMatchObject({ code: 'malformed_response' });
    await a.close();
  });
});
