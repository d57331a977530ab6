/**
 * Box's published rate limits on box-server (`boxLimits`, `--box-limits`): API calls a minute and uploads a
 * minute per user, answered with 429 `rate_limit_exceeded` and Retry-After as Box does; pre-signed download URLs
 * are not API calls. The window's arithmetic is checked with explicit times (no waiting for a minute to pass).
 */
import { describe, expect, it } from 'vitest';
import { startBoxServer } from '../../src/box-server/index.js';
import { BoxLimits, BOX_API_CALLS_PER_MINUTE, BOX_UPLOADS_PER_MINUTE } from '../../src/box-server/box-limits.js';
import { parseServerArgs } from '../../src/box-server/cli.js';
import { boxHttp, expectBoxError } from '../support/box-server.js';

describe('box-server --box-limits', () => {
  it('answers the call over the API limit with 429 and Retry-After; downloads are not API calls', async () => {
    const srv = await startBoxServer({ port: 0, tokens: ['T1'], boxLimits: { apiCallsPerMinute: 5, uploadsPerMinute: 100 } });
    try {
      const web = srv.control.as('1');
      const f = web.uploadFile('0', 'limited.txt', 'limited\n');
      const api = boxHttp(srv, 'T1');
      const redirect = await api.get(`/files/${f.id}/content`);
      expect(redirect.status).toBe(302);
      for (let i = 0; i < 4; i++) expect((await api.get('/users/me')).status).toBe(200);
      const over = await api.get('/users/me');
      const body = expectBoxError(over, 'GET', 429, 'rate_limit_exceeded');
      expect(String(body['message'])).toContain('5 calls a minute');
      const wait = Number(over.headers['retry-after']);
      expect(wait).toBeGreaterThanOrEqual(1);
      expect(wait).toBeLessThanOrEqual(60);
      // The download URL is pre-signed: not an API call, never limited.
      for (let i = 0; i < 3; i++) {
        const res = await fetch(redirect.headers['location']!);
        expect(res.status).toBe(200);
        expect(await res.text()).toBe('limited\n');
      }
    } finally {
      await srv.close();
    }
  });

  it('limits uploads separately from other calls', async () => {
    const srv = await startBoxServer({ port: 0, tokens: ['T1'], boxLimits: { apiCallsPerMinute: 100, uploadsPerMinute: 2 } });
    try {
      const api = boxHttp(srv, 'T1');
      expect((await api.upload('/files/content', { name: 'u1.txt', parent: { id: '0' } }, 'one')).status).toBe(201);
      expect((await api.upload('/files/content', { name: 'u2.txt', parent: { id: '0' } }, 'two')).status).toBe(201);
      const third = await api.upload('/files/content', { name: 'u3.txt', parent: { id: '0' } }, 'three');
      expect(String(expectBoxError(third, 'POST', 429, 'rate_limit_exceeded')['message'])).toContain('upload rate limit of 2 a minute');
      expect((await api.get('/folders/0/items')).status).toBe(200);
    } finally {
      await srv.close();
    }
  });

  it('the window slides: a call leaves it 60 s after it was made (explicit times)', () => {
    const limits = new BoxLimits({ apiCallsPerMinute: 2, uploadsPerMinute: 1 });
    limits.check('1', 'GET', '/users/me', 0);
    limits.check('1', 'GET', '/users/me', 10_000);
    let err: unknown;
    try {
      limits.check('1', 'GET', '/users/me', 30_000);
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ status: 429, code: 'rate_limit_exceeded', headers: { 'Retry-After': '30' } });
    // Another user has a window of its own.
    limits.check('2', 'GET', '/users/me', 30_000);
    // At 60 s the first call has left the window.
    limits.check('1', 'GET', '/users/me', 60_000);
    expect(() => limits.check('1', 'POST', '/files/content', 61_000)).toThrow(/API rate limit/);
    expect(new BoxLimits()).toMatchObject({ apiCallsPerMinute: BOX_API_CALLS_PER_MINUTE, uploadsPerMinute: BOX_UPLOADS_PER_MINUTE });
  });

  it('--box-limits turns Box\'s published limits on', () => {
    expect(parseServerArgs(['--box-limits']).boxLimits).toBe(true);
    expect(parseServerArgs([]).boxLimits).toBeUndefined();
  });
});
