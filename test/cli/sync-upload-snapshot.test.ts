/**
 * An upload reads a fixed snapshot: exactly the length stat'ed and announced. A file truncated or grown while it
 * uploads is noticed at the short or long read, the request is abandoned at once (a body shorter than its
 * Content-Length used to leave the server waiting until the 60 s stall timeout), and the same run re-reads the
 * file and uploads what it holds now. The change is made deterministically: box-server's `hook` fault runs when
 * the upload request (or the first part of a session) arrives, before any of its body is read, so the client is
 * held with most of the file unread.
 */
import { createHash, randomBytes } from 'node:crypto';
import { appendFileSync, truncateSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { explain, startSyncEnv, type SyncEnv } from './sync-harness.js';

const SESSIONS = '/api/2.0/files/upload_sessions';
const sha1 = (b: Buffer): string => createHash('sha1').update(b).digest('hex');
let e: (SyncEnv & { remoteRootId: string }) | undefined;
afterEach(async () => {
  await e?.close();
  e = undefined;
});

async function expectUploaded(env: SyncEnv, path: string, local: string): Promise<void> {
  const now = await readFile(local);
  const item = env.web.findByPath(`Mirror/${path}`);
  expect(item?.type).toBe('file');
  expect(sha1(env.web.readFile(item!.id))).toBe(sha1(now));
}

describe('a file that changes size while it uploads', () => {
  // 16 MiB: under the session threshold (a simple upload), and more than loopback's socket buffers hold, so the
  // client cannot have read the whole file when the server holds the request.
  const SIMPLE = 16 * 1024 * 1024;

  it.each([
    ['truncated', (p: string) => truncateSync(p, 1000), 1000],
    ['grown', (p: string) => appendFileSync(p, randomBytes(4096)), SIMPLE + 4096],
  ] as const)('a simple upload of a file %s meanwhile is abandoned and the file uploaded again with its final content', async (_what, change, finalSize) => {
    e = await startSyncEnv();
    const env = e;
    await mkdir(env.mirror, { recursive: true });
    const local = join(env.mirror, 'moving.bin');
    await writeFile(local, randomBytes(SIMPLE));
    env.srv.control.failNext({ method: 'POST', path: '/api/2.0/files/content', hook: () => change(local) });
    env.srv.control.clearRequests();

    const r = await env.sync();
    expect(r.code, explain(r)).toBe(0);
    expect(`${r.stdout}${r.stderr}`).not.toMatch(/ETIMEDOUT|timed out/i);
    expect((await readFile(local)).length).toBe(finalSize);
    await expectUploaded(env, 'moving.bin', local);
    // box-server logs a request when its connection closes: the abandoned first one can close after the second
    // completed (its body still draining, under load), so they are put back in the order they started.
    const posts = env.srv.control
      .requests()
      .filter((q) => q.method === 'POST' && q.path === '/api/2.0/files/content')
      .sort((a, b) => a.atMs - b.atMs);
    // The first request was abandoned (no 201), the second carried the final content. With two busy loops beside
    // a CI run, box-server once ran the hook only after the client had read and sent the whole 16 MiB: then that
    // first upload completes with the content it read, the client sees the file changed since, and the second
    // upload puts the final content over it (a version of its own, checked above as what Box holds now).
    expect(posts).toHaveLength(2);
    expect(posts[1]!.status).toBe(201);
    const versions = env.web.getItem('file', env.web.findByPath('Mirror/moving.bin')!.id)?.['file_version'];
    expect(versions).toBeDefined();
  }, 120_000);

  it.each([
    ['truncated', (p: string) => truncateSync(p, 1000), 1000],
    ['grown', (p: string) => appendFileSync(p, randomBytes(4096)), 24 * 1024 * 1024 + 4096],
  ] as const)('a chunked upload of a file %s meanwhile aborts its session and the file is uploaded again with its final content', async (_what, change, finalSize) => {
    e = await startSyncEnv({ chunkedPartSizeBytes: 1024 * 1024 });
    const env = e;
    await mkdir(env.mirror, { recursive: true });
    const local = join(env.mirror, 'moving.bin');
    await writeFile(local, randomBytes(24 * 1024 * 1024));
    // The first part is held until the file changed: the parts still to read are past the new end (or the end moved).
    env.srv.control.failNext({ method: 'PUT', path: `${SESSIONS}/*`, hook: () => change(local) });
    env.srv.control.clearRequests();

    const r = await env.sync([], { timeoutMs: 180_000 });
    expect(r.code, explain(r)).toBe(0);
    expect((await readFile(local)).length).toBe(finalSize);
    await expectUploaded(env, 'moving.bin', local);
    const reqs = env.srv.control.requests();
    // The first session never committed, and was aborted on the server.
    expect(reqs.filter((q) => q.method === 'POST' && q.path === SESSIONS && q.status === 201).length).toBe(finalSize >= 20_000_000 ? 2 : 1);
    expect(reqs.some((q) => q.method === 'DELETE' && q.path.startsWith(`${SESSIONS}/`))).toBe(true);
    expect(reqs.filter((q) => q.method === 'POST' && /\/commit$/.test(q.path) && q.status === 201).length).toBe(finalSize >= 20_000_000 ? 1 : 0);
  }, 240_000);
});
