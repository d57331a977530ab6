/**
 * The adaptive pacer against box-server's rate limiting over real HTTP, in wall-clock time (moved here from
 * test/remote/box/pacer.test.ts, which checks the same rule on a manual clock: a busy machine cannot sustain a
 * rate, so CI must not assert one). A sliding window of 40 requests per 2 s (20/s; Box's per-user limits scaled
 * down in time), no cap configured, eight callers of GET /users/me: two windows of warm-up, then five measured.
 * Prints the rate sustained as a share of the limit, and the share of requests Box refused (429).
 */
import { startBoxServer } from '../../src/box-server/index.js';
import { createBoxAdapter } from '../../src/remote/box/create-box-adapter.js';

export async function run(): Promise<void> {
  const windowMs = 2000;
  const allowed = 40;
  const limitPerSec = allowed / (windowMs / 1000);
  const server = await startBoxServer({ port: 0, tokens: ['T'] });
  server.control.setRateLimit({ requests: allowed, windowMs });
  const a = createBoxAdapter({ apiUrl: server.apiUrl, uploadUrl: server.uploadUrl, tokenUrl: server.tokenUrl, auth: { developerToken: 'T' }, rateLimit: { windowMs } });
  try {
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
    console.log(`pacer: ${rate.toFixed(1)}/s of a ${limitPerSec}/s limit (${((100 * rate) / limitPerSec).toFixed(1)} %), ${refused} of ${reqs.length} requests refused (${((100 * refused) / Math.max(1, reqs.length)).toFixed(1)} %)`);
  } finally {
    await a.close();
    await server.close();
  }
}
