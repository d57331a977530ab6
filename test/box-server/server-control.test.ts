/**
 * box-server's test-control surface, programmatic and over HTTP: injected faults (status, count, delay,
 * resets), 202 commits, token expiry and revocation, rate limits, event chaos, other users acting on the web,
 * and the request log.
 */
import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import { arr, boxHttp, DEFAULT_TOKEN, obj, useBoxServer } from '../support/box-server.js';

const h = useBoxServer({ longPollTimeoutMs: 500 });

async function control(verb: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${h.srv.baseUrl}/_control/${verb}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, json: obj(await res.json()) };
}

describe('fault injection', () => {
  it('fails the next N matching requests with the chosen status, code and Retry-After, then serves normally', async () => {
    const api = boxHttp(h.srv);
    h.srv.control.failNext({ method: 'GET', path: '/2.0/users/me', count: 2, status: 503, code: 'unavailable', retryAfterSec: 7 });
    const first = await api.get('/users/me');
    const second = await api.get('/users/me');
    const third = await api.get('/users/me');
    expect([first.status, second.status, third.status]).toEqual([503, 503, 200]);
    expect(obj(first.json)).toMatchObject({ type: 'error', status: 503, code: 'unavailable' });
    expect(first.headers['retry-after']).toBe('7');
  });

  it('matches prefixes ending in * and regular expressions, and only the given method', async () => {
    const api = boxHttp(h.srv);
    h.srv.control.failNext({ method: 'POST', path: '/2.0/folders*', status: 500 });
    expect((await api.get('/folders/0')).status).toBe(200);
    expect((await api.post('/folders', { body: { name: 'prefix-hit', parent: { id: '0' } } })).status).toBe(500);
    h.srv.control.failNext({ path: /^\/2\.0\/folders\/\d+\/items$/, status: 502, code: 'bad_gateway' });
    const r = await api.get('/folders/0/items');
    expect(r.status).toBe(502);
    expect(obj(r.json).code).toBe('bad_gateway');
  });

  it('delays a request without failing it', async () => {
    const api = boxHttp(h.srv);
    h.srv.control.failNext({ path: '/2.0/users/me', delayMs: 300 });
    const t0 = Date.now();
    const r = await api.get('/users/me');
    expect(r.status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
  });

  it('resets the connection before the response, then serves the next request', async () => {
    const api = boxHttp(h.srv);
    h.srv.control.failNext({ path: '/2.0/users/me', reset: 'before-response' });
    await expect(api.get('/users/me')).rejects.toThrow();
    expect((await api.get('/users/me')).status).toBe(200);
  });

  it('resets an upload after half its body, and nothing is created', async () => {
    const api = boxHttp(h.srv);
    h.srv.control.failNext({ method: 'POST', path: '/api/2.0/files/content', reset: 'mid-body' });
    await expect(api.upload('/files/content', { name: 'cut.bin', parent: { id: '0' } }, Buffer.alloc(256 * 1024, 1))).rejects.toThrow();
    expect(h.srv.control.as('1').findByPath('/cut.bin')).toBeNull();
    const ok = await api.upload('/files/content', { name: 'cut.bin', parent: { id: '0' } }, 'whole');
    expect(ok.status).toBe(201);
  });

  it('clearFaults drops pending rules', async () => {
    h.srv.control.failNext({ path: '/2.0/users/me', status: 500, count: 5 });
    h.srv.control.clearFaults();
    expect((await boxHttp(h.srv).get('/users/me')).status).toBe(200);
  });
});

describe('commits, tokens and rate limits', () => {
  it('commitAccepted makes the next commits answer 202 with Retry-After, then 201', async () => {
    const api = boxHttp(h.srv);
    const size = 20_000_000;
    const data = Buffer.alloc(size, 3);
    const session = obj((await api.post(`${h.srv.uploadUrl}/files/upload_sessions`, { body: { folder_id: '0', file_size: size, file_name: 'accepted.bin' } })).json);
    const endpoints = obj(session.session_endpoints);
    const partSize = Number(session.part_size);
    const parts: unknown[] = [];
    for (let off = 0; off < size; off += partSize) {
      const chunk = data.subarray(off, Math.min(off + partSize, size));
      const r = await api.put(String(endpoints.upload_part), {
        rawBody: chunk,
        headers: { 'Content-Range': `bytes ${off}-${off + chunk.length - 1}/${size}`, Digest: `sha=${createHash('sha1').update(chunk).digest('base64')}` },
      });
      expect(r.status).toBe(200);
      parts.push(obj(r.json).part);
    }
    h.srv.control.commitAccepted(2, 3);
    const digest = `sha=${createHash('sha1').update(data).digest('base64')}`;
    const commit = (): ReturnType<typeof api.post> => api.post(String(endpoints.commit), { body: { parts }, headers: { Digest: digest } });
    const a = await commit();
    const b = await commit();
    const c = await commit();
    expect([a.status, b.status, c.status]).toEqual([202, 202, 201]);
    expect(a.headers['retry-after']).toBe('3');
    expect(obj(arr(obj(c.json).entries)[0]).sha1).toBe(createHash('sha1').update(data).digest('hex'));
  });

  it('expireAllTokens makes every token answer 401; a new token works', async () => {
    const api = boxHttp(h.srv);
    h.srv.control.expireAllTokens();
    const r = await api.get('/users/me');
    expect(r.status).toBe(401);
    expect(r.headers['www-authenticate']).toMatch(/^Bearer /);
    const fresh = h.srv.control.issueToken('1');
    expect((await boxHttp(h.srv, fresh).get('/users/me')).status).toBe(200);
  });

  it('revokeAll ends a user\'s tokens and refresh tokens', async () => {
    h.srv.control.registerOAuthClient({ clientId: 'c1', clientSecret: 's1' });
    const code = h.srv.control.issueAuthCode('c1');
    const form = (f: Record<string, string>): Promise<Response> =>
      fetch(h.srv.tokenUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(f) });
    const pair = obj(await (await form({ grant_type: 'authorization_code', code, client_id: 'c1', client_secret: 's1' })).json());
    expect((await boxHttp(h.srv, String(pair.access_token)).get('/users/me')).status).toBe(200);
    h.srv.control.revokeAll('1');
    expect((await boxHttp(h.srv, String(pair.access_token)).get('/users/me')).status).toBe(401);
    const refresh = await form({ grant_type: 'refresh_token', refresh_token: String(pair.refresh_token), client_id: 'c1', client_secret: 's1' });
    expect(refresh.status).toBe(400);
    expect(obj(await refresh.json()).error).toBe('invalid_grant');
  });

  it('rate limits per user with 429 rate_limit_exceeded and Retry-After, and can be switched off', async () => {
    const other = h.srv.control.addUser({ name: 'Limited' });
    const api = boxHttp(h.srv, other.token);
    h.srv.control.setRateLimit({ requests: 2, windowMs: 60_000 });
    try {
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push(await api.get('/users/me'));
      expect(statuses.map((r) => r.status)).toEqual([200, 200, 429]);
      expect(obj(statuses[2]!.json).code).toBe('rate_limit_exceeded');
      expect(Number(statuses[2]!.headers['retry-after'])).toBeGreaterThan(0);
    } finally {
      h.srv.control.setRateLimit(null);
    }
    expect((await api.get('/users/me')).status).toBe(200);
  });
});

