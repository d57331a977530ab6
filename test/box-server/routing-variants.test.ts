// Routing as forgiving as Box's: unmodified clients send a trailing slash (rclone preflights uploads with
// `OPTIONS /2.0/files/content/`), query parameters in any order or repeated, `fields` with spaces, JSON bodies with a
// charset or no Content-Type at all, HEAD where GET is served, and percent-encoded ids. Each variant answers as the
// plain form does, and changes what the plain form changes.
import { beforeAll, describe, expect, it } from 'vitest';
import { arr, boxHttp, expectBoxError, obj, useBoxServer } from '../support/box-server.js';

const handle = useBoxServer();
const http = () => boxHttp(handle.srv);

let fileId = '';
let folderId = '';

beforeAll(async () => {
  const f = await http().post('/folders', { body: { name: 'routing', parent: { id: '0' } } });
  expect(f.status, f.text).toBe(201);
  folderId = String(obj(f.json).id);
  const up = await http().upload('/files/content', { name: 'r.txt', parent: { id: folderId } }, 'routing bytes');
  expect(up.status, up.text).toBe(201);
  fileId = String(obj(arr(obj(up.json).entries)[0]).id);
});

async function names(id: string): Promise<string[]> {
  const r = await http().get(`/folders/${id}/items?limit=1000`);
  expect(r.status, r.text).toBe(200);
  return arr(obj(r.json).entries).map((e) => String(obj(e).name));
}

