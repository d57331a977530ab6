/**
 * The adaptive pacer against box-server's own rate limiting (a sliding window, like Box's per-user limits, scaled
 * down in time so the test runs in seconds): no fixed cap, yet it sustains at least 90 % of the allowed rate
 * with fewer than 5 % of its requests refused; the rate drops after a 429 and recovers; a configured ceiling
 * holds; download-URL fetches are not counted. (A 429 pausing every request of the client: retry.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBoxServer, type BoxServer } from '../../../src/box-server/index.js';
import { createBoxAdapter } from '../../../src/remote/box/create-box-adapter.js';
import { RateLimiter } from '../../../src/remote/box/rate-limiter.js';
import { systemClock } from '../../../src/ports/clock.js';
import { asRemoteId } from '../../../src/core/model.js';
import { ManualClock } from '../../engine/support/manual-clock.js';
import { makeTempDir } from '../../support/tmp.js';
import { tempFileAt } from '../../support/temp-file.js';
import { waitFor } from '../../support/wait.js';
import { join } from 'node:path';

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

  it('after a 429 the rate drops below what got through, then recovers additively, and ends unpaced', async () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter({ windowMs: 1000 }, clock);
    for (let i = 0; i < 10; i++) await limiter.run('calls', async () => undefined);
    limiter.rateLimited('calls', 0);
    // Nine of the ten went through in the window: paced a little below 9 per second.
    const dropped = limiter.pace('calls')!;
    expect(dropped).toBeCloseTo(9 * 0.95, 5);
    const paces = [dropped];
    for (let w = 0; w < 200 && limiter.pace('calls') !== null; w++) {
      clock.advance(1000);
      await limiter.run('calls', async () => undefined);
      paces.push(limiter.pace('calls') ?? Infinity);
    }
    // No rise for the quiet windows after the 429, then a little per window, never down; at last unpaced.
    expect(paces.slice(0, 5).every((p) => p === dropped)).toBe(true);
    for (let i = 1; i < paces.length; i++) expect(paces[i]!).toBeGreaterThanOrEqual(paces[i - 1]!);
    expect(paces[6]! / paces[5]!).toBeLessThan(1.05);
    expect(limiter.pace('calls')).toBeNull();
  });

  it('counts only API calls: a download\'s fetch of the download URL does not take a turn', async () => {
    // A ceiling of 3 calls a window and a clock that never moves: a fourth counted request would wait for ever.
    const clock = new ManualClock();
    const a = createBoxAdapter({
      apiUrl: server.apiUrl,
      uploadUrl: server.uploadUrl,
      tokenUrl: server.tokenUrl,
      auth: { developerToken: 'T' },
      rateLimit: { callsPerMinute: 3, windowMs: 60_000 },
      clock,
    });
    const tmp = await makeTempDir('pacer-');
    try {
      const files = [1, 2, 3].map((i) => server.control.as('1').uploadFile('0', `paced-${i}-${Date.now()}.txt`, `body ${i}`));
      server.control.clearRequests();
      // Three downloads: three API calls (each answered 302) and three download-host fetches, all at once.
      for (const [i, f] of files.entries()) await a.store.download({ id: asRemoteId(f.id), destFile: await tempFileAt(join(tmp.dir, `d${i}`)), expectSha1: f.sha1 });
      const seen = server.control.requests();
      expect(seen.filter((r) => r.path.startsWith('/dl/'))).toHaveLength(3);
      expect(seen.filter((r) => r.path.startsWith('/2.0/'))).toHaveLength(3);
      // The ceiling is reached by the API calls alone: the next one waits for the window.
      expect(clock.sleeping).toBe(0);
      let answered = false;
      const next = a.store.account().then(() => (answered = true));
      await waitFor(() => clock.sleeping > 0, { timeoutMs: 5_000, what: 'the fourth API call waiting for its turn' });
      expect(answered).toBe(false);
      clock.advance(60_000);
      await next;
      expect(answered).toBe(true);
    } finally {
      await a.close();
      await tmp.cleanup();
    }
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
