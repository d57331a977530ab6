// Authentication, OAuth, rate limiting and enterprise-stream refusals: each answer is Box's, and the
// server keeps serving afterwards.
import { afterEach, describe, expect, it } from 'vitest';
import { boxHttp, expectBoxError, obj, useBoxServer, withBoxServer } from '../support/box-server.js';
import { loadOpenApi } from '../support/openapi.js';
import { waitFor } from '../support/wait.js';

const handle = useBoxServer();
const http = () => boxHttp(handle.srv);
const spec = loadOpenApi();

afterEach(async () => {
  handle.srv.control.setRateLimit(null);
  handle.srv.control.clearFaults();
  const alive = await http().get('/users/me');
  expect(alive.status, 'box-server must keep serving after an error').toBe(200);
});

/** A 401 carries a Bearer challenge; a body, when present, is a Box error. */
function expect401(reply: { status: number; headers: Readonly<Record<string, string>>; json: unknown; text: string; url: string }): void {
  expect(reply.status).toBe(401);
  expect(reply.headers['www-authenticate']).toMatch(/^Bearer\b/i);
  expect(reply.headers['www-authenticate']).toMatch(/realm=/);
  if (reply.text !== '') {
    spec.expectValid({ method: 'GET', path: new URL(reply.url).pathname, status: 401, body: reply.json });
    expect(obj(reply.json).status).toBe(401);
  }
}

describe('401 with WWW-Authenticate', () => {
  it('missing token', async () => {
    expect401(await http().get('/users/me', { token: null }));
    expect401(await http().get('/folders/0/items', { token: null }));
  });

  it('bad token, and a non-Bearer scheme', async () => {
    const bad = await http().get('/users/me', { token: 'not-a-token' });
    expect401(bad);
    expect(bad.headers['www-authenticate']).toMatch(/invalid_token/);
    expect401(await http().get('/users/me', { token: null, headers: { Authorization: `Basic ${Buffer.from('a:b').toString('base64')}` } }));
  });

  it('expired token (expireAllTokens), on the API and the upload host; a fresh token works', async () => {
    await withBoxServer({}, async (srv) => {
      const client = boxHttp(srv);
      expect((await client.get('/users/me')).status).toBe(200);
      srv.control.expireAllTokens();
      const expired = await client.get('/users/me');
      expect401(expired);
      expect(expired.headers['www-authenticate']).toMatch(/invalid_token|expired/);
      const upload = await client.upload('/files/content', { name: 'x.txt', parent: { id: '0' } }, 'x');
      expect(upload.status).toBe(401);
      const fresh = srv.control.issueToken('1');
      expect((await boxHttp(srv, fresh).get('/users/me')).status).toBe(200);
    });
  });

  it('short-lived OAuth access tokens expire by themselves', async () => {
    await withBoxServer({ accessTokenTtlSec: 1 }, async (srv) => {
      srv.control.registerOAuthClient({ clientId: 'c', clientSecret: 's' });
      const code = srv.control.issueAuthCode('c', '1');
      const tok = obj((await boxHttp(srv, null).post(srv.tokenUrl, { rawBody: new URLSearchParams({ grant_type: 'authorization_code', code, client_id: 'c', client_secret: 's' }) })).json);
      expect(tok.expires_in).toBe(1);
      const client = boxHttp(srv, String(tok.access_token));
      expect((await client.get('/users/me')).status).toBe(200);
      const expired = await waitFor(async () => {
        const r = await client.get('/users/me');
        return r.status === 401 ? r : undefined;
      }, { timeoutMs: 5000, intervalMs: 200, what: 'the 1 s access token to expire' });
      expect401(expired);
    });
  });
});

