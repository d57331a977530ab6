/**
 * A `fetch` job's HTTP read on a file worker thread (src/local/worker-fetch.ts): the thread speaks HTTP/1.1 on a
 * socket of its own whose reads land in a reused buffer, so it must frame an answer as node:http would. Against a
 * real TCP server on port 0 that writes its answers byte for byte (split across several writes), a real pool and
 * real files: a chunked body (extensions, a trailer), a body that ends with the connection, a 100 Continue before
 * the answer, a body bigger than its pooled buffer, a chunked body over the limit, a body cut before its length, a
 * stall, a bad chunk size, and HTTPS's certificate check (tls.connect with the same reused buffer).
 */
import { createHash, randomBytes } from 'node:crypto';
import * as nodeFs from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileWorkerPool } from '../../src/local/file-workers.js';
import { BODY_BUFFER_BYTES } from '../../src/local/worker-fetch.js';
import type { UrlFillResult } from '../../src/ports/local-fs.js';
import { makeTempDir } from '../support/tmp.js';

const sha1 = (b: Buffer): string => createHash('sha1').update(b).digest('hex');
const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 2));

/** What the server does with one connection once the request's head has arrived (it is recorded). */
type Answer = (s: Socket) => Promise<void>;

describe("a fetch job's HTTP on the file worker thread", () => {
  let pool: FileWorkerPool;
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let server: Server;
  let port = 0;
  let answer: Answer = async () => {};
  const heads: string[] = [];
  let n = 0;

  const onConnection = (s: Socket): void => {
    let head = '';
    s.on('error', () => {});
    const onData = (d: Buffer): void => {
      head += d.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      s.off('data', onData);
      heads.push(head);
      void answer(s).catch(() => s.destroy());
    };
    s.on('data', onData);
  };

  beforeAll(async () => {
    pool = new FileWorkerPool({ size: 1 });
    tmp = await makeTempDir('boxsync-wfetch-');
    server = createServer(onConnection);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    await pool.close();
    await new Promise<void>((r) => server.close(() => r()));
    await tmp.cleanup();
  });

  async function fetchInto(opts: { url?: string; limit?: number | null; stallMs?: number; headers?: Record<string, string> } = {}): Promise<{ out: UrlFillResult; bytes: Buffer }> {
    const path = join(tmp.dir, `f-${++n}`);
    const fd = nodeFs.openSync(path, 'wx', 0o600);
    try {
      const r = await pool.run(
        { op: 'fetch', path, fd, position: 0, url: opts.url ?? `http://127.0.0.1:${port}/dl/x?a=1`, headers: opts.headers ?? { 'user-agent': 't' }, limit: opts.limit ?? null, stallMs: opts.stallMs ?? 30_000, connectTimeoutMs: 30_000, deadlineInMs: 60_000 },
        { timeoutMs: 60_000 },
      );
      return { out: r.fetched!, bytes: await readFile(path) };
    } finally {
      nodeFs.closeSync(fd);
    }
  }

  /** Writes `parts` one by one with a turn between (so the client gets them in several reads). */
  const send = async (s: Socket, parts: (string | Buffer)[], close = true): Promise<void> => {
    for (const p of parts) {
      s.write(p);
      await tick();
    }
    if (close) s.end();
  };

  it('reads a chunked body (chunk extensions, a trailer), its head split across reads, and sends its request headers', async () => {
    const body = randomBytes(300_000);
    answer = (s) =>
      send(s, [
        'HTTP/1.1 200 OK\r\nTransfer-Enc',
        'oding: chunked\r\nX-A: b\r\n\r\n',
        `${(100_000).toString(16)};ext=1\r\n`,
        body.subarray(0, 60_000),
        body.subarray(60_000, 100_000),
        `\r\n${(200_000).toString(16).toUpperCase()}\r`,
        '\n',
        Buffer.concat([body.subarray(100_000), Buffer.from('\r\n0\r\nX-Trailer: 1\r\n\r\n')]),
      ], false);
    const { out, bytes } = await fetchInto({ headers: { 'user-agent': 'boxsync-test', range: 'bytes=0-' } });
    expect(out).toEqual({ status: 200, written: body.length, total: 0, sha1: sha1(body) });
    expect(bytes.equals(body)).toBe(true);
    const head = heads.at(-1)!;
    expect(head.startsWith('GET /dl/x?a=1 HTTP/1.1\r\n')).toBe(true);
    expect(head).toContain(`Host: 127.0.0.1:${port}\r\n`);
    expect(head).toContain('user-agent: boxsync-test\r\n');
    expect(head).toContain('range: bytes=0-\r\n');
  });

  it('reads a body with no length to the end of the connection, after a 100 Continue', async () => {
    const body = randomBytes(3 * BODY_BUFFER_BYTES + 12_345);
    answer = (s) => send(s, ['HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n', '\r\n', body.subarray(0, 1000), body.subarray(1000)]);
    const { out, bytes } = await fetchInto();
    expect(out).toEqual({ status: 200, written: body.length, total: 0, sha1: sha1(body) });
    expect(bytes.equals(body)).toBe(true);
  });

  it('reads exactly Content-Length bytes of a body bigger than its read buffer, progress included', async () => {
    const body = randomBytes(5 * 1024 * 1024 + 3);
    answer = (s) => send(s, [`HTTP/1.1 206 Partial Content\r\nContent-Length: ${body.length}\r\nContent-Range: bytes 0-${body.length - 1}/${body.length}\r\n\r\n`, body, 'trailing junk never read'], false);
    const { out, bytes } = await fetchInto();
    expect(out).toEqual({ status: 206, written: body.length, total: body.length, sha1: sha1(body) });
    expect(bytes.equals(body)).toBe(true);
  });

  it('a chunked body over the limit is refused before a byte past the limit is written', async () => {
    const body = randomBytes(200_000);
    answer = (s) => send(s, ['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n', `${body.length.toString(16)}\r\n`, body, '\r\n0\r\n\r\n']);
    const { out, bytes } = await fetchInto({ limit: 150_000 });
    expect(out.failed?.kind).toBe('oversize');
    expect(bytes.length).toBeLessThanOrEqual(150_000);
    expect(bytes.equals(body.subarray(0, bytes.length))).toBe(true);
  });

  it('a connection closed before Content-Length bytes is a cut body: the bytes before it are written, no SHA-1', async () => {
    const body = randomBytes(100_000);
    answer = (s) => send(s, [`HTTP/1.1 200 OK\r\nContent-Length: ${body.length + 50}\r\n\r\n`, body]);
    const { out, bytes } = await fetchInto();
    expect(out).toEqual({ status: 200, written: body.length, total: body.length + 50, failed: { kind: 'body', message: 'the connection closed inside the body', code: 'ECONNRESET' } });
    expect(bytes.equals(body)).toBe(true);
  });

  it('no byte for stallMs inside the body ends it as a stall (ETIMEDOUT)', async () => {
    answer = (s) => send(s, ['HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n', Buffer.alloc(10)], false);
    const { out } = await fetchInto({ stallMs: 300 });
    expect(out.failed).toMatchObject({ kind: 'body', code: 'ETIMEDOUT' });
  });

  it('a bad chunk size, or an answer that is not HTTP, fails the job', async () => {
    answer = (s) => send(s, ['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n']);
    expect((await fetchInto()).out.failed).toMatchObject({ kind: 'body', code: 'HPE_INVALID_CHUNK_SIZE' });
    answer = (s) => send(s, ['SSH-2.0-x\r\n\r\n']);
    expect((await fetchInto()).out.failed).toMatchObject({ kind: 'open' });
  });

  it('an answer that is neither 200 nor 206 ends the job with its status and no byte written', async () => {
    answer = (s) => send(s, ['HTTP/1.1 404 Not Found\r\nContent-Length: 5\r\n\r\nnope!'], false);
    const { out, bytes } = await fetchInto();
    expect(out).toEqual({ status: 404, written: 0, total: 0 });
    expect(bytes.length).toBe(0);
  });

  it('over HTTPS checks the certificate as node:https does: one Node does not trust is refused before any byte', async () => {
    const cert = nodeFs.readFileSync(new URL('../support/tls/localhost-test-only.crt', import.meta.url));
    const key = nodeFs.readFileSync(new URL('../support/tls/localhost-test-only.key', import.meta.url));
    const tlsServer = createTlsServer({ cert, key }, onConnection);
    await new Promise<void>((r) => tlsServer.listen(0, '127.0.0.1', r));
    try {
      answer = (s) => send(s, ['HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello'], false);
      const { out, bytes } = await fetchInto({ url: `https://localhost:${(tlsServer.address() as { port: number }).port}/dl/y` });
      expect(out.status).toBe(0);
      expect(out.failed?.kind).toBe('open');
      expect(out.failed?.code).toMatch(/CERT|SELF_SIGNED|UNABLE_TO_VERIFY/);
      expect(bytes.length).toBe(0);
    } finally {
      await new Promise<void>((r) => tlsServer.close(() => r()));
    }
  });
});
