import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BoxServer } from '../../../src/box-server/index.js';
import { asRemoteId } from '../../../src/core/model.js';
import type { BoxAdapter } from '../../../src/remote/box/create-box-adapter.js';
import { adapterFor, startServer } from './harness.js';

const sha1 = (b: string): string => createHash('sha1').update(b).digest('hex');
const id = asRemoteId;

describe('Box adapter: Box Drive-style actions', () => {
  let server: BoxServer;
  let adapter: BoxAdapter;
  let n = 0;
  const folder = (): string => server.control.as('1').createFolder('0', `act-${++n}`).id;

  beforeAll(async () => {
    server = await startServer();
    adapter = adapterFor(server);
  });
  afterAll(async () => {
    await adapter.close();
    await server.close();
  });

  it('shows item info with its path, lock, shared link and sync state', async () => {
    const parent = folder();
    const sub = server.control.as('1').createFolder(parent, 'sub');
    const f = server.control.as('1').uploadFile(sub.id, 'i.txt', 'info');
    const info = await adapter.actions.itemInfo(id(f.id), 'file');
    expect(info?.entry).toMatchObject({ id: f.id, name: 'i.txt', sha1: sha1('info') });
    expect(info?.pathIds).toEqual(['0', parent, sub.id]);
    expect(info?.pathNames.slice(1)).toEqual([`act-${n}`, 'sub']);
    expect(info?.lock).toBeNull();
    expect(info?.sharedLink).toBeNull();
    expect((await adapter.actions.itemInfo(id(parent), 'folder'))?.syncState).toMatch(/synced|not_synced|partially_synced/);
    expect(await adapter.actions.itemInfo(id('987654'), 'file')).toBeNull();
  });

  it('locks and unlocks a file', async () => {
    const f = server.control.as('1').uploadFile(folder(), 'l.txt', 'lock');
    const lock = await adapter.actions.lock(id(f.id), { preventDownload: true });
    expect(lock).toMatchObject({ isDownloadPrevented: true });
    expect((await adapter.actions.itemInfo(id(f.id), 'file'))?.lock).not.toBeNull();
    await adapter.actions.unlock(id(f.id));
    expect((await adapter.actions.itemInfo(id(f.id), 'file'))?.lock).toBeNull();
  });

  it('creates and removes shared links', async () => {
    const parent = folder();
    const link = await adapter.actions.createSharedLink(id(parent), 'folder', { access: 'open', password: 'secret-pw-123' });
    expect(link.url).toMatch(/^https?:\/\//);
    expect(link.isPasswordEnabled).toBe(true);
    expect((await adapter.actions.itemInfo(id(parent), 'folder'))?.sharedLink?.url).toBe(link.url);
    await adapter.actions.removeSharedLink(id(parent), 'folder');
    expect((await adapter.actions.itemInfo(id(parent), 'folder'))?.sharedLink).toBeNull();
  });

  it('lists, promotes and deletes versions', async () => {
    const f = server.control.as('1').uploadFile(folder(), 'v.txt', 'one');
    server.control.as('1').uploadVersion(f.id, 'two');
    server.control.as('1').uploadVersion(f.id, 'three');
    const versions = await adapter.actions.listVersions(id(f.id));
    expect(versions.map((v) => v.sha1).sort()).toEqual([sha1('one'), sha1('two')].sort());
    const one = versions.find((v) => v.sha1 === sha1('one'))!;
    const promoted = await adapter.actions.promoteVersion(id(f.id), one.id);
    expect(promoted.sha1).toBe(sha1('one'));
    expect((await adapter.store.getItem(id(f.id), 'file'))?.sha1).toBe(sha1('one'));
    const two = versions.find((v) => v.sha1 === sha1('two'))!;
    await adapter.actions.deleteVersion(id(f.id), two.id);
    const after = await adapter.actions.listVersions(id(f.id));
    const deleted = after.find((v) => v.id === two.id);
    expect(deleted === undefined || deleted.trashedAtMs !== null).toBe(true);
  });

  it('copies a file and restores from the trash under a new name into another folder', async () => {
    const a = folder();
    const b = folder();
    const f = server.control.as('1').uploadFile(a, 'c.txt', 'copy me');
    const copy = await adapter.actions.copy(id(f.id), 'file', id(b), 'c-copy.txt');
    expect(copy).toMatchObject({ parentId: b, name: 'c-copy.txt', sha1: sha1('copy me') });
    expect(copy.id).not.toBe(f.id);
    await adapter.store.trash(id(f.id), 'file');
    const back = await adapter.actions.restoreFromTrash(id(f.id), 'file', { name: 'c-back.txt', parentId: id(b) });
    expect(back).toMatchObject({ id: f.id, parentId: b, name: 'c-back.txt' });
  });

  it('splits a move-and-rename into two calls when Box refuses extra fields on a move', async () => {
    const a = folder();
    const b = folder();
    const f = server.control.as('1').uploadFile(a, 'mv.txt', 'm');
    server.control.failNext({ method: 'PUT', path: `/2.0/files/${f.id}`, status: 403, code: 'operation_limit_exceeded' });
    server.control.clearRequests();
    const moved = await adapter.store.move({ id: id(f.id), kind: 'file', parentId: id(b), name: 'mv2.txt' });
    expect(moved).toMatchObject({ parentId: b, name: 'mv2.txt' });
    expect(server.control.requests().filter((r) => r.method === 'PUT').map((r) => r.status)).toEqual([403, 200, 200]);
  });

  it('trashes and reads web links', async () => {
    const parent = folder();
    const w = server.control.as('1').createWebLink(parent, 'Site', 'https://example.com/');
    expect(await adapter.store.getItem(id(w.id), 'weblink')).toMatchObject({ kind: 'weblink', url: 'https://example.com/' });
    await adapter.store.trash(id(w.id), 'weblink');
    expect(await adapter.store.getItem(id(w.id), 'weblink')).toBeNull();
  });
});
