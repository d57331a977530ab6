/**
 * Places where box-server used to disagree with real Box (issue 12, points 1-8), each pinned over HTTP: a new
 * version without an attributes part, reading a trashed file or web link, changing the access of a
 * password-protected shared link, promote restoring the old name, restoring a deleted version, `role` only on
 * request, preflight size checks, and `fields` on file versions.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { arr, boxHttp, expectBoxError, obj, useBoxServer } from '../support/box-server.js';
import { loadOpenApi } from '../support/openapi.js';

const spec = loadOpenApi();
const handle = useBoxServer({});
const http = () => boxHttp(handle.srv);

let seq = 0;
const unique = (p: string): string => `${p}-${Date.now().toString(36)}-${seq++}`;

function sha1Hex(b: string): string {
  return createHash('sha1').update(b).digest('hex');
}

async function folder(): Promise<string> {
  const r = await http().post('/folders', { body: { name: unique('parity'), parent: { id: '0' } } });
  expect(r.status).toBe(201);
  return String(obj(r.json).id);
}

async function upload(parentId: string, name: string, content: string): Promise<Record<string, unknown>> {
  const r = await http().upload('/files/content', { name, parent: { id: parentId } }, content);
  expect(r.status).toBe(201);
  return obj(arr(obj(r.json).entries)[0]);
}

/** A multipart body with only the file part, as box-node-sdk 3.x sends for `uploadNewFileVersion(id, content)`. */
function fileOnly(content: string): FormData {
  const form = new FormData();
  form.append('file', new Blob([content]), 'ignored-part-name.bin');
  return form;
}

describe('1. new version without an attributes part', () => {
  it('is accepted and keeps the name; the bytes and sha1 change', async () => {
    const d = await folder();
    const f = await upload(d, 'keep-name.txt', 'v1');
    const fid = String(f.id);
    const r = await http().post(`${handle.srv.uploadUrl}/files/${fid}/content`, { rawBody: fileOnly('v2 without attributes') });
    expect(r.status, r.text).toBe(200);
    spec.expectValid({ method: 'POST', path: new URL(r.url).pathname, status: 200, body: r.json });
    const entry = obj(arr(obj(r.json).entries)[0]);
    expect(entry).toMatchObject({ id: fid, name: 'keep-name.txt', sha1: sha1Hex('v2 without attributes') });
    expect(entry.etag).not.toBe(f.etag);
    expect(handle.srv.control.as('1').readFile(fid).toString()).toBe('v2 without attributes');
    const versions = arr(obj((await http().get(`/files/${fid}/versions`)).json).entries).map(obj);
    expect(versions.map((v) => v.sha1)).toEqual([sha1Hex('v1')]);
  });

  it('still refuses an attributes part that comes after the file part, and stores nothing', async () => {
    const d = await folder();
    const f = await upload(d, 'late-attrs.txt', 'v1');
    const form = fileOnly('v2');
    form.append('attributes', JSON.stringify({ name: 'renamed.txt' }));
    const r = await http().post(`${handle.srv.uploadUrl}/files/${String(f.id)}/content`, { rawBody: form });
    expectBoxError(r, 'POST', 400, 'metadata_after_file_contents');
    expect(handle.srv.control.as('1').readFile(String(f.id)).toString()).toBe('v1');
  });

  it('a new file still needs its attributes part', async () => {
    const r = await http().post(`${handle.srv.uploadUrl}/files/content`, { rawBody: fileOnly('orphan') });
    expectBoxError(r, 'POST', 400, ['bad_request', 'metadata_after_file_contents']);
  });
});

