// box-server over HTTPS (option `tls`, CLI --tls-cert/--tls-key): Box only speaks HTTPS, and clients (the
// official SDK's own tests among them) expect every URL Box hands out, download and long-poll URLs included,
// to be https://. The certificate is a test-only self-signed one for 127.0.0.1.
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseServerArgs } from '../../src/box-server/cli.js';
import { startBoxServer, type BoxServer } from '../../src/box-server/index.js';

const CERT_FILE = new URL('../support/tls/localhost-test-only.crt', import.meta.url).pathname;
const KEY_FILE = new URL('../support/tls/localhost-test-only.key', import.meta.url).pathname;
const cert = readFileSync(CERT_FILE);
const key = readFileSync(KEY_FILE);

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

function httpsCall(method: string, url: string, opts: { token?: string; body?: Buffer | string; headers?: Record<string, string>; ca?: Buffer } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
    // Node's client sends no framing for an OPTIONS body unless told its length.
    if (opts.body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(opts.body));
    const req = request(url, { method, headers, ca: opts.ca ?? cert }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

describe('box-server over HTTPS', () => {
  let srv: BoxServer;
  beforeAll(async () => {
    srv = await startBoxServer({ port: 0, tokens: ['TLS-T'], tls: { key, cert } });
  });
  afterAll(async () => {
    await srv?.close();
  });

  it('hands out https:// URLs for the API, uploads, downloads, upload sessions and long polling, and serves them', async () => {
    expect(srv.baseUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(srv.apiUrl.startsWith('https://')).toBe(true);
    expect(srv.uploadUrl.startsWith('https://')).toBe(true);

    const me = await httpsCall('GET', `${srv.apiUrl}/users/me`, { token: 'TLS-T' });
    expect(me.status).toBe(200);
    expect(JSON.parse(me.body.toString()).type).toBe('user');

    const boundary = 'b0undary';
    const form = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="attributes"\r\n\r\n${JSON.stringify({ name: 'a.txt', parent: { id: '0' } })}\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: application/octet-stream\r\n\r\nhello tls\r\n--${boundary}--\r\n`,
    );
    const up = await httpsCall('POST', `${srv.uploadUrl}/files/content`, {
      token: 'TLS-T',
      body: form,
      headers: { 'Content-Type': `multipart/form-data; boundary=${boundary}` },
    });
    expect(up.status).toBe(201);
    const fileId = JSON.parse(up.body.toString()).entries[0].id as string;

    const dl = await httpsCall('GET', `${srv.apiUrl}/files/${fileId}/content`, { token: 'TLS-T' });
    expect(dl.status).toBe(302);
    const location = String(dl.headers.location);
    expect(location.startsWith(`${srv.baseUrl}/`)).toBe(true);
    const content = await httpsCall('GET', location);
    expect(content.status).toBe(200);
    expect(content.body.toString()).toBe('hello tls');

    const pre = await httpsCall('OPTIONS', `${srv.apiUrl}/files/content`, {
      token: 'TLS-T',
      body: JSON.stringify({ name: 'b.txt', size: 3, parent: { id: '0' } }),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(pre.status).toBe(200);
    expect(JSON.parse(pre.body.toString()).upload_url.startsWith('https://')).toBe(true);

    const session = await httpsCall('POST', `${srv.uploadUrl}/files/upload_sessions`, {
      token: 'TLS-T',
      body: JSON.stringify({ folder_id: '0', file_size: 20_000_000, file_name: 'big.bin' }),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(session.status).toBe(201);
    for (const url of Object.values(JSON.parse(session.body.toString()).session_endpoints as Record<string, string>)) {
      expect(url.startsWith(`${srv.baseUrl}/`)).toBe(true);
    }

    const rt = await httpsCall('OPTIONS', `${srv.apiUrl}/events`, { token: 'TLS-T' });
    expect(rt.status).toBe(200);
    expect(JSON.parse(rt.body.toString()).entries[0].url.startsWith(`${srv.baseUrl}/subscribe?`)).toBe(true);
  });

  it('is refused by a client that does not trust its certificate', async () => {
    await expect(httpsCall('GET', `${srv.apiUrl}/users/me`, { token: 'TLS-T', ca: Buffer.from('') })).rejects.toThrow(/self.signed|certificate/i);
  });
});

describe('boxsync server --tls-cert/--tls-key', () => {
  it('reads both files, and refuses one without the other or an unreadable file', () => {
    const opts = parseServerArgs(['--tls-cert', CERT_FILE, '--tls-key', KEY_FILE]);
    expect(opts.tls?.cert.toString()).toBe(cert.toString());
    expect(opts.tls?.key.toString()).toBe(key.toString());
    expect(() => parseServerArgs(['--tls-cert', CERT_FILE])).toThrow('--tls-cert and --tls-key go together');
    expect(() => parseServerArgs(['--tls-key', KEY_FILE])).toThrow('--tls-cert and --tls-key go together');
    expect(() => parseServerArgs(['--tls-cert', '/nonexistent.crt', '--tls-key', KEY_FILE])).toThrow(/--tls-cert: cannot read/);
  });
});
