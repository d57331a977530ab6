// Folder locks (/folder_locks) over plain HTTP: list, create (move and delete together, lock_type freeze), delete
// (404 the second time), and what a lock stops: moving the folder (400) and deleting it or a folder above it
// (403), until the lock is gone. box-node-sdk's testFolderLocks runs the same calls through the SDK.
import { describe, expect, it } from 'vitest';
import { arr, boxHttp, expectBoxError, obj, useBoxServer } from '../support/box-server.js';
import { loadOpenApi } from '../support/openapi.js';

const h = useBoxServer();

async function folder(name: string, parentId = '0'): Promise<string> {
  const r = await boxHttp(h.srv).post('/folders', { body: { name, parent: { id: parentId } } });
  expect(r.status).toBe(201);
  return String(obj(r.json).id);
}

describe('folder locks', () => {
  it('lists, creates and deletes a lock in Box shapes', async () => {
    const api = boxHttp(h.srv);
    const spec = loadOpenApi();
    const id = await folder('locked-a');

    const none = await api.get(`/folder_locks?folder_id=${id}`);
    expect(none.status).toBe(200);
    spec.expectValid({ method: 'GET', path: '/2.0/folder_locks', status: 200, body: none.json });
    expect(arr(obj(none.json).entries)).toEqual([]);

    const created = await api.post('/folder_locks', { body: { folder: { type: 'folder', id }, locked_operations: { move: true, delete: true } } });
    expect(created.status).toBe(200);
    spec.expectValid({ method: 'POST', path: '/2.0/folder_locks', status: 200, body: created.json });
    const lock = obj(created.json);
    expect(lock.type).toBe('folder_lock');
    expect(lock.lock_type).toBe('freeze');
    expect(obj(lock.folder).id).toBe(id);
    expect(obj(lock.created_by).id).toBe('1');
    expect(lock.locked_operations).toEqual({ move: true, delete: true });

    const listed = await api.get(`/folder_locks?folder_id=${id}`);
    expect(arr(obj(listed.json).entries).map((e) => obj(e).id)).toEqual([lock.id]);

    expect((await api.delete(`/folder_locks/${String(lock.id)}`)).status).toBe(204);
    expectBoxError(await api.delete(`/folder_locks/${String(lock.id)}`), 'DELETE', 404, 'not_found');
    expect(arr(obj((await api.get(`/folder_locks?folder_id=${id}`)).json).entries)).toEqual([]);
  });

  it('refuses bad requests: no folder_id, a missing folder, a partial locked_operations', async () => {
    const api = boxHttp(h.srv);
    const id = await folder('locked-bad');
    expectBoxError(await api.get('/folder_locks'), 'GET', 400, 'bad_request');
    expectBoxError(await api.get('/folder_locks?folder_id=999999'), 'GET', 404, 'not_found');
    expectBoxError(await api.post('/folder_locks', { body: { folder: { type: 'folder', id: '999999' } } }), 'POST', 404, 'not_found');
    expectBoxError(await api.post('/folder_locks', { body: { folder: { type: 'folder', id }, locked_operations: { move: true, delete: false } } }), 'POST', 400, 'bad_request');
    expect(arr(obj((await api.get(`/folder_locks?folder_id=${id}`)).json).entries)).toEqual([]);
  });

  it('stops moving and deleting the folder, and deleting a folder above it, until the lock is deleted', async () => {
    const api = boxHttp(h.srv);
    const outer = await folder('lock-outer');
    const locked = await folder('lock-inner', outer);
    const elsewhere = await folder('lock-elsewhere');
    const lock = obj((await api.post('/folder_locks', { body: { folder: { type: 'folder', id: locked } } })).json);

    expectBoxError(await api.put(`/folders/${locked}`, { body: { parent: { id: elsewhere } } }), 'PUT', 400, 'bad_request');
    expectBoxError(await api.delete(`/folders/${locked}?recursive=true`), 'DELETE', 403, 'access_denied_insufficient_permissions');
    expectBoxError(await api.delete(`/folders/${outer}?recursive=true`), 'DELETE', 403, 'access_denied_insufficient_permissions');
    // A rename is not a move: allowed.
    const renamed = await api.put(`/folders/${locked}`, { body: { name: 'lock-inner-renamed' } });
    expect(renamed.status).toBe(200);
    expect(obj(obj((await api.get(`/folders/${locked}?fields=parent`)).json).parent).id).toBe(outer);

    expect((await api.delete(`/folder_locks/${String(lock.id)}`)).status).toBe(204);
    const moved = await api.put(`/folders/${locked}`, { body: { parent: { id: elsewhere } } });
    expect(moved.status).toBe(200);
    expect(obj(obj(moved.json).parent).id).toBe(elsewhere);
    expect((await api.delete(`/folders/${locked}`)).status).toBe(204);
    expect((await api.delete(`/folders/${outer}?recursive=true`)).status).toBe(204);
  });
});