describe('2. a trashed file or web link can be read', () => {
  it('GET answers 200 with item_status trashed for files and web links; a trashed folder stays 404', async () => {
    const d = await folder();
    const f = await upload(d, 'read-me-in-trash.txt', 'trash');
    const fid = String(f.id);
    expect((await http().delete(`/files/${fid}`)).status).toBe(204);
    const rf = await http().get(`/files/${fid}`);
    expect(rf.status, rf.text).toBe(200);
    spec.expectValid({ method: 'GET', path: new URL(rf.url).pathname, status: 200, body: rf.json });
    expect(obj(rf.json)).toMatchObject({ type: 'file', id: fid, name: 'read-me-in-trash.txt', item_status: 'trashed', sha1: sha1Hex('trash') });
    expect(obj(rf.json).trashed_at).toBeTypeOf('string');
    const withFields = obj((await http().get(`/files/${fid}?fields=item_status,name`)).json);
    expect(withFields).toMatchObject({ item_status: 'trashed', name: 'read-me-in-trash.txt' });

    const wl = obj((await http().post('/web_links', { body: { url: 'https://example.com/x', parent: { id: d }, name: unique('link') } })).json);
    const wid = String(wl.id);
    expect((await http().delete(`/web_links/${wid}`)).status).toBe(204);
    const rw = await http().get(`/web_links/${wid}`);
    expect(rw.status, rw.text).toBe(200);
    expect(obj(rw.json)).toMatchObject({ type: 'web_link', id: wid, item_status: 'trashed' });

    // A file trashed along with its folder reads the same way; the folder itself is 404, as on Box.
    const sub = obj((await http().post('/folders', { body: { name: 'sub', parent: { id: d } } })).json);
    const inner = await upload(String(sub.id), 'inner.txt', 'inner');
    expect((await http().get(`/files/${String(inner.id)}`, { headers: { 'If-None-Match': String(inner.etag) } })).status).toBe(304);
    expect((await http().delete(`/folders/${d}?recursive=true`)).status).toBe(204);
    expectBoxError(await http().get(`/folders/${d}`), 'GET', 404, ['trashed', 'not_found']);
    // Its etag did not change, but a client that cached it while active gets the trashed item, not a 304.
    const innerNow = await http().get(`/files/${String(inner.id)}`, { headers: { 'If-None-Match': String(inner.etag) } });
    expect(innerNow.status).toBe(200);
    expect(obj(innerNow.json)).toMatchObject({ etag: inner.etag, item_status: 'trashed' });

    // Reading is all: changes to a trashed file are still refused.
    expectBoxError(await http().put(`/files/${fid}`, { body: { name: 'nope.txt' } }), 'PUT', 404, 'trashed');
    // Purged: gone for good.
    expect((await http().delete(`/files/${fid}/trash`)).status).toBe(204);
    expectBoxError(await http().get(`/files/${fid}`), 'GET', 404, 'not_found');
  });
});

describe('3. shared link access change on a password-protected link', () => {
  it('succeeds without a password in the request, and drops the old password', async () => {
    const d = await folder();
    const f = await upload(d, 'shared.txt', 'shared');
    const fid = String(f.id);
    const withPw = await http().put(`/files/${fid}?fields=shared_link`, { body: { shared_link: { access: 'open', password: 'Secret-123' } } });
    expect(withPw.status, withPw.text).toBe(200);
    const link = obj(obj(withPw.json).shared_link);
    expect(link.is_password_enabled).toBe(true);

    const r = await http().put(`/files/${fid}?fields=shared_link`, { body: { shared_link: { access: 'collaborators' } } });
    expect(r.status, r.text).toBe(200);
    const changed = obj(obj(r.json).shared_link);
    expect(changed).toMatchObject({ url: link.url, access: 'collaborators', effective_access: 'collaborators', is_password_enabled: false });

    // Open again: the old password did not come back.
    const reopened = obj(obj((await http().put(`/files/${fid}?fields=shared_link`, { body: { shared_link: { access: 'open' } } })).json).shared_link);
    expect(reopened).toMatchObject({ access: 'open', is_password_enabled: false });
    const viaLink = await http().get('/shared_items', { headers: { BoxApi: `shared_link=${String(reopened.url)}` } });
    expect(viaLink.status, viaLink.text).toBe(200);
  });

  it('still refuses a request that itself sets a password on a link that is not open', async () => {
    const d = await folder();
    const f = await upload(d, 'shared-bad.txt', 'x');
    const r = await http().put(`/files/${String(f.id)}`, { body: { shared_link: { access: 'company', password: 'Secret-123' } } });
    expectBoxError(r, 'PUT', 400, 'bad_request');
    expect(obj((await http().get(`/files/${String(f.id)}?fields=shared_link`)).json).shared_link).toBeUndefined();
  });
});

