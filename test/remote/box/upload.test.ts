import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BoxServer } from '../../../src/box-server/index.js';
import { asRemoteId } from '../../../src/core/model.js';
import type { BoxAdapter } from '../../../src/remote/box/create-box-adapter.js';
import { makeTempDir } from '../../support/tmp.js';
import { adapterFor, startServer, syncFailure } from './harness.js';
import { uploadSource } from '../../support/upload-source.js';

const sha1 = (b: Buffer | string): string => createHash('sha1').update(b).digest('hex');

async function failure(p: Promise<unknown>): Promise<{ code: string; disposition: string; details: Record<string, unknown> }> {
  const e = await syncFailure(p);
  return { code: e.code, disposition: e.disposition, details: { ...e.details } };
}

describe('Box adapter: simple uploads', () => {
  let server: BoxServer;
  let adapter: BoxAdapter;
  /** Preflights every upload, whatever its size (the default preflights from 1 MiB). */
  let preflighting: BoxAdapter;
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let n = 0;
  const folder = (): string => server.control.as('1').createFolder('0', `up-${++n}`).id;
  const file = async (content: string | Buffer): Promise<string> => {
    const p = join(tmp.dir, `f-${++n}`);
    await writeFile(p, content);
    return p;
  };

  beforeAll(async () => {
    server = await startServer();
    adapter = adapterFor(server);
    preflighting = adapterFor(server, { preflightMinBytes: 0 });
    tmp = await makeTempDir('boxsync-up-');
  });
  afterAll(async () => {
    await adapter.close();
    await preflighting.close();
    await server.close();
    await tmp.cleanup();
  });

  it('preflights, then sends multipart with Content-MD5 (the SHA-1) and content_modified_at', async () => {
    const parent = folder();
    server.control.clearRequests();
    const e = await preflighting.store.uploadNew({ parentId: asRemoteId(parent), name: 'm.txt', source: await uploadSource(await file('multi')), modifiedAtMs: 1_700_000_000_999 });
    expect(e).toMatchObject({ name: 'm.txt', sha1: sha1('multi'), modifiedAtMs: 1_700_000_000_000 });
    const reqs = server.control.requests();
    expect(reqs.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual(['OPTIONS /2.0/files/content 200', 'POST /api/2.0/files/content 201']);
    expect(reqs[1]!.headers['content-md5']).toBe(sha1('multi'));
    expect(reqs[1]!.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
  });

  it('fails a name clash at the preflight, before any byte is uploaded, naming the conflicting file', async () => {
    const parent = folder();
    const existing = server.control.as('1').uploadFile(parent, 'Clash.txt', 'old');
    server.control.clearRequests();
    const f = await failure(preflighting.store.uploadNew({ parentId: asRemoteId(parent), name: 'clash.TXT', source: await uploadSource(await file('new')), modifiedAtMs: 0 }));
    expect(f).toMatchObject({ code: 'item_name_in_use', disposition: 'replan', details: { conflictId: existing.id } });
    expect(server.control.requests().map((r) => r.method)).toEqual(['OPTIONS']);
  });

  it('sends a file under 1 MiB at once, without a preflight; one of 1 MiB is preflighted', async () => {
    const parent = folder();
    server.control.clearRequests();
    await adapter.store.uploadNew({ parentId: asRemoteId(parent), name: 'small.txt', source: await uploadSource(await file('small')), modifiedAtMs: 0 });
    expect(server.control.requests().map((r) => r.method)).toEqual(['POST']);
    server.control.clearRequests();
    const big = Buffer.alloc(1024 * 1024, 7);
    const e = await adapter.store.uploadNew({ parentId: asRemoteId(parent), name: 'big.bin', source: await uploadSource(await file(big)), modifiedAtMs: 0 });
    expect(e.sha1).toBe(sha1(big));
    expect(server.control.requests().map((r) => r.method)).toEqual(['OPTIONS', 'POST']);
  });

  it('fails a small file\'s name clash and full quota at its POST, with the same codes as a preflight gives', async () => {
    const parent = folder();
    const existing = server.control.as('1').uploadFile(parent, 'Clash.txt', 'old');
    server.control.clearRequests();
    const f = await failure(adapter.store.uploadNew({ parentId: asRemoteId(parent), name: 'clash.TXT', source: await uploadSource(await file('new')), modifiedAtMs: 0 }));
    expect(f).toMatchObject({ code: 'item_name_in_use', disposition: 'replan', details: { conflictId: existing.id } });
    expect(server.control.requests().map((r) => r.method)).toEqual(['POST']);
    expect(server.control.as('1').readFile(existing.id).toString()).toBe('old');
    const tiny = server.control.addUser({ spaceAmountBytes: 5 });
    const a = adapterFor(server, { auth: { developerToken: tiny.token } });
    try {
      expect(await failure(a.store.uploadNew({ parentId: asRemoteId('0'), name: 'big.txt', source: await uploadSource(await file('more than five bytes')), modifiedAtMs: 0 }))).toMatchObject({
        code: 'quota_exceeded',
        disposition: 'skip',
      });
    } finally {
      await a.close();
    }
  });

  it('fails an oversize file and a full quota at the preflight with clear codes', async () => {
    const small = server.control.addUser({ maxUploadSizeBytes: 10, spaceAmountBytes: 1_000_000 });
    const tiny = server.control.addUser({ spaceAmountBytes: 5 });
    const a1 = adapterFor(server, { auth: { developerToken: small.token }, preflightMinBytes: 0 });
    const a2 = adapterFor(server, { auth: { developerToken: tiny.token }, preflightMinBytes: 0 });
    const src = await file('more than ten bytes');
    expect(await failure(a1.store.uploadNew({ parentId: asRemoteId('0'), name: 'big.txt', source: await uploadSource(src), modifiedAtMs: 0 }))).toMatchObject({
      code: 'file_too_large',
      disposition: 'skip',
    });
    expect(await failure(a2.store.uploadNew({ parentId: asRemoteId('0'), name: 'big.txt', source: await uploadSource(src), modifiedAtMs: 0 }))).toMatchObject({
      code: 'quota_exceeded',
      disposition: 'skip',
    });
  });

  it("uploads to the preflight's upload_url (accelerated upload) rather than the default upload root", async () => {
    const parent = folder();
    const elsewhere = adapterFor(server, { uploadUrl: `${server.baseUrl}/no-such-upload-root/2.0`, preflightMinBytes: 0 });
    const e = await elsewhere.store.uploadNew({ parentId: asRemoteId(parent), name: 'acc.txt', source: await uploadSource(await file('fast')), modifiedAtMs: 0 });
    expect(e.sha1).toBe(sha1('fast'));
  });

  it('uploads a new version with If-Match; a stale etag is precondition_failed (replan) and changes nothing', async () => {
    const parent = folder();
    const f = server.control.as('1').uploadFile(parent, 'v.txt', 'v1');
    const v2 = await adapter.store.uploadVersion({ id: asRemoteId(f.id), ifMatch: f.etag, name: 'v.txt', source: await uploadSource(await file('v2')), modifiedAtMs: 0 });
    expect(v2.sha1).toBe(sha1('v2'));
    server.control.clearRequests();
    const stale = await failure(adapter.store.uploadVersion({ id: asRemoteId(f.id), ifMatch: f.etag, name: 'v.txt', source: await uploadSource(await file('v3')), modifiedAtMs: 0 }));
    expect(stale).toMatchObject({ code: 'precondition_failed', disposition: 'replan' });
    const post = server.control.requests().find((r) => r.method === 'POST');
    expect(post?.headers['if-match']).toBe(f.etag);
    expect(server.control.as('1').readFile(f.id).toString()).toBe('v2');
  });

  it('never repeats a failed upload POST blindly (a 500 is reported, not retried)', async () => {
    const parent = folder();
    server.control.failNext({ method: 'POST', path: '/api/2.0/files/content', status: 500 });
    server.control.clearRequests();
    const f = await failure(adapter.store.uploadNew({ parentId: asRemoteId(parent), name: 'once.txt', source: await uploadSource(await file('x')), modifiedAtMs: 0 }));
    expect(f).toMatchObject({ code: 'server_error', disposition: 'retry' });
    expect(server.control.requests().filter((r) => r.method === 'POST')).toHaveLength(1);
  });

  describe('a file that changes during its upload (issue 26: a checkout rewrites files while they upload)', () => {
    // Slow enough to change the file mid-way; a stall would take 10 minutes (the test's bound fails first).
    let slow: BoxAdapter;
    beforeAll(() => {
      slow = adapterFor(server, { bandwidthBytesPerSec: 2 * 1024 * 1024, stallTimeoutMs: 600_000 });
    });
    afterAll(async () => slow.close());

    const midway = async (rewrite: (path: string) => Promise<void>): Promise<{ code: string; disposition: string }> => {
      const path = await file(Buffer.alloc(6 * 1024 * 1024, 7));
      let changed: Promise<void> | null = null;
      const f = await failure(
        slow.store.uploadNew({
          parentId: asRemoteId(folder()),
          name: 'busy.bin',
          source: await uploadSource(path),
          modifiedAtMs: 0,
          onProgress: (pr) => {
            if (changed === null && pr.doneBytes > 0) changed = rewrite(path);
          },
        }),
      );
      await changed;
      expect(changed).not.toBeNull();
      return f;
    };

    it('a file truncated mid-way ends the request at once (not at the stall timeout) and asks for a replan', async () => {
      const f = await midway((p) => writeFile(p, 'short now'));
      expect(f).toMatchObject({ code: 'local_changed', disposition: 'replan' });
    }, 30_000);

    it('a file rewritten mid-way with other bytes of the same size is a replan, not a checksum retry with backoff', async () => {
      const f = await midway((p) => writeFile(p, Buffer.alloc(6 * 1024 * 1024, 9)));
      expect(f).toMatchObject({ code: 'local_changed', disposition: 'replan' });
    }, 30_000);
  });
});
