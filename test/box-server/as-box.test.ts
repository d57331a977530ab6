// `boxsync server --as-box`: an offline Box for tools that cannot be given a base URL. A local CA (made once under
// --data, key 0600, reused), TLS for Box's host names, a CONNECT proxy on loopback that sends those hosts to
// box-server and refuses every other host (403, and no connection is made), and the lines to paste. Box's generated
// SDK, at its default base URLs in its own process, works through it with nothing but those lines.
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer, connect, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shellQuote, startAsBox, type AsBoxServer } from '../../src/box-server/as-box.js';
import { parseServerArgs } from '../../src/box-server/cli.js';
import { httpsCall, parseAsBoxLines, startAsBoxChild } from '../support/as-box.js';
import { repoRoot, runCli } from '../support/cli.js';
import { makeTempDir } from '../support/tmp.js';

const execFileAsync = promisify(execFile);

/** Send a raw proxy request and return the status line of the answer. */
function rawProxy(proxyUrl: string, text: string): Promise<string> {
  const { hostname, port } = new URL(proxyUrl);
  return new Promise((resolve, reject) => {
    const s = connect(Number(port), hostname);
    let got = '';
    s.on('data', (d: Buffer) => {
      got += d.toString('latin1');
      if (got.includes('\r\n')) {
        s.destroy();
        resolve(got.slice(0, got.indexOf('\r\n')));
      }
    });
    s.on('error', reject);
    s.on('close', () => resolve(got.split('\r\n')[0] ?? ''));
    s.setTimeout(10_000, () => s.destroy(new Error('no answer from the proxy')));
    s.write(text);
  });
}

describe('boxsync server --as-box arguments', () => {
  it('takes --as-box and --proxy-port, and refuses what cannot go with them', () => {
    expect(parseServerArgs(['--as-box']).asBox).toEqual({});
    expect(parseServerArgs(['--as-box', '--proxy-port', '0', '--data', '/tmp/x']).asBox).toEqual({ proxyPort: 0 });
    expect(parseServerArgs(['--token', 'T']).asBox).toBeUndefined();
    expect(() => parseServerArgs(['--proxy-port', '3128'])).toThrow('--proxy-port goes with --as-box');
    const cert = join(repoRoot, 'test/support/tls/localhost-test-only.crt');
    const key = join(repoRoot, 'test/support/tls/localhost-test-only.key');
    expect(() => parseServerArgs(['--as-box', '--tls-cert', cert, '--tls-key', key])).toThrow(/makes its own certificate/);
    expect(() => parseServerArgs(['--as-box', '--host', '0.0.0.0'])).toThrow(/127\.0\.0\.1 only/);
  });
});

describe('boxsync server --as-box (child process)', () => {
  it('prints the lines, serves through them, and on SIGTERM exits 0 and removes its temp CA (no --data)', async () => {
    const child = await startAsBoxChild([]);
    let stopped = false;
    try {
      expect(child.baseUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      expect(statSync(child.caFile.replace(/ca\.crt$/, 'ca.key')).mode & 0o777).toBe(0o600);
      const me = await httpsCall('GET', 'https://api.box.com/2.0/users/me', { ca: readFileSync(child.caFile), proxyUrl: child.proxyUrl, token: child.token });
      expect(me.status).toBe(200);
      expect(me.json().login).toBe('user@example.com');
      expect(await child.stop()).toBe(0);
      stopped = true;
      expect(existsSync(child.caFile)).toBe(false);
    } finally {
      if (!stopped) await child.stop();
    }
  });

  it('exits 2 without starting anything on arguments that cannot go together', async () => {
    const r = await runCli(['server', '--as-box', '--host', '0.0.0.0'], { timeoutMs: 60_000 });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--as-box listens on 127\.0\.0\.1 only: leave out --host; nothing was started/);
    expect(r.stdout).toBe('');
  });
});

