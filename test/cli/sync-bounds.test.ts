/**
 * Issue 10 regressions: every wait on Box ends, the token stays with trusted hosts, and SIGTERM ends a run
 * promptly whatever it is waiting for. Real `sync --once` child processes against box-server with faults.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnCli } from '../support/cli.js';
import { waitFor } from '../support/wait.js';
import { exists, listTree, startSyncEnv, TOKEN, writeText, type SyncEnv } from './sync-harness.js';

const envs: SyncEnv[] = [];
const servers: Server[] = [];
afterEach(async () => {
  for (const e of envs.splice(0)) await e.close();
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

async function env(): Promise<SyncEnv & { remoteRootId: string }> {
  const e = await startSyncEnv();
  envs.push(e);
  return e;
}

/** A host that the config does not name: it records what it is sent. */
async function foreignHost(): Promise<{ url: string; seen: IncomingHttpHeaders[] }> {
  const seen: IncomingHttpHeaders[] = [];
  const srv = createServer((req, res) => {
    seen.push(req.headers);
    req.resume();
    res.writeHead(500, { 'content-type': 'application/json' }).end('{}');
  });
  servers.push(srv);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, seen };
}

const out = (r: { stdout: string; stderr: string }): string => r.stdout + r.stderr;

describe('sync --once: bounded waits and a guarded token', () => {
  it('never sends the token to an upload_url on a host the config does not name', async () => {
    const e = await env();
    const foreign = await foreignHost();
    e.srv.control.failNext({
      method: 'OPTIONS',
      path: '/2.0/files/content',
      count: 10,
      transform: (b) => ({ ...(b as object), upload_url: `${foreign.url}/api/2.0/files/content` }),
    });
    // 1 MiB: smaller files are sent without a preflight, so no upload_url would be offered.
    await writeText(join(e.mirror, 'up.txt'), 'to the configured host only'.padEnd(1024 * 1024, '.'));
    const r = await e.sync();
    expect(r.code, out(r)).toBe(0);
    expect(e.web.listFolder(e.remoteRootId).map((x) => x.name)).toEqual(['up.txt']);
    expect(foreign.seen.filter((h) => h.authorization !== undefined)).toEqual([]);
  });

  it('redacts a token that a Box error message echoes', async () => {
    const e = await env();
    const f = e.web.uploadFile(e.remoteRootId, 'secret.txt', 'x');
    e.srv.control.failNext({
      method: 'GET',
      path: `/2.0/files/${f.id}/content`,
      count: 20,
      status: 403,
      body: { type: 'error', status: 403, code: 'access_denied_insufficient_permissions', message: `request with Authorization: Bearer ${TOKEN} refused` },
    });
    const r = await e.sync();
    expect(r.code).toBe(1);
    expect(out(r)).toMatch(/Bearer \[REDACTED\]/);
    expect(out(r)).not.toContain(TOKEN);
  });

  it('a Retry-After of a day on a listing ends the run at once with a clear message', { timeout: 90_000 }, async () => {
    const e = await env();
    e.srv.control.failNext({ method: 'GET', path: `/2.0/folders/${e.remoteRootId}/items`, count: 100, status: 429, retryAfterSec: 86_400 });
    const t0 = Date.now();
    const r = await e.sync([], { timeoutMs: 60_000 });
    // A hang guard (a run takes a few seconds; waiting would take a day), not a speed check.
    expect(Date.now() - t0).toBeLessThan(45_000);
    expect(r.code).toBe(1);
    expect(out(r)).toMatch(/asked to wait 86400 s/);
  });

  it('a download that is not ready for a day (202) is given up for this run, the rest syncs', { timeout: 90_000 }, async () => {
    const e = await env();
    const slow = e.web.uploadFile(e.remoteRootId, 'later.bin', 'not ready');
    e.web.uploadFile(e.remoteRootId, 'now.txt', 'ready');
    e.srv.control.failNext({ method: 'GET', path: `/2.0/files/${slow.id}/content`, count: 100, status: 202, retryAfterSec: 86_400, body: {} });
    const t0 = Date.now();
    const r = await e.sync([], { timeoutMs: 60_000 });
    // A hang guard (a run takes a few seconds; waiting would take a day), not a speed check.
    expect(Date.now() - t0).toBeLessThan(45_000);
    expect(r.code).toBe(1);
    expect(await listTree(e.mirror)).toEqual(['now.txt']);
  });

  it('a download that announces 100 GB or never ends is cut at the listed size; nothing lands under the name', async () => {
    const e = await env();
    const a = e.web.uploadFile(e.remoteRootId, 'announced.txt', '23 bytes of real text..');
    const b = e.web.uploadFile(e.remoteRootId, 'endless.txt', '23 bytes of real text..');
    e.web.uploadFile(e.remoteRootId, 'fine.txt', 'fine');
    e.srv.control.failNext({ method: 'GET', path: /^\/dl\//, count: 1000, stream: { announceBytes: 100e9, sendBytes: 'forever', chunkBytes: 4096, everyMs: 5 } });
    const t0 = Date.now();
    const r = await e.sync([], { timeoutMs: 60_000 });
    expect(Date.now() - t0).toBeLessThan(45_000);
    expect(r.code).toBe(1);
    expect(out(r)).toMatch(/refused/);
    const names = await readdir(e.mirror);
    expect(names.filter((n) => !n.startsWith('.'))).toEqual([]);
    expect(a.id).not.toBe(b.id);
  });

  it('a download body that never ends (no length announced) stops at the listed size', async () => {
    const e = await env();
    e.web.uploadFile(e.remoteRootId, 'endless.txt', '23 bytes of real text..');
    e.srv.control.failNext({ method: 'GET', path: /^\/dl\//, count: 1000, stream: { sendBytes: 'forever', chunkBytes: 7, everyMs: 2 } });
    const r = await e.sync([], { timeoutMs: 60_000 });
    expect(r.code).toBe(1);
    expect(out(r)).toMatch(/sent more than 23 bytes/);
    expect((await readdir(e.mirror)).filter((n) => !n.startsWith('.'))).toEqual([]);
  });

  it('a download that trickles a byte at a time (never stalling) is stopped at its deadline; the rest syncs', { timeout: 200_000 }, async () => {
    const e = await env();
    await e.writeConfig({ extra: { http: { downloadDeadlineSec: 2, stallTimeoutSec: 30 } } });
    e.web.uploadFile(e.remoteRootId, 'trickle.txt', '23 bytes of real text..');
    await writeText(join(e.mirror, 'local.txt'), 'made here');
    // A byte every 10 s: 23 bytes would take 230 s, each gap well under the stall timeout between bytes.
    e.srv.control.failNext({ method: 'GET', path: /^\/dl\//, count: 1000, stream: { sendBytes: 'forever', chunkBytes: 1, everyMs: 10_000 } });
    const t0 = Date.now();
    const r = await e.sync([], { timeoutMs: 180_000 });
    const took = Date.now() - t0;
    expect(r.code).toBe(1);
    expect(out(r)).toMatch(/trickle\.txt[\s\S]*too slow \(\d+ bytes by its deadline\)/);
    // Stopped at the 2 s deadline (the run takes about 12 s), long before the 230 s the trickle needs.
    expect(took).toBeLessThan(120_000);
    expect(await listTree(e.mirror)).toEqual(['local.txt']);
    expect(e.web.findByPath('/Mirror/local.txt')).not.toBeNull();
  });

  it('a listing that is accepted and never answered is abandoned at the stall timeout, without a signal', async () => {
    const e = await env();
    await e.writeConfig({ extra: { http: { stallTimeoutSec: 1 } } });
    e.srv.control.failNext({ method: 'GET', path: `/2.0/folders/${e.remoteRootId}/items`, count: 1000, hang: true });
    const t0 = Date.now();
    const r = await e.sync([], { timeoutMs: 60_000 });
    expect(Date.now() - t0).toBeLessThan(45_000);
    expect(r.code).toBe(1);
    expect(out(r)).toMatch(/network|timed? ?out/i);
  });

  it('SIGTERM ends a run stuck on a listing that is accepted and never answered, within 5 s', async () => {
    const e = await env();
    e.srv.control.failNext({ method: 'GET', path: `/2.0/folders/${e.remoteRootId}/items`, count: 100, hang: true });
    const child = spawnCli(['sync', '--once', '--config', e.configFile], { env: { BOXSYNC_LOG_LEVEL: 'warn' } });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    // A hanging request is never logged (it never ends): wait for the read of the root that comes just before it.
    await waitFor(() => e.srv.control.requests().some((q) => q.path === `/2.0/folders/${e.remoteRootId}`), { what: 'the read before the hanging listing', timeoutMs: 30_000 });
    const t0 = Date.now();
    child.kill('SIGTERM');
    const code = await exited;
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(code).not.toBe(0);
  });

  it('SIGTERM ends a run that waits out a 429 Retry-After, within 5 s', async () => {
    const e = await env();
    e.srv.control.failNext({ method: 'GET', path: `/2.0/folders/${e.remoteRootId}/items`, count: 100, status: 429, retryAfterSec: 200 });
    const child = spawnCli(['sync', '--once', '--config', e.configFile], { env: { BOXSYNC_LOG_LEVEL: 'warn' } });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await waitFor(() => e.srv.control.requests().some((q) => q.path === `/2.0/folders/${e.remoteRootId}/items` && q.status === 429), { what: 'the 429', timeoutMs: 30_000 });
    const t0 = Date.now();
    child.kill('SIGTERM');
    const code = await exited;
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(code).not.toBe(0);
  });

  it('an event stream with malformed pages or a position that never moves ends the fetch in a few requests', async () => {
    const e = await env();
    e.web.uploadFile(e.remoteRootId, 'a.txt', 'a');
    expect((await e.sync()).code).toBe(0);
    // Malformed: retried a bounded number of times, then the run says so.
    e.srv.control.clearRequests();
    e.srv.control.failNext({ method: 'GET', path: '/2.0/events', count: 1000, body: { entries: 'abcdef', next_stream_position: 5 } });
    const bad = await e.sync([], { timeoutMs: 30_000 });
    expect(bad.code).toBe(1);
    expect(out(bad)).toMatch(/malformed/);
    expect(e.srv.control.requests().filter((q) => q.path === '/2.0/events').length).toBeLessThanOrEqual(6);
    // A position that never moves while "new" events keep coming: one page, then the pass goes on.
    e.srv.control.clearFaults();
    e.srv.control.clearRequests();
    let n = 0;
    e.srv.control.failNext({
      method: 'GET',
      path: '/2.0/events',
      count: 1000,
      transform: (_b, req) => ({
        chunk_size: 1,
        next_stream_position: req.query.get('stream_position'),
        entries: [{ type: 'event', event_id: `stuck-${++n}`, event_type: 'ITEM_UPLOAD', source: { type: 'file', id: '999999', name: 'x' } }],
      }),
    });
    const stuck = await e.sync([], { timeoutMs: 30_000 });
    expect(stuck.code, out(stuck)).toBe(0);
    expect(e.srv.control.requests().filter((q) => q.path === '/2.0/events').length).toBeLessThanOrEqual(3);
    expect(await exists(join(e.mirror, 'a.txt'))).toBe(true);
  });
});