describe('a trailing slash', () => {
  it('is accepted on API and upload routes, and does what the plain route does', async () => {
    const me = await http().get('/users/me/');
    expect(me.status, me.text).toBe(200);
    expect(obj(me.json).type).toBe('user');
    const file = await http().get(`/files/${fileId}/`);
    expect(file.status, file.text).toBe(200);
    expect(obj(file.json).name).toBe('r.txt');
    const listing = await http().get(`/folders/${folderId}/items/`);
    expect(listing.status).toBe(200);
    expect(arr(obj(listing.json).entries).map((e) => obj(e).name)).toEqual(['r.txt']);

    // rclone's upload preflight, on both hosts' prefixes.
    for (const base of [handle.srv.apiUrl, handle.srv.uploadUrl]) {
      const pre = await http().options(`${base}/files/content/`, { body: { name: 'slash.txt', parent: { id: folderId }, size: 3 } });
      expect(pre.status, pre.text).toBe(200);
      expect(String(obj(pre.json).upload_url)).toBe(`${handle.srv.uploadUrl}/files/content`);
      const conflict = await http().options(`${base}/files/content/`, { body: { name: 'r.txt', parent: { id: folderId }, size: 3 } });
      expect(conflict.status, conflict.text).toBe(409);
      expect(obj(conflict.json).code).toBe('item_name_in_use');
    }
    const preVersion = await http().options(`/files/${fileId}/content/`, { body: { size: 3 } });
    expect(preVersion.status, preVersion.text).toBe(200);

    const up = await http().upload('/files/content/', { name: 'slash.txt', parent: { id: folderId } }, 'abc');
    expect(up.status, up.text).toBe(201);
    const renamed = await http().put(`/files/${String(obj(arr(obj(up.json).entries)[0]).id)}/`, { body: { name: 'slash-renamed.txt' } });
    expect(renamed.status, renamed.text).toBe(200);
    expect((await names(folderId)).sort()).toEqual(['r.txt', 'slash-renamed.txt']);

    const made = await http().post('/folders/', { body: { name: 'made-with-slash', parent: { id: folderId } } });
    expect(made.status, made.text).toBe(201);
    const gone = await http().delete(`/folders/${String(obj(made.json).id)}/`);
    expect(gone.status).toBe(204);
    expect(await names(folderId)).not.toContain('made-with-slash');
  });

  it('is accepted on the token endpoint, with a charset on its form body', async () => {
    handle.srv.control.registerOAuthClient({ clientId: 'slash-client', clientSecret: 'slash-secret' });
    const body = new URLSearchParams({ grant_type: 'authorization_code', code: handle.srv.control.issueAuthCode('slash-client'), client_id: 'slash-client', client_secret: 'slash-secret' });
    const r = await fetch(`${handle.srv.tokenUrl}/`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded;charset=UTF-8' }, body: body.toString() });
    expect(r.status).toBe(200);
    const pair = obj(await r.json());
    expect((await boxHttp(handle.srv, String(pair.access_token)).get('/users/me/')).status).toBe(200);
  });

  it('does not make an unknown endpoint known, and one slash only is dropped', async () => {
    const unknown = await http().get('/no-such-thing/');
    expect(unknown.status).toBe(404);
    expect(obj(unknown.json).code).toBe('not_found');
    const double = await http().get(`/files/${fileId}//`);
    expect([404, 405]).toContain(double.status);
  });
});

describe('query parameters', () => {
  it('answer the same in any order, and the first of a repeated parameter counts', async () => {
    const a = await http().get(`/folders/${folderId}/items?limit=1&offset=0&fields=name,size`);
    const b = await http().get(`/folders/${folderId}/items?fields=name,size&offset=0&limit=1`);
    expect(a.status, a.text).toBe(200);
    expect(b.json).toEqual(a.json);
    expect(obj(a.json).limit).toBe(1);
    const repeated = await http().get(`/folders/${folderId}/items?limit=1&limit=1000`);
    expect(repeated.status, repeated.text).toBe(200);
    expect(obj(repeated.json).limit).toBe(1);
    expect(arr(obj(repeated.json).entries)).toHaveLength(1);
  });

  it('`fields` with spaces around names, and repeated `fields`, ask for every name listed', async () => {
    for (const q of ['fields=name,%20size,%20sha1', 'fields=name+,+size+,sha1', 'fields=name&fields=size,sha1']) {
      const r = await http().get(`/files/${fileId}?${q}`);
      expect(r.status, r.text).toBe(200);
      const body = obj(r.json);
      expect(body.name, q).toBe('r.txt');
      expect(body.size, q).toBe('routing bytes'.length);
      expect(typeof body.sha1, q).toBe('string');
      expect(body.created_at, `${q}: only the fields asked for`).toBeUndefined();
    }
  });
});

describe('Content-Type variants', () => {
  it('JSON with a charset, in another case, or with no Content-Type at all is parsed', async () => {
    const variants: Array<[string, Record<string, string>]> = [
      ['ct-charset', { 'Content-Type': 'application/json; charset=utf-8' }],
      ['ct-charset-upper', { 'Content-Type': 'Application/JSON;charset=UTF-8' }],
    ];
    for (const [name, headers] of variants) {
      const r = await http().post('/folders', { rawBody: JSON.stringify({ name, parent: { id: folderId } }), headers });
      expect(r.status, `${name}: ${r.text}`).toBe(201);
    }
    // A body sent with no Content-Type header (fetch adds text/plain to a string body, so a stream goes without one).
    const bytes = new TextEncoder().encode(JSON.stringify({ name: 'ct-none', parent: { id: folderId } }));
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(bytes);
        c.close();
      },
    });
    const none = await http().post('/folders', { rawBody: stream });
    expect(none.status, none.text).toBe(201);
    const listed = await names(folderId);
    for (const n of ['ct-charset', 'ct-charset-upper', 'ct-none']) expect(listed).toContain(n);
  });

  it('a multipart upload with a quoted boundary and a charset is stored', async () => {
    const boundary = 'quoted-b0undary';
    const body = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="attributes"\r\n\r\n${JSON.stringify({ name: 'mp.txt', parent: { id: folderId } })}\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="mp.txt"\r\nContent-Type: application/octet-stream\r\n\r\nmultipart\r\n--${boundary}--\r\n`,
    );
    const r = await http().post(`${handle.srv.uploadUrl}/files/content`, {
      rawBody: body,
      headers: { 'Content-Type': `Multipart/Form-Data; charset=utf-8; boundary="${boundary}"` },
    });
    expect(r.status, r.text).toBe(201);
    expect(obj(arr(obj(r.json).entries)[0]).size).toBe('multipart'.length);
  });
});

describe('HEAD', () => {
  it('answers as GET would, without a body, on items, listings, users/me and downloads (no download event)', async () => {
    const get = await http().get(`/files/${fileId}`);
    const head = await http().request('HEAD', `/files/${fileId}`);
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(head.headers.etag).toBe(get.headers.etag);
    expect((await http().request('HEAD', `/folders/${folderId}/items`)).status).toBe(200);
    expect((await http().request('HEAD', '/users/me')).status).toBe(200);
    expect((await http().request('HEAD', '/files/999999999')).status).toBe(404);

    const before = await http().get('/events?stream_position=0&limit=500');
    const downloads = (r: typeof before): number => arr(obj(r.json).entries).filter((e) => obj(e).event_type === 'ITEM_DOWNLOAD').length;
    const dl = await http().request('HEAD', `/files/${fileId}/content`);
    expect(dl.status).toBe(302);
    const location = dl.headers.location!;
    const blob = await http().request('HEAD', location);
    expect(blob.status).toBe(200);
    expect(blob.headers['content-length']).toBe(String('routing bytes'.length));
    const after = await http().get('/events?stream_position=0&limit=500');
    expect(downloads(after)).toBe(downloads(before));
  });

  it('is still refused where GET is not served', async () => {
    const r = await http().request('HEAD', '/folders');
    expect(r.status).toBe(405);
  });
});

describe('percent-encoded ids', () => {
  it('address the same item, for reads and changes', async () => {
    const enc = [...fileId].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('');
    const r = await http().get(`/files/${enc}?fields=name`);
    expect(r.status, r.text).toBe(200);
    expect(obj(r.json).id).toBe(fileId);
    const put = await http().put(`/files/${enc}`, { body: { description: 'via %xx' } });
    expect(put.status, put.text).toBe(200);
    const back = await http().get(`/files/${fileId}?fields=description`);
    expect(obj(back.json).description).toBe('via %xx');
    const folderEnc = [...folderId].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('');
    const items = await http().get(`/folders/${folderEnc}/items`);
    expect(items.status).toBe(200);
    expect(arr(obj(items.json).entries).length).toBeGreaterThan(0);
  });

  it('a malformed escape is 404 not_found, not a server error', async () => {
    expectBoxError(await http().get('/files/%zz'), 'GET', 404, 'not_found');
    expectBoxError(await http().get('/files/%E0%A4%A'), 'GET', 404, 'not_found');
  });
});
