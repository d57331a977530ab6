/**
 * The adaptive pacer against box-server's own rate limiting (its sliding window, like Box's per-user limits), on a
 * manual clock: no fixed cap, yet it sustains at least 90 % of the allowed rate with fewer than 5 % of its
 * requests refused; the rate drops after a 429 and recovers; a configured ceiling holds; download-URL fetches
 * are not counted. No wall-clock rate is asserted here (a busy CI machine cannot sustain one): the same run over
 * real HTTP in wall-clock time is test/bench/pacer.bench.ts. (A 429 pausing every request: retry.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBoxServer, type BoxServer } from '../../../src/box-server/index.js';
import { createBoxAdapter } from '../../../src/remote/box/create-box-adapter.js';
import { RateLimiter } from '../../../src/remote/box/rate-limiter.js';
import { Faults } from '../../../src/box-server/faults.js';
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
  it('sustains >= 90 % of a 20/s limit with < 5 % of requests refused, with no cap configured (virtual time)', async () => {
    // box-server's own sliding-window limiter (the one its HTTP answers 429 with) and the pacer share a manual
    // clock: eight callers, 20 ms a request, a limit of 40 per 2 s window. Time moves only from one waiting
    // caller's deadline to the next, so a busy machine cannot change the measure.
    const clock = new ManualClock();
    const windowMs = 2000;
    const allowed = 40; // per window: 20 requests per second
    const box = new Faults();
    box.setRateLimit({ requests: allowed, windowMs });
    const limiter = new RateLimiter({ windowMs }, clock);
    const ok: number[] = [];
    const refused: number[] = [];
    // As BoxHttp does: a request takes its turn, Box counts it on arrival, a 429 pauses and slows the lane.
    const request = async (): Promise<void> => {
      const waitSec = box.rateLimited('1', clock.now());
      await clock.sleep(20);
      if (waitSec === null) ok.push(clock.now());
      else {
        refused.push(clock.now());
        limiter.rateLimited('calls', waitSec * 1000);
      }
    };
    // Warm-up: the first burst finds the limit (two windows), then the measure runs for five windows.
    const t0 = clock.now() + 2 * windowMs;
    const t1 = t0 + 5 * windowMs;
    const callers = Promise.all(
      Array.from({ length: 8 }, async () => {
        while (clock.now() < t1) await limiter.run('calls', request);
      }),
    );
    await runClock(clock, callers);
    const inMeasure = (ts: readonly number[]): number => ts.filter((t) => t >= t0 && t < t1).length;
    const rate = inMeasure(ok) / ((t1 - t0) / 1000);
    expect(rate).toBeGreaterThanOrEqual(0.9 * (allowed / (windowMs / 1000)));
    expect(rate).toBeLessThanOrEqual(allowed / (windowMs / 1000));
    expect(inMeasure(refused) / (inMeasure(ok) + inMeasure(refused))).toBeLessThan(0.05);
    // The warm-up did meet the limit: the pace comes from Box's refusals, not from a cap.
    expect(refused.length).toBeGreaterThan(0);
    expect(limiter.pace('calls')).not.toBeNull();
  });

  it('is unpaced until the first 429, and a configured ceiling still holds', async () => {
    const clock = new ManualClock();
    const limiter = new RateLimiter({ callsPerMinute: 3, windowMs: 300 }, clock);
    expect(limiter.pace('calls')).toBeNull();
    const t0 = clock.now();
    const starts: number[] = [];
    await runClock(clock, Promise.all(Array.from({ length: 6 }, () => limiter.run('calls', async () => void starts.push(clock.now())))));
    // Three at once, the next three one window later: no sooner, and no later than the window needs.
    expect(starts).toEqual([t0, t0, t0, t0 + 300, t0 + 300, t0 + 300]);
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

/**
 * Run `clock` until `done` settles: let every promise that can move do so, then jump to the earliest deadline a
 * sleeper waits for. Bounded: a run that needs more than a million steps, or stalls with nobody asleep, fails.
 */
async function runClock(clock: ManualClock, done: Promise<unknown>): Promise<void> {
  let finished = false;
  void done.then(() => (finished = true));
  for (let step = 0; step < 1_000_000; step++) {
    await new Promise((r) => setImmediate(r));
    if (finished) return done.then(() => undefined);
    const next = clock.nextDeadlineMs;
    if (next === null) throw new Error('the callers stalled with nobody waiting on the clock');
    clock.advance(Math.max(0, next - clock.now()));
  }
  throw new Error('the virtual run did not end within a million steps');
}
