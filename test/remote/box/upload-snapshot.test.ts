/**
 * Uploads read a fixed snapshot (LocalFs.openForUpload, src/local/upload-reader.ts): exactly the stat'ed length of the stat'ed
 * inode. A file that shrinks, grows or no longer matches the caller's stat fails with `local_changed` (replan),
 * the request abandoned at once and an upload session aborted. The change lands at a known point: box-server's
 * `hook` fault runs when the request arrives, before any of its body is read.
 */
import { randomBytes } from 'node:crypto';
import { appendFileSync, truncateSync } from 'node:fs';
import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BoxServer } from '../../../src/box-server/index.js';
import { asRemoteId } from '../../../src/core/model.js';
import type { BoxAdapter } from '../../../src/remote/box/create-box-adapter.js';
import { makeTempDir } from '../../support/tmp.js';
import { adapterFor, MemorySessionStore, startServer, syncFailure } from './harness.js';
import { uploadSource } from '../../support/upload-source.js';

describe('Box adapter: an upload reads a fixed snapshot', () => {
  let server: BoxServer;
  let adapter: BoxAdapter;
  let sessions: MemorySessionStore;
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let n = 0;
  const folder = (): string => server.control.as('1').createFolder('0', `fs-${++n}`).id;
  const file = async (size: number): Promise<string> => {
    const p = join(tmp.dir, `f-${++n}`);
    await writeFile(p, randomBytes(size));
    return p;
  };

  beforeAll(async () => {
    server = await startServer({ chunkedPartSizeBytes: 1024 * 1024 });
    sessions = new MemorySessionStore();
    adapter = adapterFor(server, { uploadSessions: sessions, partConcurrency: 2 });
    tmp = await makeTempDir('boxsync-snap-');
  });
  afterAll(async () => {
    await adapter.close();
    await server.close();
    await tmp.cleanup();
  });

  it('a simple upload whose file is truncated meanwhile fails local_changed (replan) at once, creating nothing', async () => {
    const parent = folder();
    // More than loopback's socket buffers hold: the client cannot have read it all when the server holds it.
    const src = await file(7 * 1024 * 1024);
    server.control.failNext({ method: 'POST', path: '/api/2.0/files/content', hook: () => truncateSync(src, 10) });
    const e = await syncFailure(adapter.store.uploadNew({ parentId: asRemoteId(parent), name: 'a.bin', source: await uploadSource(src), modifiedAtMs: 0 }));
    expect({ code: e.code, disposition: e.disposition }).toEqual({ code: 'local_changed', disposition: 'replan' });
    expect(e.message).toMatch(/shrank .*while it was being uploaded; the upload was abandoned/);
    expect(server.control.as('1').findByPath(`fs-${n - 1}/a.bin`)).toBeNull();
  });

  it('a simple upload whose file grows meanwhile fails local_changed: no more and no fewer bytes than announced', async () => {
    const parent = folder();
    const src = await file(7 * 1024 * 1024);
    server.control.failNext({ method: 'POST', path: '/api/2.0/files/content', hook: () => appendFileSync(src, 'more') });
    const e = await syncFailure(adapter.store.uploadNew({ parentId: asRemoteId(parent), name: 'b.bin', source: await uploadSource(src), modifiedAtMs: 0 }));
    expect(e.code).toBe('local_changed');
    expect(e.message).toMatch(/grew (from 7340032|beyond the 7340032 bytes)/);
  });

  it('a session upload whose file is truncated meanwhile fails local_changed, aborts the session and drops its record', async () => {
    const parent = folder();
    // Box takes sessions from 20 MB; in parts of 1 MiB, two in flight, most parts are unread when the first is held.
    const src = await file(21 * 1024 * 1024);
    server.control.failNext({ method: 'PUT', path: '/api/2.0/files/upload_sessions/*', hook: () => truncateSync(src, 10) });
    server.control.clearRequests();
    const e = await syncFailure(adapter.store.uploadNew({ parentId: asRemoteId(parent), name: 'c.bin', source: await uploadSource(src), modifiedAtMs: 0, resumeKey: 'r:c.bin' }));
    expect({ code: e.code, disposition: e.disposition }).toEqual({ code: 'local_changed', disposition: 'replan' });
    expect(server.control.requests().some((r) => r.method === 'DELETE' && r.path.startsWith('/api/2.0/files/upload_sessions/'))).toBe(true);
    expect(sessions.get('r:c.bin')).toBeUndefined();
  });

  it("an upload whose file no longer matches the caller's stat fails local_changed before any byte is sent", async () => {
    const parent = folder();
    const src = await file(100);
    const st = await stat(src);
    await writeFile(src, 'other content, other size');
    server.control.clearRequests();
    // Requests started from now on: the previous test's abandoned upload can be logged late (when the server ends it).
    const t0 = Date.now();
    const e = await syncFailure(
      uploadSource(src, { sizeBytes: st.size, mtimeMs: st.mtimeMs, inode: st.ino }).then((source) => adapter.store.uploadNew({ parentId: asRemoteId(parent), name: 'd.bin', source, modifiedAtMs: 0 })),
    );
    expect(e.code).toBe('local_changed');
    expect(server.control.requests().filter((r) => r.atMs >= t0)).toEqual([]);
  });
});
