// Item-level error paths: conditional requests, name rules and clashes, non-empty folders, missing and
// trashed items, restore clashes, and another user's lock. Each failure must leave the tree unchanged.
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { arr, boxHttp, expectBoxError, obj, useBoxServer } from '../support/box-server.js';
import { waitFor } from '../support/wait.js';

const handle = useBoxServer();
const http = () => boxHttp(handle.srv);

afterEach(async () => {
  const alive = await http().get('/users/me');
  expect(alive.status, 'box-server must keep serving after an error').toBe(200);
});

let seq = 0;
const unique = (p: string): string => `${p}-${process.pid}-${seq++}`;

async function folder(parentId = '0', name = unique('dir')): Promise<Record<string, unknown>> {
  const r = await http().post('/folders', { body: { name, parent: { id: parentId } } });
  expect(r.status, r.text).toBe(201);
  return obj(r.json);
}

async function file(parentId: string, name: string, content = 'x'): Promise<Record<string, unknown>> {
  const r = await http().upload('/files/content', { name, parent: { id: parentId } }, content);
  expect(r.status, r.text).toBe(201);
  return obj(arr(obj(r.json).entries)[0]);
}

async function namesIn(folderId: string): Promise<string[]> {
  const r = await http().get(`/folders/${folderId}/items?limit=1000`);
  return arr(obj(r.json).entries).map((e) => String(obj(e).name)).sort();
}

/** `context_info.conflicts` is an array for folders and an object for files on real Box (WIRE.md 4.3, 5.3). */
function conflictIds(body: Record<string, unknown>): string[] {
  const c = obj(body.context_info).conflicts;
  return (Array.isArray(c) ? c : [c]).map((x) => String(obj(x).id));
}

describe('conditional requests', () => {
  it('304 Not Modified on If-None-Match with the current etag; 200 with a stale one', async () => {
    const d = await folder();
    const f = await file(String(d.id), 'cond.txt');
    const r1 = await http().get(`/files/${String(f.id)}`, { headers: { 'If-None-Match': String(f.etag) } });
    expect(r1.status).toBe(304);
    expect(r1.text).toBe('');
    const r2 = await http().get(`/folders/${String(d.id)}`, { headers: { 'If-None-Match': String(d.etag) } });
    expect(r2.status).toBe(304);
    await http().put(`/files/${String(f.id)}`, { body: { name: 'cond2.txt' } });
    const r3 = await http().get(`/files/${String(f.id)}`, { headers: { 'If-None-Match': String(f.etag) } });
    expect(r3.status).toBe(200);
    expect(obj(r3.json).etag).not.toBe(f.etag);
  });

  it('412 precondition_failed on a stale If-Match (file rename, file delete, folder rename, folder delete, new version)', async () => {
    const d = await folder();
    const f = await file(String(d.id), 'pre.txt', 'one');
    const fid = String(f.id);
    await http().upload(`/files/${fid}/content`, { name: 'pre.txt' }, 'two');
    const stale = { 'If-Match': String(f.etag) };
    expectBoxError(await http().put(`/files/${fid}`, { body: { name: 'nope.txt' }, headers: stale }), 'PUT', 412, 'precondition_failed');
    expectBoxError(await http().delete(`/files/${fid}`, { headers: stale }), 'DELETE', 412, 'precondition_failed');
    expectBoxError(await http().upload(`/files/${fid}/content`, { name: 'pre.txt' }, 'three', { headers: stale }), 'POST', 412, 'precondition_failed');
    const now = obj((await http().get(`/files/${fid}`)).json);
    expect(now.name).toBe('pre.txt');
    expect(now.sha1).toBe(createHash('sha1').update('two').digest('hex'));

    const did = String(d.id);
    await http().put(`/folders/${did}`, { body: { description: 'changed' } });
    const dStale = { 'If-Match': String(d.etag) };
    expectBoxError(await http().put(`/folders/${did}`, { body: { name: 'nope' }, headers: dStale }), 'PUT', 412, 'precondition_failed');
    expectBoxError(await http().delete(`/folders/${did}?recursive=true`, { headers: dStale }), 'DELETE', 412, 'precondition_failed');
    expect(obj((await http().get(`/folders/${did}`)).json).item_status).toBe('active');
  });

  it('412 (not 404) when If-Match is sent for an item that does not exist', async () => {
    expectBoxError(await http().put('/files/987654321', { body: { name: 'x' }, headers: { 'If-Match': '1' } }), 'PUT', 412, 'precondition_failed');
  });
});

