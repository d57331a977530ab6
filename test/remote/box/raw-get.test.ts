/**
 * The streamed-GET transport (remote/box/raw-get.ts) against a real local HTTP server that misbehaves: a server
 * that accepts and never answers, one that stops in the middle of a body, and a caller that aborts. Each must end
 * within a bound, never hang (the end-to-end download paths are in tree-download.test.ts and sync-bounds).
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from 'node:http';
import { discardBody, rawGet } from '../../../src/remote/box/raw-get.js';

describe('rawGet', () => {
  let server: Server;
  let base: string;
  const open: ServerResponse[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      open.push(res);
      if (req.url === '/silent') return; // accepted, never answered
      if (req.url === '/half') {
        res.writeHead(200, { 'content-length': '1000' });
        res.write(Buffer.alloc(500, 1)); // then nothing more
        return;
      }
      if (req.url === '/redirect') {
        res.writeHead(302, { location: '/ok', 'content-length': '0', 'x-port': String(req.socket.remotePort) });
        res.end();
        return;
      }
      res.writeHead(200, { 'content-length': '5', 'x-echo-agent': req.headers['user-agent'] ?? '', 'x-port': String(req.socket.remotePort) });
      res.end('hello');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const r of open) r.destroy();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const opts = (signal = new AbortController().signal) => ({ headers: { 'user-agent': 'test-agent' }, agent: undefined, connectTimeoutMs: 2000, stallMs: 200, signal });

  it('returns the status, the headers and the body as a stream', async () => {
    const r = await rawGet(new URL(`${base}/ok`), opts());
    expect(r.statusCode).toBe(200);
    expect(r.headers['x-echo-agent']).toBe('test-agent');
    const chunks: Buffer[] = [];
    for await (const c of r.body) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe('hello');
  });

  it('a dropped small body (a redirect) keeps its connection for the next request; a destroyed one does not', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const o = { ...opts(), agent };
      const first = await rawGet(new URL(`${base}/redirect`), o);
      expect(first.statusCode).toBe(302);
      discardBody(first.body);
      const second = await rawGet(new URL(`${base}/ok`), o);
      second.body.resume();
      expect(second.headers['x-port']).toBe(first.headers['x-port']);
      await new Promise((r) => second.body.once('end', r));
      const third = await rawGet(new URL(`${base}/redirect`), o);
      third.body.destroy();
      const fourth = await rawGet(new URL(`${base}/ok`), o);
      fourth.body.resume();
      expect(fourth.headers['x-port']).not.toBe(third.headers['x-port']);
    } finally {
      agent.destroy();
    }
  });

  it('a server that accepts and never answers fails with ETIMEDOUT after the stall timeout', async () => {
    const t0 = Date.now();
    const e = (await rawGet(new URL(`${base}/silent`), opts()).then(
      () => undefined,
      (x: unknown) => x,
    )) as NodeJS.ErrnoException | undefined;
    expect(e?.code).toBe('ETIMEDOUT');
    // A hang guard (>= 20x the 200 ms stall timeout), not a speed check.
    expect(Date.now() - t0).toBeLessThan(5_000);
  });

  it('a body that stops in the middle errors its reader after the stall timeout', async () => {
    const r = await rawGet(new URL(`${base}/half`), opts());
    let got = 0;
    const t0 = Date.now();
    const e = await (async () => {
      for await (const c of r.body) got += (c as Buffer).length;
    })().then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(Error);
    expect(got).toBe(500);
    // A hang guard (>= 20x the 200 ms stall timeout), not a speed check.
    expect(Date.now() - t0).toBeLessThan(5_000);
  });

  it('an abort ends a request that waits for its answer, at once', async () => {
    const ctrl = new AbortController();
    const p = rawGet(new URL(`${base}/silent`), { ...opts(ctrl.signal), stallMs: 60_000 });
    setTimeout(() => ctrl.abort(), 20);
    const t0 = Date.now();
    const e = (await p.then(
      () => undefined,
      (x: unknown) => x,
    )) as Error | undefined;
    expect(e?.name).toBe('AbortError');
    expect(Date.now() - t0).toBeLessThan(1000);
  });
});
