/**
 * Issue 11 acceptance: a 429 is retried by one layer only, after Retry-After. A real `sync --once` against
 * box-server; box-server's request log is the witness (server-side timestamps).
 */
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { startSyncEnv, writeText, type SyncEnv } from './sync-harness.js';

const envs: SyncEnv[] = [];
afterEach(async () => {
  for (const e of envs.splice(0)) await e.close();
});

it('an upload refused once with 429 is sent exactly twice, the second after Retry-After; a GET after 503 likewise', async () => {
  const e = await startSyncEnv();
  envs.push(e);
  const remote = e.web.uploadFile(e.remoteRootId, 'from-box.txt', 'on box');
  await writeText(join(e.mirror, 'up.txt'), 'made here');
  e.srv.control.failNext({ method: 'POST', path: '/api/2.0/files/content', status: 429, retryAfterSec: 1 });
  e.srv.control.failNext({ method: 'GET', path: `/2.0/files/${remote.id}/content`, status: 503, retryAfterSec: 1 });
  e.srv.control.clearRequests();
  await e.syncOk();
  const log = e.srv.control.requests();
  const posts = log.filter((r) => r.method === 'POST' && r.path === '/api/2.0/files/content');
  expect(posts.map((r) => r.status)).toEqual([429, 201]);
  expect(posts[1]!.atMs - posts[0]!.atMs).toBeGreaterThanOrEqual(1000);
  const gets = log.filter((r) => r.method === 'GET' && r.path === `/2.0/files/${remote.id}/content`);
  expect(gets.map((r) => r.status)).toEqual([503, 302]);
  expect(gets[1]!.atMs - gets[0]!.atMs).toBeGreaterThanOrEqual(1000);
  expect(e.web.findByPath('/Mirror/up.txt')).not.toBeNull();
});
