import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BoxServer } from '../../../src/box-server/index.js';
import { asRemoteId } from '../../../src/core/model.js';
import { waitFor } from '../../support/wait.js';
import { adapterFor, startServer, syncFailure } from './harness.js';

async function failure(p: Promise<unknown>): Promise<{ code: string; disposition: string }> {
  const e = await syncFailure(p);
  return { code: e.code, disposition: e.disposition };
}

describe('Box adapter: retries and rate limits', () => {
  let server: BoxServer;

  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it('sits out a 429 storm, waiting Retry-After between attempts (server-side timestamps)', async () => {
    const a = adapterFor(server);
    server.control.failNext({ method: 'GET', path: '/2.0/users/me', status: 429, retryAfterSec: 1, count: 3 });
    server.control.clearRequests();
    expect((await a.store.account()).userId).toBe('1');
    const calls = server.control.requests().filter((r) => r.path === '/2.0/users/me');
    expect(calls.map((c) => c.status)).toEqual([429, 429, 429, 200]);
    for (let i = 1; i < calls.length; i++) expect(calls[i]!.atMs - calls[i - 1]!.atMs).toBeGreaterThanOrEqual(1000);
  });

  it('pauses the whole queue on a 429: other calls wait until Retry-After has passed', async () => {
    const a = adapterFor(server);
    server.control.failNext({ method: 'GET', path: '/2.0/users/me', status: 429, retryAfterSec: 2 });
    server.control.clearRequests();
    const first = a.store.account();
    await waitFor(() => a.pausedUntilMs() > 0, { what: 'the queue to pause' });
    const other = await a.store.getItem(asRemoteId('0'), 'folder');
    await first;
    expect(other?.id).toBe('0');
    const reqs = server.control.requests();
    const refused = reqs.find((r) => r.status === 429)!;
    const folderCall = reqs.find((r) => r.path === '/2.0/folders/0')!;
    expect(folderCall.atMs - refused.atMs).toBeGreaterThanOrEqual(2000);
    expect(a.pausedUntilMs()).toBe(0);
  });

  it('close() settles calls queued behind a 429 pause with aborted instead of leaving them hanging', async () => {
    const a = adapterFor(server);
    server.control.failNext({ method: 'GET', path: '/2.0/users/me', status: 429, retryAfterSec: 30 });
    const first = a.store.account();
    await waitFor(() => a.pausedUntilMs() > 0, { what: 'the queue to pause' });
    const queued = a.store.getItem(asRemoteId('0'), 'folder');
    await a.close();
    await expect(queued).rejects.toMatchObject({ code: 'aborted' });
    await expect(first).rejects.toMatchObject({ code: 'aborted' });
  });

  it('copes with a server-wide rate limit across concurrent calls', async () => {
    const a = adapterFor(server);
    server.control.setRateLimit({ requests: 3, windowMs: 1000 });
    try {
      server.control.clearRequests();
      const results = await Promise.all(Array.from({ length: 8 }, () => a.store.getItem(asRemoteId('0'), 'folder')));
      expect(results.every((r) => r?.id === '0')).toBe(true);
      const reqs = server.control.requests();
      expect(reqs.filter((r) => r.status === 200 || r.status === 304)).toHaveLength(8);
      expect(reqs.some((r) => r.status === 429)).toBe(true);
    } finally {
      server.control.setRateLimit(null);
    }
  });

  it('keeps to the configured calls-per-window cap (sliding window, server-side timestamps)', async () => {
    const a = adapterFor(server, { rateLimit: { callsPerMinute: 2, windowMs: 500 } });
    server.control.clearRequests();
    await Promise.all(Array.from({ length: 5 }, () => a.store.account()));
    const at = server.control.requests().map((r) => r.atMs).sort((x, y) => x - y);
    expect(at).toHaveLength(5);
    // The limiter paces the starts; arrival times at the server add the scheduling jitter of a loaded machine
    // (seen: 477 ms). Without the cap all five arrive within a few ms of each other.
    for (let i = 2; i < at.length; i++) expect(at[i]! - at[i - 2]!).toBeGreaterThanOrEqual(400);
  });

  it('retries idempotent calls on 5xx and network resets', async () => {
    const a = adapterFor(server);
    server.control.failNext({ method: 'GET', path: '/2.0/users/me', status: 503, count: 2 });
    server.control.clearRequests();
    await a.store.account();
    expect(server.control.requests().map((r) => r.status)).toEqual([503, 503, 200]);
    server.control.failNext({ method: 'GET', path: '/2.0/users/me', reset: 'before-response' });
    expect((await a.store.account()).userId).toBe('1');
  });

  it('gives up on an idempotent call after its attempts, with a retry disposition', async () => {
    const a = adapterFor(server, { maxAttempts: 2 });
    server.control.failNext({ method: 'GET', path: '/2.0/users/me', status: 500, count: 2 });
    expect(await failure(a.store.account())).toEqual({ code: 'server_error', disposition: 'retry' });
  });

  it('never repeats a POST after a 5xx, nor after a reset on a new connection: the outcome is unknown, the engine re-observes', async () => {
    const a = adapterFor(server);
    server.control.failNext({ method: 'POST', path: '/2.0/folders', status: 500 });
    server.control.clearRequests();
    expect(await failure(a.store.createFolder(asRemoteId('0'), 'never-twice'))).toEqual({ code: 'server_error', disposition: 'retry' });
    expect(server.control.requests().filter((r) => r.method === 'POST')).toHaveLength(1);
    // A server of its own: no kept-alive connection to it yet, so the POST goes out on a new one.
    const fresh = await startServer();
    try {
      const b = adapterFor(fresh);
      fresh.control.failNext({ method: 'POST', path: '/2.0/folders', reset: 'before-response' });
      expect(await failure(b.store.createFolder(asRemoteId('0'), 'never-twice'))).toEqual({ code: 'network', disposition: 'retry' });
      expect(fresh.control.requests().filter((r) => r.method === 'POST')).toHaveLength(1);
      await b.close();
    } finally {
      await fresh.close();
    }
  });

  it('sends a request again, once, when the kept-alive connection it went out on turns out closed (ECONNRESET on a reused socket)', async () => {
    const a = adapterFor(server);
    await a.store.account(); // leaves a kept-alive connection to reuse
    server.control.failNext({ method: 'POST', path: '/2.0/folders', reset: 'before-response' });
    server.control.clearRequests();
    const f = await a.store.createFolder(asRemoteId('0'), 'after-stale-connection');
    expect(f.name).toBe('after-stale-connection');
    expect(server.control.requests().filter((r) => r.method === 'POST')).toHaveLength(2);
    // Once only: a second reset is reported (the replay went out on a new connection).
    await a.store.account();
    server.control.failNext({ method: 'POST', path: '/2.0/folders', reset: 'before-response', count: 2 });
    server.control.clearRequests();
    expect(await failure(a.store.createFolder(asRemoteId('0'), 'reset-twice'))).toEqual({ code: 'network', disposition: 'retry' });
    expect(server.control.requests().filter((r) => r.method === 'POST')).toHaveLength(2);
  });

  it('retries a POST refused with 429 (Box did not act on it)', async () => {
    const a = adapterFor(server);
    server.control.failNext({ method: 'POST', path: '/2.0/folders', status: 429, retryAfterSec: 1 });
    server.control.clearRequests();
    const f = await a.store.createFolder(asRemoteId('0'), 'after-429');
    expect(f.name).toBe('after-429');
    expect(server.control.requests().filter((r) => r.method === 'POST').map((r) => r.status)).toEqual([429, 201]);
  });

  it("got's retry waits out a 503's Retry-After before the one retry, and never retries a 429 itself", async () => {
    const a = adapterFor(server);
    server.control.failNext({ method: 'GET', path: '/2.0/users/me', status: 503, retryAfterSec: 1 });
    server.control.clearRequests();
    await a.store.account();
    const calls = server.control.requests().filter((r) => r.path === '/2.0/users/me');
    expect(calls.map((c) => c.status)).toEqual([503, 200]);
    expect(calls[1]!.atMs - calls[0]!.atMs).toBeGreaterThanOrEqual(1000);
    // A 429 on a GET: the pacer's, sent again once after Retry-After; got adds no attempt of its own.
    server.control.failNext({ method: 'GET', path: '/2.0/users/me', status: 429, retryAfterSec: 1 });
    server.control.clearRequests();
    await a.store.account();
    const again = server.control.requests().filter((r) => r.path === '/2.0/users/me');
    expect(again.map((c) => c.status)).toEqual([429, 200]);
    expect(again[1]!.atMs - again[0]!.atMs).toBeGreaterThanOrEqual(1000);
  });

  it('a 503 asking to wait a day is not retried: one request, a clear message at once', async () => {
    const a = adapterFor(server);
    server.control.failNext({ method: 'GET', path: '/2.0/users/me', status: 503, retryAfterSec: 86_400, count: 5 });
    server.control.clearRequests();
    const t0 = Date.now();
    const err = await syncFailure(a.store.account());
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(err.message).toMatch(/asked to wait 86400 s .* more than the 300 s boxsync waits/);
    expect(server.control.requests().filter((r) => r.path === '/2.0/users/me')).toHaveLength(1);
  });
});
