/**
 * box-server tree semantics: name rules and case-insensitive uniqueness, etags and sequence ids, moves that
 * If-Match does not stop, deep copies, trash and restore of whole subtrees, purge, and locks that end by
 * themselves.
 */
import { describe, expect, it } from 'vitest';
import { arr, boxHttp, obj, useBoxServer } from '../support/box-server.js';
import { waitFor } from '../support/wait.js';

const h = useBoxServer({});

describe('names', () => {
  it('refuses names Box refuses, with item_name_invalid or item_name_too_long, and creates nothing', async () => {
    const api = boxHttp(h.srv);
    for (const name of ['', '.', '..', 'a/b', 'a\\b', 'trailing ', 'ctl\u0001x', 'del\u007f']) {
      const r = await api.post('/folders', { body: { name, parent: { id: '0' } } });
      expect(r.status, JSON.stringify(name)).toBe(400);
      expect(obj(r.json).code).toBe('item_name_invalid');
    }
    const long = await api.post('/folders', { body: { name: 'x'.repeat(256), parent: { id: '0' } } });
    expect(obj(long.json).code).toBe('item_name_too_long');
    expect((await api.post('/folders', { body: { name: 'x'.repeat(255), parent: { id: '0' } } })).status).toBe(201);
    expect((await api.post('/folders', { body: { name: ' leading and ünïcødé ✓', parent: { id: '0' } } })).status).toBe(201);
  });

  it('keeps names unique per folder case-insensitively across files and folders', async () => {
    const api = boxHttp(h.srv);
    const folder = obj((await api.post('/folders', { body: { name: 'Report', parent: { id: '0' } } })).json);
    const fileClash = await api.upload('/files/content', { name: 'report', parent: { id: '0' } }, 'x');
    expect(fileClash.status).toBe(409);
    expect(obj(fileClash.json).code).toBe('item_name_in_use');
    expect(obj(obj(obj(fileClash.json).context_info).conflicts)).toMatchObject({ type: 'folder', id: folder.id });
    const folderClash = await api.post('/folders', { body: { name: 'REPORT', parent: { id: '0' } } });
    expect(arr(obj(obj(folderClash.json).context_info).conflicts)[0]).toMatchObject({ id: folder.id });
    // The same name in another folder is fine.
    expect((await api.post('/folders', { body: { name: 'report', parent: { id: String(folder.id) } } })).status).toBe(201);
  });
});

describe('etags, moves and copies', () => {
  it('changes etag and sequence_id with every change; If-Match guards renames but not moves', async () => {
    const api = boxHttp(h.srv);
    const a = obj((await api.post('/folders', { body: { name: 'etag-a', parent: { id: '0' } } })).json);
    const b = obj((await api.post('/folders', { body: { name: 'etag-b', parent: { id: '0' } } })).json);
    const up = obj(arr(obj((await api.upload('/files/content', { name: 'e.txt', parent: { id: a.id } }, 'v1')).json).entries)[0]);
    const staleEtag = String(up.etag);
    const renamed = obj((await api.put(`/files/${String(up.id)}`, { body: { name: 'e2.txt' }, headers: { 'If-Match': staleEtag } })).json);
    expect(renamed.etag).not.toBe(staleEtag);
    expect(Number(renamed.sequence_id)).toBeGreaterThan(Number(up.sequence_id));
    const refused = await api.put(`/files/${String(up.id)}`, { body: { name: 'e3.txt' }, headers: { 'If-Match': `"${staleEtag}"` } });
    expect(refused.status).toBe(412);
    expect(obj(refused.json).code).toBe('precondition_failed');
    const moved = await api.put(`/files/${String(up.id)}`, { body: { parent: { id: b.id } }, headers: { 'If-Match': staleEtag } });
    expect(moved.status).toBe(200);
    expect(obj(obj(moved.json).parent).id).toBe(b.id);
    const cycle = await api.put(`/folders/${String(a.id)}`, { body: { parent: { id: a.id } } });
    expect(obj(cycle.json).code).toBe('cyclical_folder_structure');
  });

  it('copies a folder with its whole subtree', async () => {
    const web = h.srv.control.as('1');
    const src = web.createFolder('0', 'copy-src');
    const sub = web.createFolder(src.id, 'sub');
    const f = web.uploadFile(sub.id, 'in.txt', 'copied bytes');
    const r = await boxHttp(h.srv).post(`/folders/${src.id}/copy`, { body: { parent: { id: '0' }, name: 'copy-dst' } });
    expect(r.status).toBe(201);
    const copied = web.findByPath('/copy-dst/sub/in.txt');
    expect(copied?.type).toBe('file');
    expect(copied!.id).not.toBe(f.id);
    expect(web.readFile(copied!.id).toString()).toBe('copied bytes');
  });
});