describe('4. promoting an old version', () => {
  it('gives the file the old version name, sha1 and size', async () => {
    const d = await folder();
    const f = await upload(d, 'first-name.txt', 'one');
    const fid = String(f.id);
    const v2 = await http().upload(`/files/${fid}/content`, { name: 'second-name.txt' }, 'second, longer');
    expect(v2.status).toBe(200);
    const old = obj(arr(obj((await http().get(`/files/${fid}/versions`)).json).entries)[0]);
    expect(old).toMatchObject({ name: 'first-name.txt', sha1: sha1Hex('one'), size: 3 });
    const before = obj((await http().get(`/files/${fid}`)).json);
    expect(before.name).toBe('second-name.txt');

    const p = await http().post(`/files/${fid}/versions/current`, { body: { type: 'file_version', id: old.id } });
    expect(p.status, p.text).toBe(201);
    expect(obj(p.json)).toMatchObject({ type: 'file_version', name: 'first-name.txt', sha1: sha1Hex('one'), size: 3 });
    const after = obj((await http().get(`/files/${fid}`)).json);
    expect(after).toMatchObject({ name: 'first-name.txt', sha1: sha1Hex('one'), size: 3 });
    expect(after.etag).not.toBe(before.etag);
    const listed = (await http().get(`/folders/${d}/items`)).json;
    expect(arr(obj(listed).entries).map((e) => obj(e).name)).toEqual(['first-name.txt']);
  });

  it('answers 409 and changes nothing when the old name is now taken by a sibling', async () => {
    const d = await folder();
    const f = await upload(d, 'taken.txt', 'one');
    const fid = String(f.id);
    await http().upload(`/files/${fid}/content`, { name: 'moved-on.txt' }, 'two');
    await upload(d, 'TAKEN.txt', 'someone else');
    const old = obj(arr(obj((await http().get(`/files/${fid}/versions`)).json).entries)[0]);
    expectBoxError(await http().post(`/files/${fid}/versions/current`, { body: { type: 'file_version', id: old.id } }), 'POST', 409, 'item_name_in_use');
    expect(obj((await http().get(`/files/${fid}`)).json)).toMatchObject({ name: 'moved-on.txt', sha1: sha1Hex('two') });
  });
});

describe('5. restoring a deleted file version', () => {
  it('PUT {"trashed_at": null} brings it back with restored_at and restored_by', async () => {
    const d = await folder();
    const f = await upload(d, 'restore-version.txt', 'old bytes');
    const fid = String(f.id);
    await http().upload(`/files/${fid}/content`, {}, 'new bytes');
    const old = obj(arr(obj((await http().get(`/files/${fid}/versions`)).json).entries)[0]);
    const vid = String(old.id);
    expect((await http().delete(`/files/${fid}/versions/${vid}`)).status).toBe(204);
    const deleted = obj((await http().get(`/files/${fid}/versions/${vid}`)).json);
    expect(deleted.trashed_at).toBeTypeOf('string');
    expect(obj(deleted.trashed_by).id).toBe('1');
    expect((await http().get(`/files/${fid}/content?version=${vid}`)).status).toBe(404);

    const r = await http().put(`/files/${fid}/versions/${vid}`, { body: { trashed_at: null } });
    expect(r.status, r.text).toBe(200);
    spec.expectValid({ method: 'PUT', path: new URL(r.url).pathname, status: 200, body: r.json });
    const restored = obj(r.json);
    expect(restored).toMatchObject({ type: 'file_version', id: vid, sha1: sha1Hex('old bytes'), trashed_at: null });
    expect(restored.restored_at).toBeTypeOf('string');
    expect(obj(restored.restored_by)).toMatchObject({ type: 'user', id: '1' });
    const again = obj((await http().get(`/files/${fid}/versions/${vid}`)).json);
    expect(again).toMatchObject({ trashed_at: null, restored_at: restored.restored_at });
    // Downloadable again; the current version is unchanged.
    expect((await http().get(`/files/${fid}/content?version=${vid}`)).status).toBe(302);
    expect(obj((await http().get(`/files/${fid}`)).json).sha1).toBe(sha1Hex('new bytes'));
  });

  it('refuses a body other than {"trashed_at": null}, and 404 for an unknown version', async () => {
    const d = await folder();
    const f = await upload(d, 'restore-bad.txt', 'x');
    const fid = String(f.id);
    expectBoxError(await http().put(`/files/${fid}/versions/${String(obj(f.file_version).id)}`, { body: { name: 'x' } }), 'PUT', 400, 'bad_request');
    expectBoxError(await http().put(`/files/${fid}/versions/987654321`, { body: { trashed_at: null } }), 'PUT', 404, 'not_found');
  });
});