describe('OAuth token endpoint', () => {
  const form = (f: Record<string, string>) => ({ rawBody: new URLSearchParams(f), token: null });

  it('invalid_grant for a rotated (single-use) refresh token and a reused authorization code', async () => {
    const { control, tokenUrl } = handle.srv;
    control.registerOAuthClient({ clientId: 'rot', clientSecret: 'sec' });
    const code = control.issueAuthCode('rot', '1');
    const first = obj((await http().post(tokenUrl, form({ grant_type: 'authorization_code', code, client_id: 'rot', client_secret: 'sec' }))).json);
    const reusedCode = await http().post(tokenUrl, form({ grant_type: 'authorization_code', code, client_id: 'rot', client_secret: 'sec' }));
    expectBoxError(reusedCode, 'POST', 400, 'invalid_grant');

    const refresh = (rt: unknown) => http().post(tokenUrl, form({ grant_type: 'refresh_token', refresh_token: String(rt), client_id: 'rot', client_secret: 'sec' }));
    const second = await refresh(first.refresh_token);
    expect(second.status).toBe(200);
    const replay = await refresh(first.refresh_token);
    const body = expectBoxError(replay, 'POST', 400, 'invalid_grant');
    expect(body.error_description).toBeTypeOf('string');
    // The rotated-in token still works: the failed replay must not have burned it.
    const third = await refresh(obj(second.json).refresh_token);
    expect(third.status).toBe(200);
  });

  it('invalid_grant after revokeAll, and for a garbage refresh token', async () => {
    const { control, tokenUrl } = handle.srv;
    const user = control.addUser({ name: 'Revoked', login: 'revoked@example.com' });
    control.registerOAuthClient({ clientId: 'rev', clientSecret: 'sec', userId: user.userId });
    const code = control.issueAuthCode('rev', user.userId);
    const tok = obj((await http().post(tokenUrl, form({ grant_type: 'authorization_code', code, client_id: 'rev', client_secret: 'sec' }))).json);
    control.revokeAll(user.userId);
    expectBoxError(
      await http().post(tokenUrl, form({ grant_type: 'refresh_token', refresh_token: String(tok.refresh_token), client_id: 'rev', client_secret: 'sec' })),
      'POST',
      400,
      'invalid_grant',
    );
    expect401(await boxHttp(handle.srv, String(tok.access_token)).get('/users/me'));
    expectBoxError(
      await http().post(tokenUrl, form({ grant_type: 'refresh_token', refresh_token: 'garbage', client_id: 'rev', client_secret: 'sec' })),
      'POST',
      400,
      'invalid_grant',
    );
  });
});

describe('429 rate_limit_exceeded with Retry-After', () => {
  it('from the configured per-user rate limit, and only for that user', async () => {
    const other = handle.srv.control.addUser({ name: 'Other' });
    handle.srv.control.setRateLimit({ requests: 3, windowMs: 60_000 });
    const statuses: number[] = [];
    let limited;
    for (let i = 0; i < 6; i++) {
      const r = await http().get('/folders/0');
      statuses.push(r.status);
      if (r.status === 429) limited = r;
    }
    expect(statuses.slice(0, 3)).toEqual([200, 200, 200]);
    expect(limited).toBeDefined();
    expectBoxError(limited!, 'GET', 429, 'rate_limit_exceeded');
    expect(Number(limited!.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await boxHttp(handle.srv, other.token).get('/folders/0')).status).toBe(200);
  });

  it('from an injected fault, with the chosen Retry-After', async () => {
    handle.srv.control.failNext({ method: 'GET', path: '/2.0/folders/0/items', status: 429, code: 'rate_limit_exceeded', retryAfterSec: 7 });
    const r = await http().get('/folders/0/items');
    expectBoxError(r, 'GET', 429, 'rate_limit_exceeded');
    expect(r.headers['retry-after']).toBe('7');
    expect((await http().get('/folders/0/items')).status).toBe(200);
  });
});

describe('enterprise streams', () => {
  it('admin_logs is refused to a non-admin and served to an enterprise admin', async () => {
    const refused = await http().get('/events?stream_type=admin_logs');
    expectBoxError(refused, 'GET', 403, ['access_denied_insufficient_permissions', 'forbidden', 'insufficient_scope']);
    const admin = handle.srv.control.addUser({ name: 'Admin', enterpriseAdmin: true });
    const ok = await boxHttp(handle.srv, admin.token).get('/events?stream_type=admin_logs');
    expect(ok.status).toBe(200);
    spec.expectValid({ method: 'GET', path: '/2.0/events', status: 200, body: ok.json });
  });

  it('now and the long-poll options are refused for admin_logs', async () => {
    const admin = handle.srv.control.addUser({ name: 'Admin2', enterpriseAdmin: true });
    const client = boxHttp(handle.srv, admin.token);
    expectBoxError(await client.get('/events?stream_type=admin_logs&stream_position=now'), 'GET', 400, ['bad_request', 'invalid_parameter', 'invalid_request_parameters']);
    expectBoxError(await client.options('/events?stream_type=admin_logs'), 'OPTIONS', 400, ['bad_request', 'invalid_parameter', 'invalid_request_parameters']);
    expect((await client.get('/events?stream_type=changes&stream_position=now')).status).toBe(200);
  });
});

describe('secrets stay out of the request record', () => {
  it('control.requests() never holds a bearer token, even for refused requests', async () => {
    const user = handle.srv.control.addUser({ name: 'Secretive' });
    handle.srv.control.clearRequests();
    const client = boxHttp(handle.srv, user.token);
    expect((await client.get('/users/me')).status).toBe(200);
    expect((await client.get('/files/424242')).status).toBe(404);
    expect((await http().get('/users/me', { token: 'wrong-secret-token-xyz' })).status).toBe(401);
    const recorded = JSON.stringify(handle.srv.control.requests());
    expect(recorded).toContain('/users/me');
    expect(recorded).not.toContain(user.token);
    expect(recorded).not.toContain('wrong-secret-token-xyz');
    expect(recorded.toLowerCase()).not.toContain('bearer');
  });
});