describe('the printed paths', () => {
  it('paste as one word into bash, and carry no character that could act on the terminal', () => {
    for (const path of ['/tmp/plain/ca.crt', '/tmp/with space/ca.crt', "/tmp/it's/ca.crt", '/tmp/new\nline\u001b[2J/ca.crt', '/tmp/bidi\u202e/ca.crt', '/tmp/back\\slash $HOME/ca.crt']) {
      const quoted = shellQuote(path);
      expect(quoted, path).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202e]/);
      const echoed = spawnSync('bash', ['-c', `printf %s ${quoted}`], { encoding: 'utf8' });
      expect(echoed.stdout, path).toBe(path);
    }
  });
});

describe('startAsBox', () => {
  let box: AsBoxServer;
  let dataDir: { dir: string; cleanup: () => Promise<void> };
  let ca: Buffer;
  let fileId = '';

  beforeAll(async () => {
    dataDir = await makeTempDir('as-box-');
    box = await startAsBox({ dataDir: dataDir.dir, tokens: ['ASBOX-T'] });
    ca = readFileSync(box.caCertFile);
  });
  afterAll(async () => {
    await box?.close();
    await dataDir?.cleanup();
  });

  it('makes a CA under --data with its key 0600, and prints the lines to paste', () => {
    expect(box.caCertFile).toBe(join(dataDir.dir, 'ca', 'ca.crt'));
    expect(statSync(join(dataDir.dir, 'ca', 'ca.key')).mode & 0o777).toBe(0o600);
    expect(ca.toString()).toMatch(/^-----BEGIN CERTIFICATE-----/);
    const lines = parseAsBoxLines(`${box.server.baseUrl}\n${box.instructions}\n`);
    expect(lines).toEqual({ baseUrl: box.server.baseUrl, proxyUrl: box.proxyUrl, caFile: box.caCertFile, token: 'ASBOX-T' });
    expect(box.instructions).toContain(`export SSL_CERT_FILE=${box.caCertFile}`);
    expect(box.instructions).toContain(`# rclone: --ca-cert ${box.caCertFile}`);
    expect(box.proxyUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it("serves Box's host names through the proxy, and hands out Box's upload and download hosts", async () => {
    const via = { ca, proxyUrl: box.proxyUrl, token: 'ASBOX-T' };
    const me = await httpsCall('GET', 'https://api.box.com/2.0/users/me', via);
    expect(me.status).toBe(200);
    expect(me.json().login).toBe('user@example.com');

    const pre = await httpsCall('OPTIONS', 'https://api.box.com/2.0/files/content/', {
      ...via,
      body: JSON.stringify({ name: 'a.txt', parent: { id: '0' }, size: 5 }),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(pre.status, pre.body.toString()).toBe(200);
    expect(pre.json().upload_url).toBe('https://upload.box.com/api/2.0/files/content');

    const boundary = 'as-box-b0undary';
    const form = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="attributes"\r\n\r\n${JSON.stringify({ name: 'a.txt', parent: { id: '0' } })}\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nhello\r\n--${boundary}--\r\n`,
    );
    const up = await httpsCall('POST', 'https://upload.box.com/api/2.0/files/content', { ...via, body: form, headers: { 'Content-Type': `multipart/form-data; boundary=${boundary}` } });
    expect(up.status, up.body.toString()).toBe(201);
    fileId = String((up.json().entries as Array<Record<string, unknown>>)[0]!.id);

    const dl = await httpsCall('GET', `https://api.box.com/2.0/files/${fileId}/content`, via);
    expect(dl.status).toBe(302);
    const location = String(dl.headers.location);
    expect(location.startsWith('https://dl.boxcloud.com/')).toBe(true);
    const bytes = await httpsCall('GET', location, { ca, proxyUrl: box.proxyUrl });
    expect(bytes.body.toString()).toBe('hello');

    const session = await httpsCall('POST', 'https://upload.box.com/api/2.0/files/upload_sessions', {
      ...via,
      body: JSON.stringify({ folder_id: '0', file_size: 20_000_000, file_name: 'big.bin' }),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(session.status).toBe(201);
    for (const url of Object.values(session.json().session_endpoints as Record<string, string>)) expect(url.startsWith('https://upload.box.com/api/2.0/')).toBe(true);

    // account.box.com (the authorize page) and app.box.com answer over TLS with the same certificate.
    const authorize = await httpsCall('GET', 'https://account.box.com/api/oauth2/authorize?response_type=code&client_id=nobody', { ca, proxyUrl: box.proxyUrl });
    expect(authorize.status).toBeGreaterThanOrEqual(200);
    const app = await httpsCall('GET', 'https://app.box.com/2.0/users/me', via);
    expect(app.status).toBe(200);
    // box-server's own address is in the certificate too.
    expect((await httpsCall('GET', `${box.server.apiUrl}/users/me`, { ca, token: 'ASBOX-T' })).status).toBe(200);
  });

  it('refuses every other host with 403 and never connects to it', async () => {
    let reached = 0;
    const bystander = createServer((s) => {
      reached++;
      s.destroy();
    });
    await new Promise<void>((r) => bystander.listen(0, '127.0.0.1', () => r()));
    const port = (bystander.address() as AddressInfo).port;
    try {
      for (const target of ['example.com:443', `127.0.0.1:${port}`, `localhost:${port}`, 'api.box.com:80', `api.box.com:${port}`, 'api.box.com.evil.example:443', 'api.box.com']) {
        expect(await rawProxy(box.proxyUrl, `CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`), target).toMatch(/^HTTP\/1\.1 403/);
      }
      expect(await rawProxy(box.proxyUrl, `GET http://127.0.0.1:${port}/ HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`)).toMatch(/^HTTP\/1\.1 403/);
      expect(await rawProxy(box.proxyUrl, 'GET http://api.box.com/2.0/users/me HTTP/1.1\r\nHost: api.box.com\r\n\r\n')).toMatch(/^HTTP\/1\.1 403/);
      expect(reached).toBe(0);
    } finally {
      await new Promise<void>((r) => bystander.close(() => r()));
    }
  });

  it('is refused by a client that does not trust its CA', async () => {
    const other = readFileSync(join(repoRoot, 'test/support/tls/localhost-test-only.crt'));
    await expect(httpsCall('GET', 'https://api.box.com/2.0/users/me', { ca: other, proxyUrl: box.proxyUrl, token: 'ASBOX-T' })).rejects.toThrow(/certificate|issuer/i);
  });

  it("Box's generated SDK at its default base URLs works in its own process with only the printed lines", async () => {
    const { stdout } = await execFileAsync(process.execPath, [join(repoRoot, 'test/support/as-box-sdk-client.cjs'), 'sdk folder'], {
      cwd: repoRoot,
      timeout: 60_000,
      env: {
        ...process.env,
        HTTPS_PROXY: box.proxyUrl,
        https_proxy: box.proxyUrl,
        NO_PROXY: '',
        no_proxy: '',
        NODE_EXTRA_CA_CERTS: box.caCertFile,
        BOX_DEVELOPER_TOKEN: 'ASBOX-T',
      },
    });
    const seen = JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, unknown>;
    expect(seen.login).toBe('user@example.com');
    expect(seen.downloadedSha1).toBe(seen.uploadedSha1);
    expect(seen.listed).toEqual(['sdk.txt']);
    // What box-server holds.
    const actor = box.server.control.as('1');
    const folder = actor.findByPath('/sdk folder');
    expect(folder?.type).toBe('folder');
    expect(actor.listFolder(folder!.id).map((e) => e.name)).toEqual(['sdk.txt']);
    expect(actor.readFile(String(seen.fileId)).toString()).toBe('uploaded by the SDK at its default base URLs\n');
  });

  it('reuses the CA and the content under the same --data on the next start', async () => {
    const before = readFileSync(box.caCertFile, 'utf8');
    await box.close();
    box = await startAsBox({ dataDir: dataDir.dir, tokens: ['ASBOX-T'] });
    expect(readFileSync(box.caCertFile, 'utf8')).toBe(before);
    expect(statSync(join(dataDir.dir, 'ca', 'ca.key')).mode & 0o777).toBe(0o600);
    const back = await httpsCall('GET', `https://api.box.com/2.0/files/${fileId}?fields=name`, { ca, proxyUrl: box.proxyUrl, token: 'ASBOX-T' });
    expect(back.status).toBe(200);
    expect(back.json().name).toBe('a.txt');
  });
});
