// The SDK suite's network guard (test/sdk-suite/net-guard.ts) must refuse any host but box-server's port,
// for every client path (node:http as node-fetch uses it, and global fetch), and let box-server through.
import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startBoxServer } from '../../src/box-server/index.js';
import { installNetGuard, type NetGuard } from './net-guard.js';

let guard: NetGuard | undefined;
afterEach(() => {
  guard?.uninstall();
  guard = undefined;
});

function httpGet(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('sdk-suite network guard', () => {
  it('lets box-server through and refuses other hosts and ports, recording each refusal', async () => {
    const srv = await startBoxServer({ port: 0, tokens: ['G'] });
    try {
      const port = Number(new URL(srv.baseUrl).port);
      guard = installNetGuard(() => port);
      expect(await httpGet(`${srv.apiUrl}/users/me`)).toBe(401);
      await expect(httpGet('http://api.box.com/2.0/users/me')).rejects.toThrow(/network guard: refused a connection to api\.box\.com:80/);
      await expect(fetch('https://upload.box.com/api/2.0/files/content')).rejects.toThrow();
      await expect(httpGet(`http://127.0.0.1:${port === 65535 ? 1 : port + 1}/`)).rejects.toThrow(/network guard/);
      expect(guard.refused).toEqual(['api.box.com:80', 'upload.box.com:443', `127.0.0.1:${port === 65535 ? 1 : port + 1}`]);
    } finally {
      guard?.uninstall();
      await srv.close();
    }
  });

  it('after uninstall, connections are no longer checked', async () => {
    const srv = await startBoxServer({ port: 0, tokens: ['G'] });
    try {
      const port = Number(new URL(srv.baseUrl).port);
      const g = installNetGuard(() => (port === 65535 ? 1 : port + 1));
      await expect(httpGet(`${srv.apiUrl}/users/me`)).rejects.toThrow(/network guard/);
      g.uninstall();
      expect(await httpGet(`${srv.apiUrl}/users/me`)).toBe(401);
      expect(g.refused).toEqual([`127.0.0.1:${port}`]);
    } finally {
      await srv.close();
    }
  });
});