describe('names', () => {
  it('409 item_name_in_use, case-insensitively, across files and folders, with context_info.conflicts', async () => {
    const d = await folder();
    const did = String(d.id);
    const sub = await folder(did, 'Reports');
    const clashFolder = await http().post('/folders', { body: { name: 'reports', parent: { id: did } } });
    expect(conflictIds(expectBoxError(clashFolder, 'POST', 409, 'item_name_in_use'))).toContain(String(sub.id));

    const f = await file(did, 'Plan.txt');
    const clashUpload = await http().upload('/files/content', { name: 'PLAN.TXT', parent: { id: did } }, 'y');
    expect(conflictIds(expectBoxError(clashUpload, 'POST', 409, 'item_name_in_use'))).toContain(String(f.id));
    const fileVsFolder = await http().upload('/files/content', { name: 'REPORTS', parent: { id: did } }, 'y');
    expectBoxError(fileVsFolder, 'POST', 409, 'item_name_in_use');
    const preflight = await http().options('/files/content', { body: { name: 'plan.txt', size: 1, parent: { id: did } } });
    expect(preflight.status).toBe(409);
    expect(conflictIds(obj(preflight.json))).toContain(String(f.id));

    const g = await file(did, 'other.txt');
    expectBoxError(await http().put(`/files/${String(g.id)}`, { body: { name: 'plan.TXT' } }), 'PUT', 409, 'item_name_in_use');
    expect(await namesIn(did)).toEqual(['Plan.txt', 'Reports', 'other.txt']);
  });

  it('400 item_name_invalid for Box-illegal names and item_name_too_long over 255 characters', async () => {
    const d = await folder();
    const did = String(d.id);
    for (const name of ['a/b', 'a\\b', '.', '..', 'trailing ', 'ctl\u0001x', '../../etc/passwd', '']) {
      const r = await http().post('/folders', { body: { name, parent: { id: did } } });
      expectBoxError(r, 'POST', 400, ['item_name_invalid', 'bad_request']);
      if (name !== '') expect(obj(r.json).code).toBe('item_name_invalid');
    }
    expectBoxError(await http().upload('/files/content', { name: 'x/y.txt', parent: { id: did } }, 'z'), 'POST', 400, 'item_name_invalid');
    const long = 'n'.repeat(256);
    expectBoxError(await http().post('/folders', { body: { name: long, parent: { id: did } } }), 'POST', 400, 'item_name_too_long');
    expectBoxError(await http().upload('/files/content', { name: long, parent: { id: did } }, 'z'), 'POST', 400, 'item_name_too_long');
    const f = await file(did, 'ok.txt');
    expectBoxError(await http().put(`/files/${String(f.id)}`, { body: { name: 'bad/name' } }), 'PUT', 400, 'item_name_invalid');
    expect((await http().post('/folders', { body: { name: 'n'.repeat(255), parent: { id: did } } })).status).toBe(201);
    expect(await namesIn(did)).toEqual(['n'.repeat(255), 'ok.txt']);
  });
});