describe('other users and event chaos', () => {
  it('an actor acts as another user and records the same events as HTTP', async () => {
    const token = h.srv.control.issueToken('1');
    const api = boxHttp(h.srv, token);
    const start = String(obj((await api.get('/events?stream_position=now')).json).next_stream_position);
    const bob = h.srv.control.addUser({ name: 'Bob', login: 'bob@example.com' });
    const web = h.srv.control.as(bob.userId);
    const folder = web.createFolder('0', 'Bob folder');
    const file = web.uploadFile(folder.id, 'note.txt', 'from bob');
    web.rename('file', file.id, 'renamed.txt');
    web.lock(file.id);
    const page = obj((await api.get(`/events?stream_position=${start}`)).json);
    const entries = arr(page.entries).map(obj);
    expect(entries.map((e) => e.event_type)).toEqual(['ITEM_CREATE', 'ITEM_UPLOAD', 'ITEM_RENAME', 'LOCK_CREATE']);
    expect(entries.every((e) => obj(e.created_by).id === bob.userId)).toBe(true);
    expect(web.findByPath('/Bob folder/renamed.txt')).toEqual({ type: 'file', id: file.id });
    expect(web.readFile(file.id).toString()).toBe('from bob');
    // Bob's lock blocks the default user's new version.
    const blocked = await api.upload(`/files/${file.id}/content`, { name: 'renamed.txt' }, 'from me');
    expect(blocked.status).toBe(403);
    expect(obj(blocked.json).code).toBe('access_denied_item_locked');
  });

  it('As-User lets an enterprise admin act for another user, and nobody else', async () => {
    const admin = h.srv.control.addUser({ name: 'Admin', enterpriseAdmin: true });
    const dana = h.srv.control.addUser({ name: 'Dana' });
    const asDana = await boxHttp(h.srv, admin.token).get('/users/me', { headers: { 'As-User': dana.userId } });
    expect(obj(asDana.json).name).toBe('Dana');
    const refused = await boxHttp(h.srv, dana.token).get('/users/me', { headers: { 'As-User': admin.userId } });
    expect(refused.status).toBe(403);
  });

  it('event chaos repeats events and delivers them out of order; positions still only grow', async () => {
    const token = h.srv.control.issueToken('1');
    const api = boxHttp(h.srv, token);
    const start = String(obj((await api.get('/events?stream_position=now')).json).next_stream_position);
    const web = h.srv.control.as('1');
    const f = web.createFolder('0', 'chaos');
    for (let i = 0; i < 6; i++) web.uploadFile(f.id, `c${i}.txt`, `chaos ${i}`);
    h.srv.control.setEventChaos({ duplicate: true, reorder: true });
    try {
      const page = obj((await api.get(`/events?stream_position=${start}`)).json);
      const entries = arr(page.entries).map(obj);
      const ids = entries.map((e) => String(e.event_id));
      expect(new Set(ids).size).toBeLessThan(ids.length);
      expect(page.chunk_size).toBe(entries.length);
      expect(Number(page.next_stream_position)).toBeGreaterThan(Number(start));
      h.srv.control.setEventChaos({});
      const plain = arr(obj((await api.get(`/events?stream_position=${start}`)).json).entries).map((e) => String(obj(e).event_id));
      expect(plain).toHaveLength(7);
      expect(plain.every((id) => ids.includes(id))).toBe(true);
      const firstSeen = [...new Set(ids)].filter((id) => plain.includes(id));
      expect(firstSeen).not.toEqual(plain);
    } finally {
      h.srv.control.setEventChaos({});
    }
  });
});

