// Hostile and malformed input: broken JSON, wrong content types, oversized bodies, malformed and unknown
// ids, unknown endpoints, injected faults. Every answer is a Box error body and the server keeps serving.
import { afterEach, describe, expect, it } from 'vitest';
import { arr, boxHttp, expectBoxError, obj, useBoxServer } from '../support/box-server.js';

const handle = useBoxServer();
const http = () => boxHttp(handle.srv);

afterEach(async () => {
  handle.srv.control.clearFaults();
  const alive = await http().get('/users/me');
  expect(alive.status, 'box-server must keep serving after an error').toBe(200);
});

async function rootNames(): Promise<string[]> {
  const r = await http().get('/folders/0/items?limit=1000');
  return arr(obj(r.json).entries).map((e) => String(obj(e).name));
}

describe('malformed requests', () => {
  it('400 for malformed JSON bodies, and nothing is created', async () => {
    const bad = await http().post('/folders', { rawBody: '{"name": "half", "parent": {"id": "0"', headers: { 'Content-Type': 'application/json' } });
    expectBoxError(bad, 'POST', 400, ['bad_request', 'invalid_request_parameters']);
    const notObject = await http().post('/folders', { rawBody: '["name"]', headers: { 'Content-Type': 'application/json' } });
    expectBoxError(notObject, 'POST', 400, ['bad_request', 'invalid_request_parameters']);
    const put = await http().put('/folders/0', { rawBody: 'nope', headers: { 'Content-Type': 'application/json' } });
    expectBoxError(put, 'PUT', 400, ['bad_request', 'invalid_request_parameters']);
    expect(await rootNames()).not.toContain('half');
  });

  it('400 for missing or mistyped required fields', async () => {
    expectBoxError(await http().post('/folders', { body: { parent: { id: '0' } } }), 'POST', 400, ['bad_request', 'item_name_invalid', 'invalid_request_parameters']);
    expectBoxError(await http().post('/folders', { body: { name: 'noparent' } }), 'POST', 400, ['bad_request', 'invalid_request_parameters']);
    expectBoxError(await http().post('/folders', { body: { name: 42, parent: { id: '0' } } }), 'POST', 400, ['bad_request', 'item_name_invalid', 'invalid_request_parameters']);
    expect(await rootNames()).not.toContain('noparent');
  });

  it('wrong content types: a Box error (400 or 415) for JSON endpoints and for uploads', async () => {
    const asText = await http().post('/folders', { rawBody: JSON.stringify({ name: 'as-text', parent: { id: '0' } }), headers: { 'Content-Type': 'text/plain' } });
    expectBoxError(asText, 'POST', asText.status === 415 ? 415 : 400, ['bad_request', 'unsupported_media_type', 'invalid_request_parameters']);
    const jsonUpload = await http().post(`${handle.srv.uploadUrl}/files/content`, { body: { name: 'j.txt', parent: { id: '0' } } });
    expectBoxError(jsonUpload, 'POST', jsonUpload.status === 415 ? 415 : 400, ['bad_request', 'unsupported_media_type', 'invalid_request_parameters']);
    const form = await http().post('/folders', { rawBody: new URLSearchParams({ name: 'form', parent: '0' }) });
    expectBoxError(form, 'POST', form.status === 415 ? 415 : 400, ['bad_request', 'unsupported_media_type', 'invalid_request_parameters']);
    expect(await rootNames()).not.toContain('as-text');
  });

  it('413 for an oversized JSON body; the next request is served', async () => {
    const huge = JSON.stringify({ name: 'huge', parent: { id: '0' }, description: 'x'.repeat(4 * 1024 * 1024) });
    const r = await http().post('/folders', { rawBody: huge, headers: { 'Content-Type': 'application/json' } });
    expectBoxError(r, 'POST', 413, ['request_entity_too_large', 'bad_request']);
    expect(await rootNames()).not.toContain('huge');
  });
});