describe('delete, missing and trashed items', () => {
  it('400 folder_not_empty without recursive; the folder and its content stay', async () => {
    const d = await folder();
    const did = String(d.id);
    await file(did, 'keep.txt');
    expectBoxError(await http().delete(`/folders/${did}`), 'DELETE', 400, 'folder_not_empty');
    expect(await namesIn(did)).toEqual(['keep.txt']);
    expect((await http().delete(`/folders/${did}?recursive=true`)).status).toBe(204);
  });

  it('404 not_found for unknown ids on every verb', async () => {
    expectBoxError(await http().get('/files/9876543210'), 'GET', 404, 'not_found');
    expectBoxError(await http().get('/folders/9876543210'), 'GET', 404, 'not_found');
    expectBoxError(await http().get('/folders/9876543210/items'), 'GET', 404, 'not_found');
    expectBoxError(await http().put('/files/9876543210', { body: { name: 'x' } }), 'PUT', 404, 'not_found');
    expectBoxError(await http().delete('/files/9876543210'), 'DELETE', 404, 'not_found');
    expectBoxError(await http().delete('/folders/9876543210'), 'DELETE', 404, 'not_found');
    expectBoxError(await http().get('/files/9876543210/content'), 'GET', 404, 'not_found');
    expectBoxError(await http().get('/files/9876543210/versions'), 'GET', 404, 'not_found');
    expectBoxError(await http().post('/folders', { body: { name: 'orphan', parent: { id: '9876543210' } } }), 'POST', 404, 'not_found');
    expectBoxError(await http().upload('/files/content', { name: 'orphan.txt', parent: { id: '9876543210' } }, 'x'), 'POST', 404, 'not_found');
  });

  it('404 trashed when changing a trashed item; 404 for trash operations on items not in the trash', async () => {
    const d = await folder();
    const f = await file(String(d.id), 'gone.txt');
    const fid = String(f.id);
    expectBoxError(await http().get(`/files/${fid}/trash`), 'GET', 404, ['not_found', 'not_trashed']);
    expectBoxError(await http().delete(`/files/${fid}/trash`), 'DELETE', 404, ['not_found', 'not_trashed']);
    expect((await http().delete(`/files/${fid}`)).status).toBe(204);
    expectBoxError(await http().put(`/files/${fid}`, { body: { name: 'still-gone.txt' } }), 'PUT', 404, 'trashed');
    expectBoxError(await http().upload(`/files/${fid}/content`, { name: 'gone.txt' }, 'new'), 'POST', 404, 'trashed');
    const inTrash = obj((await http().get(`/files/${fid}/trash`)).json);
    expect(inTrash.name).toBe('gone.txt');
  });

  it('409 on restoring into a name that is now taken; restore with a new name works', async () => {
    const d = await folder();
    const did = String(d.id);
    const f = await file(did, 'r.txt', 'old');
    const fid = String(f.id);
    expect((await http().delete(`/files/${fid}`)).status).toBe(204);
    await file(did, 'R.txt', 'new');
    expectBoxError(await http().post(`/files/${fid}`, { body: {} }), 'POST', 409, 'item_name_in_use');
    expect(obj((await http().get(`/files/${fid}/trash`)).json).item_status).toBe('trashed');
    const restored = await http().post(`/files/${fid}`, { body: { name: 'r-restored.txt' } });
    expect(restored.status).toBe(201);
    expect(await namesIn(did)).toEqual(['R.txt', 'r-restored.txt']);

    const sub = await folder(did, 'sub');
    expect((await http().delete(`/folders/${String(sub.id)}`)).status).toBe(204);
    await folder(did, 'SUB');
    expectBoxError(await http().post(`/folders/${String(sub.id)}`, { body: {} }), 'POST', 409, 'item_name_in_use');
  });
});

describe('locks held by another user', () => {
  it('403 on a new version, rename and (with prevent_download) download; the lock owner is unaffected; unlock lifts it', async () => {
    const d = await folder();
    const f = await file(String(d.id), 'locked.txt', 'mine');
    const fid = String(f.id);
    const other = handle.srv.control.addUser({ name: 'Colleague', login: 'colleague@example.com' });
    const colleague = handle.srv.control.as(other.userId);
    colleague.lock(fid, { preventDownload: true });

    expectBoxError(await http().upload(`/files/${fid}/content`, { name: 'locked.txt' }, 'theirs'), 'POST', 403, 'access_denied_item_locked');
    expectBoxError(await http().put(`/files/${fid}`, { body: { name: 'renamed.txt' } }), 'PUT', 403, 'access_denied_item_locked');
    const dl = await http().get(`/files/${fid}/content`);
    expectBoxError(dl, 'GET', 403, ['access_denied_item_locked', 'forbidden', 'access_denied_insufficient_permissions']);
    expect(handle.srv.control.as('1').readFile(fid).toString()).toBe('mine');

    colleague.unlock(fid);
    expect((await http().get(`/files/${fid}/content`)).status).toBe(302);
    expect((await http().upload(`/files/${fid}/content`, { name: 'locked.txt' }, 'after')).status).toBe(200);
  });

  it('a lock without prevent_download still allows downloads but blocks new versions', async () => {
    const d = await folder();
    const f = await file(String(d.id), 'soft.txt', 'soft');
    const fid = String(f.id);
    const other = handle.srv.control.addUser({ name: 'Soft' });
    handle.srv.control.as(other.userId).lock(fid, { preventDownload: false });
    expect((await http().get(`/files/${fid}/content`)).status).toBe(302);
    expectBoxError(await http().upload(`/files/${fid}/content`, { name: 'soft.txt' }, 'v2'), 'POST', 403, 'access_denied_item_locked');
  });

  it('a lock with an expiry time ends by itself', async () => {
    const d = await folder();
    const f = await file(String(d.id), 'expiring.txt', 'e');
    const fid = String(f.id);
    const other = handle.srv.control.addUser({ name: 'Brief' });
    handle.srv.control.as(other.userId).lock(fid, { expiresAt: new Date(Date.now() + 1500).toISOString() });
    expect((await http().upload(`/files/${fid}/content`, { name: 'expiring.txt' }, 'blocked')).status).toBe(403);
    await waitFor(async () => (await http().upload(`/files/${fid}/content`, { name: 'expiring.txt' }, 'free')).status === 200, {
      timeoutMs: 8000,
      intervalMs: 250,
      what: 'the lock to expire',
    });
  });
});