describe('HTTP control surface and request log', () => {
  it('drives faults, users and actors over POST /_control/<verb>', async () => {
    const user = await control('addUser', { name: 'Carol' });
    const { userId, token } = obj(user.json.result);
    expect(user.status).toBe(200);
    expect((await control('failNext', { path: { regex: '^/2\\.0/users/me$' }, status: 500, code: 'internal_server_error' })).status).toBe(200);
    const api = boxHttp(h.srv, String(token));
    expect((await api.get('/users/me')).status).toBe(500);
    const me = obj((await api.get('/users/me')).json);
    expect(me.name).toBe('Carol');
    const folder = obj((await control(`as/${String(userId)}/createFolder`, { args: ['0', 'carol-http'] })).json.result);
    const uploaded = obj((await control(`as/${String(userId)}/uploadFile`, { args: [folder.id, 'b.bin', { base64: Buffer.from([0, 1, 2]).toString('base64') }] })).json.result);
    const read = obj((await control(`as/${String(userId)}/readFile`, { args: [uploaded.id] })).json.result);
    expect(Buffer.from(String(read.base64), 'base64')).toEqual(Buffer.from([0, 1, 2]));
    const conflict = await control(`as/${String(userId)}/createFolder`, { args: ['0', 'CAROL-HTTP'] });
    expect(conflict.status).toBe(409);
    expect(conflict.json.code).toBe('item_name_in_use');
    expect((await control('noSuchVerb', {})).status).toBe(404);
  });

  it('records requests without the Authorization header', async () => {
    h.srv.control.clearRequests();
    await boxHttp(h.srv, h.srv.control.issueToken('1')).get('/folders/0?fields=name');
    await waitForLog();
    const log = h.srv.control.requests();
    const entry = log.find((r) => r.path === '/2.0/folders/0');
    expect(entry).toBeDefined();
    expect(entry!.query).toBe('?fields=name');
    expect(entry!.method).toBe('GET');
    expect(entry!.headers['authorization']).toBeUndefined();
    expect(JSON.stringify(log)).not.toContain('Bearer ');
  });

  it('keeps serving after a client drops a request halfway', async () => {
    await new Promise<void>((resolve) => {
      const req = httpRequest(`${h.srv.apiUrl}/folders`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': '1000', authorization: `Bearer ${DEFAULT_TOKEN}` } });
      req.on('error', () => resolve());
      req.write('{"name": "half');
      setImmediate(() => {
        req.destroy();
        resolve();
      });
    });
    expect((await boxHttp(h.srv, h.srv.control.issueToken('1')).get('/users/me')).status).toBe(200);
  });
});

async function waitForLog(): Promise<void> {
  const { waitFor } = await import('../support/wait.js');
  await waitFor(() => h.srv.control.requests().some((r) => r.path === '/2.0/folders/0'), { what: 'the request log entry' });
}
