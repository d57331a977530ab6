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
  /** Connections the server took, and the one a request came in on (heads[i] on connectionOf[i]). */
  let connections = 0;
  const connectionOf: number[] = [];
  const sockets: Socket[] = [];

  // Several requests a connection (keep-alive): once an answer is sent and the connection is still open, the next
  // request's head is read from it.
  const onConnection = (s: Socket): void => {
    const id = ++connections;
    sockets[id] = s;
    let got = '';
    let busy = false;
    s.on('error', () => {});
    // One request answered at a time; what arrives meanwhile waits in `got`.
    const next = (): void => {
      const e = got.indexOf('\r\n\r\n');
      if (busy || e < 0) return;
      heads.push(got.slice(0, e + 4));
      connectionOf.push(id);
      got = got.slice(e + 4);
      busy = true;
      void answer(s)
        .then(() => {
          busy = false;
          next();
        })
        .catch(() => s.destroy());
    };
    s.on('data', (d: Buffer) => {
      got += d.toString('latin1');
      next();
    });
  };
  /** Resolves once the server's side of connection `id` is closed (bounded). */
  const closedOnServer = (id: number): Promise<void> =>
    new Promise((resolve, reject) => {
      const s = sockets[id]!;
      if (s.destroyed) return resolve();
      const t = setTimeout(() => reject(new Error(`connection ${id} still open after 10 s`)), 10_000);
      s.once('close', () => {
        clearTimeout(t);
        resolve();
      });
    });

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
    answer = (s) => send(s, [`HTTP/1.1 206 Partial Content\r\nContent-Length: ${body.length}\r\nContent-Range: bytes 0-${body.length - 1}/${body.length}\r\n\r\n`, body, 'trailing junk never read']);
    const { out, bytes } = await fetchInto();
    expect(out).toEqual({ status: 206, written: body.length, total: body.length, sha1: sha1(body) });
    expect(bytes.equals(body)).toBe(true);
    // Bytes after the body: the connection is not kept (the client closes it, whether it read them idle or with the body).
    await closedOnServer(connectionOf.at(-1)!);
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

  it('keeps the connection for the next GET to the same host (keep-alive), after a Content-Length or a chunked body', async () => {
    const a = randomBytes(70_000);
    const b = randomBytes(90_000);
    answer = (s) => send(s, [`HTTP/1.1 200 OK\r\nContent-Length: ${a.length}\r\n\r\n`, a], false);
    const first = await fetchInto();
    answer = (s) => send(s, ['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n', `${b.length.toString(16)}\r\n`, b, '\r\n0\r\n\r\n'], false);
    const second = await fetchInto();
    answer = (s) => send(s, [`HTTP/1.1 200 OK\r\nContent-Length: ${a.length}\r\n\r\n`, a], false);
    const third = await fetchInto();
    expect([first, second, third].map((r) => r.out.sha1)).toEqual([sha1(a), sha1(b), sha1(a)]);
    expect(second.bytes.equals(b)).toBe(true);
    const [c1, c2, c3] = connectionOf.slice(-3);
    expect(c2).toBe(c1);
    expect(c3).toBe(c1);
    expect(heads.at(-1)).not.toMatch(/connection:/i);
    sockets[c1!]!.destroy();
    await closedOnServer(c1!);
  });

  it('a kept connection the host closed as the next GET went out: the GET is sent again once, on a new connection', async () => {
    const a = randomBytes(50_000);
    let calls = 0;
    answer = async (s) => {
      calls += 1;
      // The second request arrives on the kept connection: the host closes it without an answer.
      if (calls === 2) return void s.destroy();
      await send(s, [`HTTP/1.1 200 OK\r\nContent-Length: ${a.length}\r\n\r\n`, a], false);
    };
    await fetchInto();
    const { out, bytes } = await fetchInto();
    expect(out).toEqual({ status: 200, written: a.length, total: a.length, sha1: sha1(a) });
    expect(bytes.equals(a)).toBe(true);
    const [c1, c2, c3] = connectionOf.slice(-3);
    expect(c2).toBe(c1);
    expect(c3).not.toBe(c1);
    sockets[c3!]!.destroy();
    await closedOnServer(c3!);
  });

  it('an answer that says Connection: close is not kept: the next GET opens a new connection', async () => {
    const a = randomBytes(10_000);
    answer = (s) => send(s, [`HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: ${a.length}\r\n\r\n`, a], false);
    await fetchInto();
    const c1 = connectionOf.at(-1)!;
    await closedOnServer(c1);
    answer = (s) => send(s, [`HTTP/1.1 200 OK\r\nContent-Length: ${a.length}\r\n\r\n`, a]);
    expect((await fetchInto()).out.sha1).toBe(sha1(a));
    expect(connectionOf.at(-1)).not.toBe(c1);
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
