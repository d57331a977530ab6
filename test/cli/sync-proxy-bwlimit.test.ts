/**
 * Enterprise networks (issue 15): every request goes through HTTPS_PROXY / HTTP_PROXY unless NO_PROXY names
 * the host; `--bwlimit` caps the total transfer rate. Real `sync --once` and `daemon` child processes (and
 * runSyncOnce in this process), a real forwarding proxy started here, box-server on port 0.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect } from 'node:net';
import { PassThrough, type Duplex } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Bandwidth, parseRate } from '../../src/remote/box/bandwidth.js';
import { runSyncOnce } from '../../src/cli/commands/sync.js';
import { createHarness } from '../daemon/daemon-harness.js';
import { runCli } from '../support/cli.js';
import { waitFor } from '../support/wait.js';
import { contentRequests, explain, readText, startSyncEnv, writeText, type SyncEnv } from './sync-harness.js';

const envs: SyncEnv[] = [];
const servers: Server[] = [];
afterEach(async () => {
  for (const e of envs.splice(0)) await e.close();
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A tunnelling proxy (CONNECT, as proxies for https are): records each tunnel's target and how many opened. */
async function connectProxy(): Promise<{ url: string; tunnels: string[] }> {
  const tunnels: string[] = [];
  const srv = createServer((_req, res) => res.writeHead(405).end());
  srv.on('connect', (req: IncomingMessage, client: Duplex, head: Buffer) => {
    tunnels.push(req.url ?? '');
    const [host, port] = (req.url ?? '').split(':');
    const upstream = connect(Number(port), host!, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    const drop = (): void => {
      upstream.destroy();
      client.destroy();
    };
    upstream.on('error', drop);
    client.on('error', drop);
  });
  servers.push(srv);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, tunnels };
}

