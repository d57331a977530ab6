/**
 * The adaptive pacer against box-server's own rate limiting (a sliding window, like Box's per-user limits, scaled
 * down in time so the test runs in seconds): no fixed cap, yet it sustains at least 90 % of the allowed rate
 * with fewer than 5 % of its requests refused; download-URL fetches are not paced.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBoxServer, type BoxServer } from '../../../src/box-server/index.js';
import { createBoxAdapter } from '../../../src/remote/box/create-box-adapter.js';
import { RateLimiter } from '../../../src/remote/box/rate-limiter.js';
import { systemClock } from '../../../src/ports/clock.js';

let server: BoxServer;
beforeAll(async () => {
  server = await startBoxServer({ port: 0, tokens: ['T'] });
});
afterAll(async () => server.close());

describe('adaptive pacing', () => {
  it('sustains >= 90 % of a 20/s limit with < 5 % of requests refused, with no cap configured', async () => {
    const windowMs = 2000;
    const allowed = 40; // per window: 20 requests per second
    server.control.setRateLimit({ requests: allowed, windowMs });
    const a = createBoxAdapter({
      apiUrl: server.apiUrl,
      uploadUrl: server.uploadUrl,
      tokenUrl: server.tokenUrl,
      auth: { developerToken: 'T' },
      rateLimit: { windowMs },
    });
    try {
      // Warm-up: the first burst finds the limit (one window), then the measure runs for five windows.
      let done = 0;
      const worker = async (until: number): Promise<void> => {
        while (Date.now() < until) {
          await a.store.account();
          done += 1;
        }
      };
      const warmUntil = Date.now() + 2 * windowMs;
      await Promise.all(Array.from({ length: 8 }, () => worker(warmUntil)));
      server.control.clearRequests();
      done = 0;
      const t0 = Date.now();
      await Promise.all(Array.from({ length: 8 }, () => worker(t0 + 5 * windowMs)));
      const seconds = (Date.now() - t0) / 1000;
      const reqs = server.control.requests().filter((r) => r.path === '/2.0/users/me');
      const refused = reqs.filter((r) => r.status === 429).length;
      const rate = done / seconds;
      expect(rate).toBeGreaterThanOrEqual(0.9 * (allowed / (windowMs / 1000)));
      expect(refused / reqs.length).toBeLessThan(0.05);
    } finally {
      server.control.setRateLimit(null);
      await a.close();
    }
  });

  it('is unpaced until the first 429, and a configured ceiling still holds', async () => {
    const limiter = new RateLimiter({ callsPerMinute: 3, windowMs: 300 }, systemClock);
    expect(limiter.pace('calls')).toBeNull();
    const starts: number[] = [];
    await Promise.all(Array.from({ length: 6 }, () => limiter.run('calls', async () => void starts.push(Date.now()))));
    starts.sort((x, y) => x - y);
    expect(starts[3]! - starts[0]!).toBeGreaterThanOrEqual(290);
    limiter.rateLimited('calls', 10);
    expect(limiter.pace('calls')).not.toBeNull();
  });

  it('an abort while waiting out a pause rejects at once', async () => {
    const limiter = new RateLimiter({}, systemClock);
    limiter.rateLimited('calls', 60_000);
    const ac = new AbortController();
    const t0 = Date.now();
    const waiting = limiter.run('calls', async () => 'ran', ac.signal);
    setTimeout(() => ac.abort(new Error('stop')), 20);
    await expect(waiting).rejects.toThrow('stop');
    expect(Date.now() - t0).toBeLessThan(1000);
  });
});