describe('trash', () => {
  it('needs recursive for a non-empty folder, then trashes and restores the whole subtree', async () => {
    const api = boxHttp(h.srv);
    const web = h.srv.control.as('1');
    const top = web.createFolder('0', 'trash-top');
    const child = web.createFolder(top.id, 'child');
    const file = web.uploadFile(child.id, 'leaf.txt', 'leaf');
    const refused = await api.delete(`/folders/${top.id}`);
    expect(refused.status).toBe(400);
    expect(obj(refused.json).code).toBe('folder_not_empty');
    expect((await api.delete(`/folders/${top.id}?recursive=true`)).status).toBe(204);
    const trash = arr(obj((await api.get('/folders/trash/items?limit=1000')).json).entries).map((e) => obj(e).id);
    expect(trash).toContain(top.id);
    expect(trash).not.toContain(file.id);
    // Box reads a file trashed with its folder (200, item_status trashed), but it is not in the trash by itself.
    const inTrashedFolder = await api.get(`/files/${file.id}`);
    expect(inTrashedFolder.status).toBe(200);
    expect(obj(inTrashedFolder.json).item_status).toBe('trashed');
    expect((await api.get(`/files/${file.id}/trash`)).status).toBe(404);
    expect(obj((await api.get(`/folders/${top.id}/trash`)).json).item_status).toBe('trashed');
    const restored = await api.post(`/folders/${top.id}`, { body: {} });
    expect(restored.status).toBe(201);
    expect(web.findByPath('/trash-top/child/leaf.txt')).toEqual({ type: 'file', id: file.id });
  });

  it('restores into a given parent and name when the old parent is gone, and purges for good', async () => {
    const api = boxHttp(h.srv);
    const web = h.srv.control.as('1');
    const home = web.createFolder('0', 'old-home');
    const file = web.uploadFile(home.id, 'orphan.txt', 'orphan');
    web.trash('file', file.id);
    web.trash('folder', home.id);
    web.purge('folder', home.id);
    const nowhere = await api.post(`/files/${file.id}`, { body: {} });
    expect(nowhere.status).toBe(404);
    const placed = await api.post(`/files/${file.id}`, { body: { name: 'adopted.txt', parent: { id: '0' } } });
    expect(placed.status).toBe(201);
    expect(web.findByPath('/adopted.txt')).toEqual({ type: 'file', id: file.id });
    web.trash('file', file.id);
    expect((await api.delete(`/files/${file.id}/trash`)).status).toBe(204);
    expect((await api.get(`/files/${file.id}/trash`)).status).toBe(404);
    expect(web.getItem('file', file.id)).toBeNull();
  });
});

describe('locks', () => {
  it('blocks other users while held, lets the owner work, and ends by itself at its expiry', async () => {
    const web = h.srv.control.as('1');
    const file = web.uploadFile('0', 'locked.txt', 'mine');
    const other = h.srv.control.addUser({ name: 'Other' });
    const api = boxHttp(h.srv, other.token);
    const expiresAt = new Date(Date.now() + 1500).toISOString();
    const lock = await boxHttp(h.srv).put(`/files/${file.id}?fields=lock`, { body: { lock: { type: 'lock', expires_at: expiresAt, is_download_prevented: true } } });
    expect(lock.status).toBe(200);
    expect(obj(obj(lock.json).lock).is_download_prevented).toBe(true);
    expect(obj((await api.get(`/files/${file.id}/content`)).json).code).toBe('access_denied_item_locked');
    expect((await api.put(`/files/${file.id}`, { body: { name: 'stolen.txt' } })).status).toBe(403);
    expect((await boxHttp(h.srv).get(`/files/${file.id}/content`)).status).toBe(302);
    await waitFor(async () => (await api.get(`/files/${file.id}/content`)).status === 302, { timeoutMs: 5000, what: 'the lock to expire' });
    expect(obj((await api.get(`/files/${file.id}?fields=lock`)).json).lock).toBeNull();
    expect((await api.put(`/files/${file.id}`, { body: { name: 'free.txt' } })).status).toBe(200);
  });
});

