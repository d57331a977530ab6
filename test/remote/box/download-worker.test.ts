/**
 * A big download's body read on a file worker thread (src/local/worker-fetch.ts, TempFile.fillFromUrl; download.ts):
 * against box-server, a real pool of worker threads and real temp files. The main thread asks Box's API and follows
 * nothing itself: the thread reads the pre-signed URL, hashes and writes the bytes; a body cut mid-way is resumed
 * there with Range, a body bigger than listed is refused, a download host's error goes the main thread's way, and the
 * run's signal ends the thread's read. A zip download's archive is written to its scratch file by a thread the same
 * way (src/local/url-to-file.ts), and one cut mid-way makes its files come one by one.
 */
import { createHash, randomBytes } from 'node:crypto';
import * as nodeFs from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BoxServer } from '../../../src/box-server/index.js';
import { asRemoteId, type RemoteId } from '../../../src/core/model.js';
import { FileWorkerPool } from '../../../src/local/file-workers.js';
import { QuickGate } from '../../../src/local/quick-fs.js';
import { openTempFile } from '../../../src/local/temp-file.js';
import { writeUrlToFile } from '../../../src/local/url-to-file.js';
import type { TempFile, UrlFillResult } from '../../../src/ports/local-fs.js';
import type { BoxAdapter } from '../../../src/remote/box/create-box-adapter.js';
import { makeTempDir } from '../../support/tmp.js';
import { waitFor } from '../../support/wait.js';
import { adapterFor, startServer, syncFailure } from './harness.js';

const sha1 = (b: Buffer | string): string => createHash('sha1').update(b).digest('hex');
const MiB = 1024 * 1024;