describe('proxies and the bandwidth cap', () => {
  it('sends every request through HTTP_PROXY, and none when NO_PROXY names the host', async () => {
    const e = await startSyncEnv();
    envs.push(e);
    const proxy = await connectProxy();
    e.web.uploadFile(e.remoteRootId, 'via-proxy.txt', Buffer.from('through the proxy'));
    await writeText(join(e.mirror, 'up.txt'), 'up through the proxy');
    const r = await e.sync([], { env: { HTTP_PROXY: proxy.url, http_proxy: proxy.url, NO_PROXY: '', no_proxy: '' } });
    expect(r.code, explain(r)).toBe(0);
    expect(await readText(join(e.mirror, 'via-proxy.txt'))).toBe('through the proxy');
    expect(e.web.findByPath('Mirror/up.txt')).not.toBeNull();
    // Every connection boxsync opened went through the proxy, to box-server.
    const target = new URL(e.srv.baseUrl).host;
    expect(proxy.tunnels.length).toBeGreaterThan(0);
    expect(new Set(proxy.tunnels)).toEqual(new Set([target]));
    const direct = proxy.tunnels.length;

    await writeText(join(e.mirror, 'direct.txt'), 'no proxy');
    const host = new URL(e.srv.baseUrl).hostname;
    const r2 = await e.sync([], { env: { HTTP_PROXY: proxy.url, http_proxy: proxy.url, NO_PROXY: host, no_proxy: host } });
    expect(r2.code, explain(r2)).toBe(0);
    expect(e.web.findByPath('Mirror/direct.txt')).not.toBeNull();
    expect(proxy.tunnels.length).toBe(direct);
  });

  it('--bwlimit caps the transfer rate; a bad rate is refused before anything runs', async () => {
    const e = await startSyncEnv();
    envs.push(e);
    const body = randomBytes(768 * 1024);
    e.web.uploadFile(e.remoteRootId, 'capped.bin', body);
    const t0 = Date.now();
    const r = await e.sync(['--bwlimit', '256K']);
    const ms = Date.now() - t0;
    expect(r.code, explain(r)).toBe(0);
    const sha1 = (b: Buffer): string => createHash('sha1').update(b).digest('hex');
    expect(sha1(await readFile(join(e.mirror, 'capped.bin')))).toBe(sha1(body));
    // 768 KiB at 256 KiB/s with a 64 KiB burst cannot take less than (768 - 64) / 256 = 2.75 s.
    expect(ms).toBeGreaterThanOrEqual(2_750);
    const bad = await e.sync(['--bwlimit', 'fast']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--bwlimit: "fast" is not a rate/);
    const badDaemon = await runCli(['daemon', '--bwlimit', 'fast', '--config', e.configFile]);
    expect(badDaemon.code).toBe(2);
    expect(badDaemon.stderr).toMatch(/--bwlimit: "fast" is not a rate/);
  });

  it('the cap reaches compose as an option of runSyncOnce, with nothing in the environment', async () => {
    const e = await startSyncEnv();
    envs.push(e);
    const body = randomBytes(512 * 1024);
    e.web.uploadFile(e.remoteRootId, 'capped.bin', body);
    const err = new PassThrough();
    let log = '';
    err.on('data', (d: Buffer) => (log += d.toString()));
    const code = await runSyncOnce({ configPath: e.configFile, env: {}, out: new PassThrough(), err, tty: false, bandwidthBytesPerSec: 256 * 1024 });
    const doneMs = Date.now();
    expect(code, log).toBe(0);
    expect(await readFile(join(e.mirror, 'capped.bin'))).toEqual(body);
    // Timed from the download's first request (loading the engine into this process takes a while too):
    // 512 KiB at 256 KiB/s with a 64 KiB burst cannot take less than (512 - 64) / 256 = 1.75 s.
    const [started] = contentRequests(e.srv).downloads;
    expect(started).toBeDefined();
    expect(doneMs - started!.atMs).toBeGreaterThanOrEqual(1_750);
  });

  it('daemon --bwlimit caps the downloads of the daemon', async () => {
    const h = await createHarness();
    try {
      await h.start({ BOXSYNC_LOG_LEVEL: 'warn' }, ['--bwlimit', '256K']);
      const body = randomBytes(768 * 1024);
      h.web.uploadFile(h.rootId, 'capped.bin', body);
      const target = join(h.mirror, 'capped.bin');
      await waitFor(async () => (await readFile(target).catch(() => null))?.equals(body) === true, { timeoutMs: 30_000, intervalMs: 50, what: 'the capped download' });
      const arrivedMs = Date.now();
      // The one download: its first request (Box answers it with a redirect to the content) came before any byte.
      const [started] = contentRequests(h.srv).downloads;
      expect(started).toBeDefined();
      // From that request to the file in place: at least (768 - 64) / 256 = 2.75 s.
      expect(arrivedMs - started!.atMs).toBeGreaterThanOrEqual(2_750);
    } finally {
      await h.close();
    }
  });

  it('parseRate reads rclone-style rates; the bucket never lets more than the rate plus one burst through', async () => {
    expect(parseRate('500K')).toBe(500 * 1024);
    expect(parseRate('2M')).toBe(2 * 1024 * 1024);
    expect(parseRate('1.5M')).toBe(1.5 * 1024 * 1024);
    expect(parseRate('100')).toBe(100 * 1024);
    expect(parseRate('64KiB/s')).toBe(64 * 1024);
    expect(parseRate('off')).toBeNull();
    expect(() => parseRate('-1M')).toThrow(/not a rate/);
    let now = 0;
    const clock = { now: () => now, sleep: async (ms: number) => void (now += ms) };
    const bw = new Bandwidth(100 * 1024, clock);
    await bw.take(1024 * 1024);
    // 1 MiB at 100 KiB/s: at least (1024 - 25) / 100 s of (fake) time passed.
    expect(now).toBeGreaterThanOrEqual(((1024 - 25) / 100) * 1000 - 1);
    expect(now).toBeLessThanOrEqual((1024 / 100) * 1000 + 50);
  });

  it('a limit changed while a transfer waits (the daemon\'s bwlimit verb) is obeyed from the next chunk; off passes at once', async () => {
    let now = 0;
    const clock = { now: () => now, sleep: async (ms: number) => void (now += ms) };
    const bw = new Bandwidth(null, clock);
    await bw.take(10 * 1024 * 1024);
    expect(now).toBe(0);
    bw.setRate(100 * 1024);
    expect(bw.bytesPerSec).toBe(100 * 1024);
    await bw.take(1024 * 1024);
    const slow = now;
    // 1 MiB at 100 KiB/s, from an empty bucket: about 10 s of (fake) time.
    expect(slow).toBeGreaterThanOrEqual((1024 / 100) * 1000 - 300);
    bw.setRate(1024 * 1024);
    await bw.take(1024 * 1024);
    // Ten times the rate: about a tenth of the time.
    expect(now - slow).toBeLessThanOrEqual(1100);
    bw.setRate(null);
    const before = now;
    await bw.take(100 * 1024 * 1024);
    expect(now).toBe(before);
    expect(() => bw.setRate(0)).toThrow(/must be positive/);
  });
});
