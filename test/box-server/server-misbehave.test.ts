/** box-server's misbehaving-server faults: canned bodies, rewritten answers, hangs and endless bodies. */
import { describe, expect, it } from 'vitest';
import { boxHttp, DEFAULT_TOKEN, useBoxServer } from '../support/box-server.js';

const h = useBoxServer();

describe('box-server misbehaviour faults', () => {
  it('answers a canned body, raw text and extra headers instead of the route', async () => {
    const c = boxHttp(h.srv, DEFAULT_TOKEN);
    h.srv.control.failNext({ method: 'GET', path: '/2.0/folders/0/items', body: { entries: 'abcdef' }, headers: { 'Retry-After': '86400' } });
    const a = await c.get('/folders/0/items');
    expect(a.status).toBe(200);
    expect(a.json).toEqual({ entries: 'abcdef' });
    expect(a.headers['retry-after']).toBe('86400');
    h.srv.control.failNext({ method: 'GET', path: '/2.0/events', rawBody: '{"next_stream_position": 123456789012345678901, "entries": []}' });
    const b = await c.get('/events');
    expect(b.text).toContain('123456789012345678901');
    // The rule was used up: the real route answers again.
    expect((await c.get('/folders/0/items')).json).toMatchObject({ entries: expect.any(Array) });
  });

  it('rewrites one field of a real answer', async () => {
    const c = boxHttp(h.srv, DEFAULT_TOKEN);
    h.srv.control.failNext({
      method: 'GET',
      path: '/2.0/users/me',
      transform: (b) => ({ ...(b as object), name: '\u001b[2Jevil' }),
    });
    const r = await c.get('/users/me');
    expect(r.json).toMatchObject({ type: 'user', name: '\u001b[2Jevil' });
  });

  it('hangs until the client gives up, and streams a body longer than announced', async () => {
    h.srv.control.failNext({ method: 'GET', path: '/2.0/users/me', hang: true });
    const t0 = Date.now();
    await expect(fetch(`${h.srv.apiUrl}/users/me`, { headers: { authorization: `Bearer ${DEFAULT_TOKEN}` }, signal: AbortSignal.timeout(300) })).rejects.toThrow();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);

    h.srv.control.failNext({ method: 'GET', path: '/2.0/users/me', stream: { sendBytes: 3 * 65536 } });
    const res = await fetch(`${h.srv.apiUrl}/users/me`, { headers: { authorization: `Bearer ${DEFAULT_TOKEN}` } });
    let n = 0;
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) n += chunk.length;
    } catch {
      // the server cuts the connection once it has sent sendBytes (no Content-Length was announced)
    }
    expect(n).toBe(3 * 65536);
  });
});