describe('shared links', () => {
  it('resolves a link with GET /shared_items, checks its password, and refuses links that ended', async () => {
    const owner = boxHttp(h.srv);
    const folder = h.srv.control.as('1').createFolder('0', 'shared-out');
    const linked = obj((await owner.put(`/folders/${folder.id}?fields=shared_link`, { body: { shared_link: { access: 'open', password: 'secret-pass-1' } } })).json);
    const url = String(obj(linked.shared_link).url);
    const guest = boxHttp(h.srv, h.srv.control.addUser({ name: 'Guest' }).token);
    const withPassword = await guest.get('/shared_items', { headers: { BoxApi: `shared_link=${url}&shared_link_password=secret-pass-1` } });
    expect(withPassword.status).toBe(200);
    expect(obj(withPassword.json)).toMatchObject({ type: 'folder', id: folder.id });
    expect((await guest.get('/shared_items', { headers: { BoxApi: `shared_link=${url}` } })).status).toBe(403);
    expect((await guest.get(`/folders/${folder.id}/items`, { headers: { BoxApi: `shared_link=${url}&shared_link_password=secret-pass-1` } })).status).toBe(200);
    await owner.put(`/folders/${folder.id}`, { body: { shared_link: null } });
    expect((await guest.get('/shared_items', { headers: { BoxApi: `shared_link=${url}&shared_link_password=secret-pass-1` } })).status).toBe(404);
  });
});

describe('isolated users', () => {
  it('hide their items from others, except through a shared link to the item or an ancestor', async () => {
    const alice = h.srv.control.addUser({ name: 'Alice', isolated: true });
    const asAlice = boxHttp(h.srv, alice.token);
    const web = h.srv.control.as(alice.userId);
    const start = String(obj((await boxHttp(h.srv).get('/events?stream_position=now')).json).next_stream_position);
    const folder = web.createFolder('0', 'alice-private');
    const file = web.uploadFile(folder.id, 'secret.txt', 'for alice');
    expect((await asAlice.get(`/folders/${folder.id}/items`)).status).toBe(200);
    const me = boxHttp(h.srv);
    expect((await me.get(`/folders/${folder.id}`)).status).toBe(404);
    expect((await me.get(`/files/${file.id}/content`)).status).toBe(404);
    expect((await me.put(`/files/${file.id}`, { body: { name: 'x.txt' } })).status).toBe(404);
    expect((await me.post('/folders', { body: { name: 'intruder', parent: { id: folder.id } } })).status).toBe(404);
    expect((await me.upload('/files/content', { name: 'intruder.txt', parent: { id: folder.id } }, 'x')).status).toBe(404);
    const rootNames = arr(obj((await me.get('/folders/0/items?limit=1000')).json).entries).map((e) => obj(e).name);
    expect(rootNames).not.toContain('alice-private');
    expect(arr(obj((await me.get(`/events?stream_position=${start}`)).json).entries)).toEqual([]);
    const link = obj(obj((await asAlice.put(`/folders/${folder.id}?fields=shared_link`, { body: { shared_link: { access: 'open' } } })).json).shared_link);
    const header = { BoxApi: `shared_link=${String(link.url)}` };
    expect((await me.get(`/folders/${folder.id}/items`, { headers: header })).status).toBe(200);
    const dl = await me.get(`/files/${file.id}/content`, { headers: header });
    expect(dl.status).toBe(302);
    expect(await (await fetch(dl.headers['location']!)).text()).toBe('for alice');
  });
});
