/**
 * box-server OAuth2: the browser authorize page redirects back with code and state, codes and refresh tokens
 * are single use, and short-lived access tokens expire by themselves (401 with a Bearer challenge) until a
 * refresh rotates the pair.
 */
import { describe, expect, it } from 'vitest';
import { boxHttp, obj, useBoxServer } from '../support/box-server.js';
import { waitFor } from '../support/wait.js';

const h = useBoxServer({ accessTokenTtlSec: 1 });

function tokenRequest(fields: Record<string, string>): Promise<Response> {
  return fetch(h.srv.tokenUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields) });
}

describe('OAuth2', () => {
  it('authorize page: shows a grant form, then redirects to redirect_uri with code and state', async () => {
    h.srv.control.registerOAuthClient({ clientId: 'web', clientSecret: 'sec', redirectUris: ['http://localhost:9/cb'] });
    const query = new URLSearchParams({ response_type: 'code', client_id: 'web', redirect_uri: 'http://localhost:9/cb', state: 'xyz' });
    const page = await fetch(`${h.srv.authorizeUrl}?${query.toString()}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<form method="post">');
    const granted = await fetch(h.srv.authorizeUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: query, redirect: 'manual' });
    expect(granted.status).toBe(302);
    const back = new URL(granted.headers.get('location')!);
    expect(`${back.origin}${back.pathname}`).toBe('http://localhost:9/cb');
    expect(back.searchParams.get('state')).toBe('xyz');
    const code = back.searchParams.get('code')!;
    const first = await tokenRequest({ grant_type: 'authorization_code', code, client_id: 'web', client_secret: 'sec' });
    expect(first.status).toBe(200);
    expect(obj(await first.json())).toMatchObject({ token_type: 'bearer', expires_in: 1, access_token: expect.any(String), refresh_token: expect.any(String) });
    const again = await tokenRequest({ grant_type: 'authorization_code', code, client_id: 'web', client_secret: 'sec' });
    expect(obj(await again.json()).error).toBe('invalid_grant');
    const mismatch = await fetch(`${h.srv.authorizeUrl}?${new URLSearchParams({ response_type: 'code', client_id: 'web', redirect_uri: 'http://evil/cb' }).toString()}`);
    expect(mismatch.status).toBe(400);
  });

  it('access tokens expire by themselves; a refresh rotates the pair and the old refresh token is spent', async () => {
    h.srv.control.registerOAuthClient({ clientId: 'cli', clientSecret: 'pw' });
    const pair = obj(await (await tokenRequest({ grant_type: 'authorization_code', code: h.srv.control.issueAuthCode('cli'), client_id: 'cli', client_secret: 'pw' })).json());
    const api = boxHttp(h.srv, String(pair.access_token));
    expect((await api.get('/users/me')).status).toBe(200);
    const expired = await waitFor(async () => {
      const r = await api.get('/users/me');
      return r.status === 401 ? r : null;
    }, { timeoutMs: 5000, what: 'the access token to expire' });
    expect(expired.headers['www-authenticate']).toContain('invalid_token');
    const refreshed = obj(await (await tokenRequest({ grant_type: 'refresh_token', refresh_token: String(pair.refresh_token), client_id: 'cli', client_secret: 'pw' })).json());
    expect(refreshed.refresh_token).not.toBe(pair.refresh_token);
    expect((await boxHttp(h.srv, String(refreshed.access_token)).get('/users/me')).status).toBe(200);
    const reused = await tokenRequest({ grant_type: 'refresh_token', refresh_token: String(pair.refresh_token), client_id: 'cli', client_secret: 'pw' });
    expect(reused.status).toBe(400);
    expect(obj(await reused.json()).error).toBe('invalid_grant');
    const basic = await fetch(h.srv.tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', Authorization: `Basic ${Buffer.from('cli:pw').toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: String(refreshed.refresh_token) }),
    });
    expect(basic.status).toBe(200);
    const latest = obj(await basic.json());
    const badClient = await tokenRequest({ grant_type: 'refresh_token', refresh_token: String(latest.refresh_token), client_id: 'cli', client_secret: 'wrong' });
    expect(obj(await badClient.json()).error).toBe('invalid_client');
  });
});