describe('a big download read on a file worker thread (TempFile.fillFromUrl)', () => {
  let server: BoxServer;
  let adapter: BoxAdapter;
  let pool: FileWorkerPool;
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let n = 0;
  const upload = (name: string, body: Buffer): { id: string; sha1: string } => {
    const folder = server.control.as('1').createFolder('0', `${name}-${++n}`).id;
    return server.control.as('1').uploadFile(folder, name, body);
  };
  /** The download host's requests made since `sinceMs` (an earlier test's may be recorded late: when its answer closes). */
  const dlRequests = (sinceMs: number): ReturnType<BoxServer['control']['requests']> => server.control.requests().filter((r) => r.path.startsWith('/dl/') && r.atMs >= sinceMs);

  beforeAll(async () => {
    server = await startServer();
    adapter = adapterFor(server);
    pool = new FileWorkerPool({ size: 1 });
    tmp = await makeTempDir('boxsync-dlw-');
  });
  afterAll(async () => {
    await pool.close();
    await adapter.close();
    await server.close();
    await tmp.cleanup();
  });

  /** A temp file as LocalFs opens a big one with worker threads, recording the main thread's writes and the fills. */
  async function workerFile(): Promise<{ path: string; file: TempFile; writes: number[]; fills: number[] }> {
    const path = join(tmp.dir, `dl-${++n}`);
    const real = await openTempFile(nodeFs, new QuickGate(true, 0.5), path, path, pool);
    expect(real.fillFromUrl).toBeDefined();
    const writes: number[] = [];
    const fills: number[] = [];
    const file: TempFile = {
      path,
      write: (b) => (writes.push(b.length), real.write(b)),
      truncate: () => real.truncate(),
      syncAndClose: () => real.syncAndClose(),
      close: () => real.close(),
      freeBytes: () => real.freeBytes(),
      fillFromUrl: (f) => (fills.push(f.position), real.fillFromUrl!(f)),
    };
    return { path, file, writes, fills };
  }

  it('reads, hashes and writes the body on the thread: the main thread writes no byte, and hears the progress', async () => {
    const body = randomBytes(9 * MiB + 7);
    const f = upload('big.bin', body);
    const { path, file, writes, fills } = await workerFile();
    const seen: number[] = [];
    const t0 = Date.now();
    const res = await adapter.store.download({ id: asRemoteId(f.id), destFile: file, expectSha1: f.sha1, expectSizeBytes: body.length, onProgress: (p) => seen.push(p.doneBytes) });
    expect(res).toEqual({ sha1: sha1(body), sizeBytes: body.length });
    expect(sha1(await readFile(path))).toBe(sha1(body));
    expect(writes).toEqual([]);
    expect(fills).toEqual([0]);
    // The thread says how far it is every 4 MiB; the download ends with the whole.
    expect(seen.filter((d) => d > 0 && d < body.length).length).toBeGreaterThanOrEqual(2);
    expect(seen.at(-1)).toBe(body.length);
    const dl = dlRequests(t0);
    expect(dl).toHaveLength(1);
    expect(dl[0]!.headers.authorization).toBeUndefined();
  });

  it('resumes a body cut mid-way with Range on the thread, the bytes already written hashed again there', async () => {
    const body = randomBytes(3 * MiB);
    const f = upload('cut.bin', body);
    const { path, file, writes, fills } = await workerFile();
    server.control.failNext({ method: 'GET', path: /^\/dl\//, reset: 'mid-body' });
    const t0 = Date.now();
    const res = await adapter.store.download({ id: asRemoteId(f.id), destFile: file, expectSha1: f.sha1, expectSizeBytes: body.length });
    expect(res).toEqual({ sha1: sha1(body), sizeBytes: body.length });
    expect(sha1(await readFile(path))).toBe(sha1(body));
    const dl = dlRequests(t0);
    expect(dl).toHaveLength(2);
    const from = Number(/^bytes=(\d+)-$/.exec(dl[1]!.headers.range ?? '')?.[1]);
    expect(from).toBeGreaterThan(0);
    expect(from).toBeLessThan(body.length);
    expect(dl[1]!.status).toBe(206);
    expect(fills).toEqual([0, from]);
    expect(writes).toEqual([]);
  });

  it('a body cut every time ends after the resumes allowed with a network error, the file closed with checked bytes only', async () => {
    const body = randomBytes(2 * MiB);
    const f = upload('cuts.bin', body);
    const { path, file } = await workerFile();
    server.control.failNext({ method: 'GET', path: /^\/dl\//, reset: 'mid-body', count: 50 });
    try {
      const err = await syncFailure(adapter.store.download({ id: asRemoteId(f.id), destFile: file, expectSha1: f.sha1, expectSizeBytes: body.length }));
      expect(err.code).toBe('network');
      expect(err.message).toMatch(/broke \d+ times/);
    } finally {
      server.control.clearFaults();
    }
    // What the temp file holds is a prefix of the body (each byte checked in order), never more than it.
    const got = await readFile(path);
    expect(got.length).toBeLessThan(body.length);
    expect(got.equals(body.subarray(0, got.length))).toBe(true);
  });

  it('refuses a body bigger than Box listed (checksum_mismatch) before writing past the listed size', async () => {
    const body = randomBytes(MiB);
    const f = upload('over.bin', body);
    const { path, file } = await workerFile();
    const err = await syncFailure(adapter.store.download({ id: asRemoteId(f.id), destFile: file, expectSha1: f.sha1, expectSizeBytes: 512 * 1024 }));
    expect(err.code).toBe('checksum_mismatch');
    expect(err.message).toMatch(/announces 1048576 bytes/);
    expect((await stat(path)).size).toBeLessThanOrEqual(512 * 1024);
  });

  it('a download host answering neither 200 nor 206 goes the main thread\'s way, which asks the API again', async () => {
    const body = randomBytes(2 * MiB);
    const f = upload('host.bin', body);
    const { path, file, writes, fills } = await workerFile();
    server.control.failNext({ method: 'GET', path: /^\/dl\//, status: 503 });
    const t0 = Date.now();
    const res = await adapter.store.download({ id: asRemoteId(f.id), destFile: file, expectSha1: f.sha1, expectSizeBytes: body.length });
    expect(res).toEqual({ sha1: sha1(body), sizeBytes: body.length });
    expect(sha1(await readFile(path))).toBe(sha1(body));
    expect(fills).toEqual([0]);
    expect(writes.reduce((a, b) => a + b, 0)).toBe(body.length);
    expect(dlRequests(t0).map((r) => r.status)).toEqual([503, 200]);
  });

  it('a bandwidth cap set while the thread reads (the daemon\'s bwlimit) stops it: the main thread reads the file again under the cap', async () => {
    const body = randomBytes(MiB);
    const f = upload('capped.bin', body);
    const { path, file, writes, fills } = await workerFile();
    // A body that trickles: the thread is still reading it when the cap comes.
    server.control.failNext({ method: 'GET', path: /^\/dl\//, stream: { announceBytes: body.length, sendBytes: body.length, chunkBytes: 4096, everyMs: 20 } });
    const capped = adapterFor(server);
    try {
      const done = capped.store.download({ id: asRemoteId(f.id), destFile: file, expectSha1: f.sha1, expectSizeBytes: body.length });
      await waitFor(() => fills.length === 1, { timeoutMs: 20_000, what: 'the thread\'s read' });
      capped.bandwidth.setRate(4 * MiB);
      // The stream fault's bytes are not the file's: only the main thread's read, from byte 0, brings the right ones.
      expect(await done).toEqual({ sha1: sha1(body), sizeBytes: body.length });
      expect(sha1(await readFile(path))).toBe(sha1(body));
      expect(fills).toEqual([0]);
      expect(writes.reduce((a, b) => a + b, 0)).toBe(body.length);
    } finally {
      server.control.clearFaults();
      await capped.close();
    }
  });

  it('a pool whose thread cannot start leaves the body to the main thread, which reads it all', async () => {
    const body = randomBytes(MiB);
    const f = upload('nothread.bin', body);
    const broken = new FileWorkerPool({ size: 1, workerCode: 'throw new Error("this thread cannot start")' });
    try {
      const path = join(tmp.dir, `dl-${++n}`);
      const real = await openTempFile(nodeFs, new QuickGate(true, 0.5), path, path, broken);
      let written = 0;
      const file: TempFile = { path, write: (b) => ((written += b.length), real.write(b)), truncate: () => real.truncate(), syncAndClose: () => real.syncAndClose(), close: () => real.close(), freeBytes: () => real.freeBytes(), fillFromUrl: (x) => real.fillFromUrl!(x) };
      const res = await adapter.store.download({ id: asRemoteId(f.id), destFile: file, expectSha1: f.sha1, expectSizeBytes: body.length });
      expect(res).toEqual({ sha1: sha1(body), sizeBytes: body.length });
      expect(sha1(await readFile(path))).toBe(sha1(body));
      expect(written).toBe(body.length);
      expect(broken.threaded).toBe(false);
    } finally {
      await broken.close();
    }
  });

  it('the run\'s signal ends the thread\'s read: the download ends as cancelled', async () => {
    const body = randomBytes(2 * MiB);
    const f = upload('cancel.bin', body);
    const { path, file, fills } = await workerFile();
    // The download host holds its answer: the thread is waiting for it when the signal comes.
    server.control.failNext({ method: 'GET', path: /^\/dl\//, delayMs: 20_000 });
    const ac = new AbortController();
    const done = syncFailure(adapter.store.download({ id: asRemoteId(f.id), destFile: file, expectSha1: f.sha1, expectSizeBytes: body.length, signal: ac.signal }));
    await waitFor(() => fills.length === 1, { timeoutMs: 20_000, what: 'the thread\'s read' });
    ac.abort();
    const err = await done;
    server.control.clearFaults();
    expect(err.code).toBe('aborted');
    expect((await stat(path)).size).toBe(0);
  });

  describe('a zip archive written to its scratch file by a thread (zipDownloads.writeUrlTo)', () => {
    async function zipped(name: string): Promise<{ zipAdapter: BoxAdapter; thread: (UrlFillResult | null)[]; files: { id: RemoteId; name: string; sha1: string; sizeBytes: number; body: Buffer }[] }> {
      const folder = server.control.as('1').createFolder('0', `${name}-${++n}`).id;
      const files = Array.from({ length: 60 }, (_, i) => {
        const body = randomBytes(1000 + i * 37);
        const f = server.control.as('1').uploadFile(folder, `f${i}.bin`, body);
        return { id: asRemoteId(f.id), name: `f${i}.bin`, sha1: f.sha1, sizeBytes: body.length, body };
      });
      const thread: (UrlFillResult | null)[] = [];
      const write = writeUrlToFile(pool);
      const zipAdapter = adapterFor(server, { zipDownloads: { scratchDir: join(tmp.dir, `zip-${++n}`), minFiles: 10, writeUrlTo: async (f) => (thread.push(await write(f)), thread.at(-1)!) } });
      return { zipAdapter, thread, files };
    }

    async function downloadAll(a: BoxAdapter, files: Awaited<ReturnType<typeof zipped>>['files']): Promise<void> {
      const handle = a.store.prefetch!(files);
      try {
        for (const f of files) {
          const path = join(tmp.dir, `z-${++n}`);
          const res = await a.store.download({ id: f.id, destFile: await openTempFile(nodeFs, new QuickGate(true, 0.5), path, path), expectSha1: f.sha1, expectSizeBytes: f.sizeBytes });
          expect(res).toEqual({ sha1: sha1(f.body), sizeBytes: f.sizeBytes });
          expect((await readFile(path)).equals(f.body)).toBe(true);
        }
      } finally {
        handle.release();
      }
    }

    it('its files come from it, each checked: no download of their own', async () => {
      const { zipAdapter, thread, files } = await zipped('zip');
      try {
        const t0 = Date.now();
        await downloadAll(zipAdapter, files);
        expect(thread).toHaveLength(1);
        expect(thread[0]).toMatchObject({ status: 200 });
        expect(thread[0]!.sha1).toBeUndefined();
        expect(thread[0]!.written).toBeGreaterThan(files.reduce((sum, f) => sum + f.sizeBytes, 0));
        expect(server.control.requests().filter((r) => r.atMs >= t0 && /\/files\/\d+\/content$/.test(r.path))).toEqual([]);
      } finally {
        await zipAdapter.close();
      }
    });

    it('one cut mid-way on the thread: its files are downloaded one by one, every byte right', async () => {
      const { zipAdapter, thread, files } = await zipped('zipcut');
      server.control.failNext({ method: 'GET', path: /\/zip_downloads\/[^/]+\/content$/, reset: 'mid-body' });
      try {
        const t0 = Date.now();
        await downloadAll(zipAdapter, files);
        expect(thread).toHaveLength(1);
        // box-server's archive has no length (as Box's): the cut shows as an early end, and the archive cannot be read.
        expect(thread[0]).toMatchObject({ status: 200, written: 4096 });
        expect(server.control.requests().filter((r) => r.atMs >= t0 && /\/files\/\d+\/content$/.test(r.path))).toHaveLength(files.length);
      } finally {
        server.control.clearFaults();
        await zipAdapter.close();
      }
    });
  });
});