describe('6. GET /users/me', () => {
  it('leaves role out of the standard form and sends it only when fields asks', async () => {
    const me = obj((await http().get('/users/me')).json);
    expect(me).toMatchObject({ type: 'user', id: '1' });
    expect(me).not.toHaveProperty('role');
    const withRole = obj((await http().get('/users/me?fields=role,login')).json);
    expect(withRole).toEqual({ type: 'user', id: '1', role: 'user', login: 'user@example.com' });
    const other = obj((await http().get('/users/1')).json);
    expect(other).not.toHaveProperty('role');
  });
});

describe('7. preflight size', () => {
  it('answers 400 for a negative, fractional or non-numeric size; 200 for 0 and for no size', async () => {
    const d = await folder();
    for (const size of [-1, 1.5, '10', true]) {
      const r = await http().options('/files/content', { body: { name: unique('pre.txt'), size, parent: { id: d } } });
      expectBoxError(r, 'OPTIONS', 400, 'bad_request');
    }
    const f = await upload(d, 'pre-version.txt', 'x');
    // The new-version preflight (not in openapi.json, which has only the new-file one) checks the same way.
    const v = await http().options(`/files/${String(f.id)}/content`, { body: { size: -1 } });
    expect(v.status).toBe(400);
    expect(obj(v.json).code).toBe('bad_request');
    expect((await http().options('/files/content', { body: { name: unique('pre.txt'), size: 0, parent: { id: d } } })).status).toBe(200);
    expect((await http().options('/files/content', { body: { name: unique('pre.txt'), parent: { id: d } } })).status).toBe(200);
  });
});

describe('8. fields on file versions', () => {
  it('list, get and promote answer the base fields plus those asked for', async () => {
    const d = await folder();
    const f = await upload(d, 'fields.txt', 'one');
    const fid = String(f.id);
    await http().upload(`/files/${fid}/content`, {}, 'two');
    const list = obj((await http().get(`/files/${fid}/versions?fields=sha1,size`)).json);
    expect(list.total_count).toBe(1);
    const entry = obj(arr(list.entries)[0]);
    expect(entry).toEqual({ type: 'file_version', id: entry.id, sha1: sha1Hex('one'), size: 3 });
    const one = obj((await http().get(`/files/${fid}/versions/${String(entry.id)}?fields=name,no_such_field`)).json);
    expect(one).toEqual({ type: 'file_version', id: entry.id, name: 'fields.txt' });
    const promoted = obj((await http().post(`/files/${fid}/versions/current?fields=sha1`, { body: { type: 'file_version', id: entry.id } })).json);
    expect(promoted).toEqual({ type: 'file_version', id: promoted.id, sha1: sha1Hex('one') });
    // Without fields: the full form.
    const full = obj(arr(obj((await http().get(`/files/${fid}/versions`)).json).entries)[0]);
    for (const k of ['sha1', 'name', 'size', 'created_at', 'modified_at', 'modified_by', 'trashed_at', 'restored_at', 'purged_at', 'version_number']) {
      expect(full).toHaveProperty(k);
    }
  });
});