describe('paging parameters', () => {
  it('400 invalid_parameter for marker paging mixed with sort on the trash, offset over 10000, and a forged marker', async () => {
    expectBoxError(await http().get('/folders/trash/items?usemarker=true&sort=name'), 'GET', 400, 'invalid_parameter');
    expectBoxError(await http().get('/folders/trash/items?offset=10001'), 'GET', 400, 'invalid_parameter');
    expectBoxError(await http().get('/folders/0/items?usemarker=true&marker=not-a-marker'), 'GET', 400, 'invalid_parameter');
    expectBoxError(await http().get('/folders/0/items?sort=colour'), 'GET', 400, 'invalid_parameter');
    expectBoxError(await http().get('/folders/0/items?usemarker=true&sort=name'), 'GET', 400, 'invalid_parameter');
  });

  it('an expired upload session answers 410 session_expired', async () => {
    const r = await http().post(`${handle.srv.uploadUrl}/files/upload_sessions`, { body: { folder_id: '0', file_size: 20_000_000, file_name: `exp-${process.pid}.bin` } });
    expect(r.status, r.text).toBe(201);
    const ends = obj(obj(r.json).session_endpoints);
    handle.srv.control.expireUploadSessions();
    const part = Buffer.alloc(1024);
    const put = await http().put(String(ends.upload_part), {
      rawBody: part,
      headers: { 'Content-Type': 'application/octet-stream', 'Content-Range': 'bytes 0-1023/20000000', Digest: 'sha=AAAA' },
    });
    expectBoxError(put, 'PUT', 410, 'session_expired');
  });
});

describe('ids and endpoints', () => {
  it('malformed ids get 404 or 405 (as on Box), unknown numeric ids 404 not_found', async () => {
    for (const path of ['/files/abc', '/folders/abc', '/files/..%2F..%2Fetc', '/folders/-1/items']) {
      const r = await http().get(path);
      expectBoxError(r, 'GET', r.status === 405 ? 405 : 404, ['not_found', 'method_not_allowed']);
    }
    expectBoxError(await http().get('/files/12345678901234567890'), 'GET', 404, 'not_found');
    expectBoxError(await http().post('/files/12345678901234567890/copy', { body: { parent: { id: '0' } } }), 'POST', 404, 'not_found');
    expectBoxError(await http().get('/files/1234567/versions/7654321'), 'GET', 404, 'not_found');
  });

  it('unknown endpoints and methods answer with a Box error body', async () => {
    const r = await http().get('/no_such_endpoint');
    expect([404, 405]).toContain(r.status);
    const body = obj(r.json);
    expect(body.type).toBe('error');
    expect(body.status).toBe(r.status);
    const m = await http().request('PATCH', '/files/1');
    expect([404, 405]).toContain(m.status);
    expect(obj(m.json).type).toBe('error');
  });

  it('a hostile name is stored as data, never as a path', async () => {
    const name = '<img src=x onerror=alert(1)> %2e%2e ; DROP TABLE items; \'"';
    const r = await http().post('/folders', { body: { name, parent: { id: '0' } } });
    expect(r.status, r.text).toBe(201);
    const back = obj((await http().get(`/folders/${String(obj(r.json).id)}`)).json);
    expect(back.name).toBe(name);
  });
});

describe('injected faults', () => {
  it('5xx with the chosen code, for the chosen count, then normal service', async () => {
    handle.srv.control.failNext({ method: 'GET', path: '/2.0/folders/0', count: 2, status: 503, code: 'unavailable', retryAfterSec: 3 });
    const a = await http().get('/folders/0');
    expectBoxError(a, 'GET', 503, 'unavailable');
    expect(a.headers['retry-after']).toBe('3');
    expectBoxError(await http().get('/folders/0'), 'GET', 503, 'unavailable');
    expect((await http().get('/folders/0')).status).toBe(200);
  });

  it('a reset before the response is a network error to the client, then normal service', async () => {
    handle.srv.control.failNext({ path: '/2.0/users/me', reset: 'before-response' });
    await expect(http().get('/users/me')).rejects.toThrow();
    expect((await http().get('/users/me')).status).toBe(200);
  });

  it('a reset mid-body cuts a download short', async () => {
    const content = Buffer.alloc(256 * 1024, 9);
    const up = await http().upload('/files/content', { name: `cut-${process.pid}.bin`, parent: { id: '0' } }, content);
    const fid = String(obj(arr(obj(up.json).entries)[0]).id);
    const loc = (await http().get(`/files/${fid}/content`)).headers.location;
    expect(loc).toBeDefined();
    handle.srv.control.failNext({ path: new URL(String(loc)).pathname, reset: 'mid-body' });
    const cut = fetch(String(loc)).then(async (res) => Buffer.from(await res.arrayBuffer()));
    await expect(cut).rejects.toThrow();
    const whole = Buffer.from(await (await fetch(String(loc))).arrayBuffer());
    expect(whole.equals(content)).toBe(true);
  });
});
