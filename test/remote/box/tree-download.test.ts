import { createHash, randomBytes } from 'node:crypto';
import { getEventListeners } from 'node:events';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BoxServer } from '../../../src/box-server/index.js';
import { isSyncError, SyncError } from '../../../src/core/errors.js';
import type { TempFile } from '../../../src/ports/local-fs.js';
import { asRemoteId, type RemoteEntry } from '../../../src/core/model.js';
import { createLogger } from '../../../src/logger.js';
import type { BoxAdapter } from '../../../src/remote/box/create-box-adapter.js';
import { requestsLinkedTo } from '../../../src/remote/box/http.js';
import { makeTempDir } from '../../support/tmp.js';
import { tempFileAt } from '../../support/temp-file.js';
import { adapterFor, startServer, syncFailure } from './harness.js';
import { startRecordingProxy, type RecordingProxy } from './recording-proxy.js';

const sha1 = (b: Buffer | string): string => createHash('sha1').update(b).digest('hex');

describe('Box adapter: reading the tree and downloading', () => {
  let server: BoxServer;
  let adapter: BoxAdapter;
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let n = 0;
  const folder = (name: string): string => server.control.as('1').createFolder('0', `${name}-${++n}`).id;

  beforeAll(async () => {
    server = await startServer();
    adapter = adapterFor(server, { listPageSize: 2 });
    tmp = await makeTempDir('boxsync-dl-');
  });
  afterAll(async () => {
    await adapter.close();
    await server.close();
    await tmp.cleanup();
  });

  it('lists with marker paging and an explicit fields list, decoding web links as their own kind', async () => {
    const parent = folder('list');
    const actor = server.control.as('1');
    actor.uploadFile(parent, 'a.txt', 'a');
    actor.uploadFile(parent, 'b.txt', 'bb');
    actor.createFolder(parent, 'sub');
    actor.createWebLink(parent, 'Link', 'https://example.com/target');
    server.control.clearRequests();
    const pages: (readonly RemoteEntry[])[] = [];
    for await (const p of adapter.store.listFolder(asRemoteId(parent))) pages.push(p.entries);
    expect(pages.map((p) => p.length)).toEqual([2, 2]);
    const all = pages.flat();
    expect(all.find((e) => e.name === 'Link')).toMatchObject({ kind: 'weblink', url: 'https://example.com/target' });
    expect(all.find((e) => e.name === 'b.txt')).toMatchObject({ kind: 'file', sizeBytes: 2, sha1: sha1('bb') });
    const listCalls = server.control.requests().filter((r) => r.path === `/2.0/folders/${parent}/items`);
    expect(listCalls).toHaveLength(2);
    for (const c of listCalls) {
      const q = new URLSearchParams(c.query);
      expect(q.get('usemarker')).toBe('true');
      expect(q.get('fields')?.split(',')).toEqual(expect.arrayContaining(['sha1', 'size', 'content_modified_at', 'parent', 'file_version', 'sequence_id', 'url']));
    }
    expect(new URLSearchParams(listCalls[1]!.query).get('marker')).toBeTruthy();
  });

  it('sends If-None-Match on a repeated get and accepts the 304', async () => {
    const parent = folder('inm');
    const f = server.control.as('1').uploadFile(parent, 'x.txt', 'x');
    const first = await adapter.store.getItem(asRemoteId(f.id), 'file');
    server.control.clearRequests();
    const second = await adapter.store.getItem(asRemoteId(f.id), 'file');
    expect(second).toEqual(first);
    const r = server.control.requests().find((x) => x.path === `/2.0/files/${f.id}`);
    expect(r?.headers['if-none-match']).toBe(first!.etag);
    expect(r?.status).toBe(304);
    server.control.as('1').rename('file', f.id, 'y.txt');
    expect((await adapter.store.getItem(asRemoteId(f.id), 'file'))?.name).toBe('y.txt');
  });

  it('follows the 302 to the download host without the bearer token', async () => {
    const proxy: RecordingProxy = await startRecordingProxy(server.baseUrl);
    try {
      const viaProxy = adapterFor(server, { apiUrl: `${proxy.baseUrl}/2.0`, uploadUrl: `${proxy.baseUrl}/api/2.0` });
      const f = server.control.as('1').uploadFile(folder('dl302'), 'p.bin', 'payload');
      const dest = join(tmp.dir, `dl-${++n}`);
      await viaProxy.store.download({ id: asRemoteId(f.id), destFile: await tempFileAt(dest), expectSha1: f.sha1 });
      expect(await readFile(dest, 'utf8')).toBe('payload');
      const api = proxy.seen.find((r) => r.path === `/2.0/files/${f.id}/content`);
      const host = proxy.seen.find((r) => r.path.startsWith('/dl/'));
      expect(api?.hadAuthorization).toBe(true);
      expect(host).toBeDefined();
      expect(host?.hadAuthorization).toBe(false);
    } finally {
      await proxy.close();
    }
  });

  it('never logs the pre-signed download path (it is a credential)', async () => {
    const sink = new PassThrough();
    let logText = '';
    sink.on('data', (d: Buffer) => (logText += d.toString()));
    const logged = adapterFor(server, { logger: createLogger({ level: 'debug', destination: sink }) });
    const f = server.control.as('1').uploadFile(folder('dllog'), 'l.bin', 'logged');
    await logged.store.download({ id: asRemoteId(f.id), destFile: await tempFileAt(join(tmp.dir, `dl-${++n}`)), expectSha1: f.sha1 });
    const dlPath = server.control.requests().find((r) => r.path.startsWith('/dl/'))!.path;
    expect(logText).toContain(`/2.0/files/${f.id}/content`);
    expect(logText).toContain('pre-signed download URL');
    expect(logText).not.toContain(dlPath.slice(4));
  });

  it('unhooks every finished download from the caller\'s signal (no listener left behind, no MaxListeners warning)', async () => {
    const parent = folder('many');
    const files = Array.from({ length: 40 }, (_, i) => server.control.as('1').uploadFile(parent, `f-${i}.txt`, Buffer.from(`body ${i}`)));
    const run = new AbortController();
    const warnings: string[] = [];
    const onWarning = (w: Error): void => void warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      await Promise.all(
        files.map(async (f, i) => adapter.store.download({ id: asRemoteId(f.id), destFile: await tempFileAt(join(tmp.dir, `many-${i}`)), expectSha1: f.sha1, signal: run.signal })),
      );
    } finally {
      process.off('warning', onWarning);
    }
    // Every request linked itself to the run's signal while it was in flight; none may stay linked, and the
    // signal holds one listener for all of them (40 at once used to warn, and each finished one stayed).
    expect(requestsLinkedTo(run.signal)).toBe(0);
    expect(getEventListeners(run.signal, 'abort')).toHaveLength(1);
    expect(warnings).not.toContain('MaxListenersExceededWarning');
    expect(await readFile(join(tmp.dir, 'many-39'), 'utf8')).toBe('body 39');
  });

  it('refuses a download the disk has no room for, before any request, and keeps admitting ones that fit', async () => {
    const parent = folder('room');
    const f = server.control.as('1').uploadFile(parent, 'fits.txt', Buffer.from('it fits'));
    server.control.clearRequests();
    const err = await syncFailure(adapter.store.download({ id: asRemoteId(f.id), destFile: await tempFileAt(join(tmp.dir, 'huge')), expectSha1: f.sha1, expectSizeBytes: 2 ** 52 }));
    expect(err.code).toBe('disk_full');
    expect(err.message).toMatch(/not enough free space to download file \d+ .* will retry with backoff/);
    expect(server.control.requests()).toEqual([]);
    // Many small downloads into one folder: the free-space reading is reused, and each is still admitted.
    for (let i = 0; i < 5; i++) await adapter.store.download({ id: asRemoteId(f.id), destFile: await tempFileAt(join(tmp.dir, `fits-${i}`)), expectSha1: f.sha1, expectSizeBytes: 7 });
    expect(await readFile(join(tmp.dir, 'fits-4'), 'utf8')).toBe('it fits');
  });

  it('makes a file Box lists as empty without a request, durable and empty; a listed size or SHA-1 of bytes still downloads', async () => {
    const parent = folder('empty');
    const empty = server.control.as('1').uploadFile(parent, 'empty.txt', '');
    expect(empty.sha1).toBe(sha1(''));
    const dest = join(tmp.dir, `empty-${++n}`);
    server.control.clearRequests();
    const res = await adapter.store.download({ id: asRemoteId(empty.id), destFile: await tempFileAt(dest), expectSha1: empty.sha1, expectSizeBytes: 0 });
    expect(res).toEqual({ sha1: sha1(''), sizeBytes: 0 });
    expect((await readFile(dest)).length).toBe(0);
    expect(server.control.requests()).toEqual([]);
    // Without the listed size, or with another SHA-1 or an older version, it is asked for as before.
    const nonEmpty = server.control.as('1').uploadFile(parent, 'one.txt', 'x');
    server.control.clearRequests();
    await adapter.store.download({ id: asRemoteId(empty.id), destFile: await tempFileAt(join(tmp.dir, `empty-${++n}`)), expectSha1: empty.sha1 });
    await adapter.store.download({ id: asRemoteId(nonEmpty.id), destFile: await tempFileAt(join(tmp.dir, `one-${++n}`)), expectSha1: nonEmpty.sha1, expectSizeBytes: 1 });
    expect(server.control.requests().filter((r) => r.path.endsWith('/content')).map((r) => r.path)).toEqual([`/2.0/files/${empty.id}/content`, `/2.0/files/${nonEmpty.id}/content`]);
  });

  it('waits through 202 + Retry-After before the file is ready', async () => {
    const f = server.control.as('1').uploadFile(folder('dl202'), 'r.bin', 'ready later');
    server.control.failNext({ method: 'GET', path: `/2.0/files/${f.id}/content`, status: 202, retryAfterSec: 1 });
    server.control.clearRequests();
    const dest = join(tmp.dir, `dl-${++n}`);
    await adapter.store.download({ id: asRemoteId(f.id), destFile: await tempFileAt(dest), expectSha1: f.sha1 });
    expect(await readFile(dest, 'utf8')).toBe('ready later');
    const calls = server.control.requests().filter((r) => r.path === `/2.0/files/${f.id}/content`);
    expect(calls.map((c) => c.status)).toEqual([202, 302]);
    expect(calls[1]!.atMs - calls[0]!.atMs).toBeGreaterThanOrEqual(1000);
  });

  it('resumes a download broken mid-body with a Range request and verifies the whole', async () => {
    const body = randomBytes(3 * 1024 * 1024);
    const f = server.control.as('1').uploadFile(folder('resume'), 'big.bin', body);
    server.control.failNext({ method: 'GET', path: /^\/dl\//, reset: 'mid-body' });
    server.control.clearRequests();
    const dest = join(tmp.dir, `dl-${++n}`);
    const res = await adapter.store.download({ id: asRemoteId(f.id), destFile: await tempFileAt(dest), expectSha1: f.sha1 });
    expect(res).toEqual({ sha1: sha1(body), sizeBytes: body.length });
    expect(sha1(await readFile(dest))).toBe(sha1(body));
    const dl = server.control.requests().filter((r) => r.path.startsWith('/dl/'));
    expect(dl.length).toBe(2);
    const range = dl[1]!.headers.range;
    expect(range).toMatch(/^bytes=\d+-$/);
    const from = Number(/=(\d+)-/.exec(range!)![1]);
    expect(from).toBeGreaterThan(0);
    expect(from).toBeLessThan(body.length);
    expect(dl[1]!.status).toBe(206);
  });

  describe('through the caller\'s opened temp file (DownloadRequest.destFile)', () => {
    /** A real temp file (quick calls on) that records which of its calls the download made. */
    async function recordedFile(path: string): Promise<{ file: TempFile; seen: string[] }> {
      const real = await tempFileAt(path);
      const seen: string[] = [];
      const file: TempFile = {
        path,
        write: (b) => (seen.push('write'), real.write(b)),
        truncate: () => (seen.push('truncate'), real.truncate()),
        syncAndClose: () => (seen.push('syncAndClose'), real.syncAndClose()),
        close: () => (seen.push('close'), real.close()),
        freeBytes: () => real.freeBytes(),
      };
      return { file, seen };
    }

    it('writes the bytes through it, resuming a broken body with Range, then fsyncs and closes it', async () => {
      const body = randomBytes(3 * 1024 * 1024);
      const f = server.control.as('1').uploadFile(folder('destfile'), 'big.bin', body);
      server.control.failNext({ method: 'GET', path: /^\/dl\//, reset: 'mid-body' });
      server.control.clearRequests();
      const dest = join(tmp.dir, `dl-${++n}`);
      const { file, seen } = await recordedFile(dest);
      const res = await adapter.store.download({ id: asRemoteId(f.id), destFile: file, expectSha1: f.sha1, expectSizeBytes: body.length });
      expect(res).toEqual({ sha1: sha1(body), sizeBytes: body.length });
      expect(sha1(await readFile(dest))).toBe(sha1(body));
      expect(server.control.requests().filter((r) => r.path.startsWith('/dl/'))).toHaveLength(2);
      expect(seen.at(-1)).toBe('syncAndClose');
      expect(seen.filter((c) => c !== 'write')).toEqual(['syncAndClose']);
    });

    it('ends at once on a disk error while writing (no resume), with that error, and closes the file', async () => {
      const f = server.control.as('1').uploadFile(folder('destfull'), 'f.bin', 'some bytes');
      server.control.clearRequests();
      const dest = join(tmp.dir, `dl-${++n}`);
      const { file, seen } = await recordedFile(dest);
      const full = new SyncError({ code: 'disk_full', disposition: 'fatal', message: 'writing the download of test file failed (ENOSPC)' });
      const err = await syncFailure(adapter.store.download({ id: asRemoteId(f.id), destFile: { ...file, write: () => Promise.reject(full) }, expectSha1: f.sha1 }));
      expect(err).toBe(full);
      expect(server.control.requests().filter((r) => r.path.startsWith('/dl/'))).toHaveLength(1);
      expect(seen).toEqual(['close']);
    });

    it('closes it when the download is refused before any byte (no room for it)', async () => {
      const f = server.control.as('1').uploadFile(folder('destroom'), 'f.bin', 'x');
      const dest = join(tmp.dir, `dl-${++n}`);
      const { file, seen } = await recordedFile(dest);
      const err = await syncFailure(adapter.store.download({ id: asRemoteId(f.id), destFile: file, expectSha1: f.sha1, expectSizeBytes: 2 ** 52 }));
      expect(err.code).toBe('disk_full');
      expect(seen).toEqual(['close']);
    });
  });

  it('detects a SHA-1 mismatch (the bytes are not what the item said)', async () => {
    const f = server.control.as('1').uploadFile(folder('sha'), 's.bin', 'actual bytes');
    const dest = join(tmp.dir, `dl-${++n}`);
    try {
      await adapter.store.download({ id: asRemoteId(f.id), destFile: await tempFileAt(dest), expectSha1: sha1('expected bytes') });
      expect.unreachable('the download should fail');
    } catch (e) {
      expect(isSyncError(e) && { code: e.code, disposition: e.disposition, actual: e.details.actual }).toEqual({
        code: 'checksum_mismatch',
        disposition: 'retry',
        actual: sha1('actual bytes'),
      });
    }
  });

});
