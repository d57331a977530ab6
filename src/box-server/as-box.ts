/**
 * `boxsync server --as-box`: an offline Box for tools that cannot be given a base URL (rclone, scripts, SDKs at
 * their defaults). box-server serves HTTPS with a certificate for Box's host names, signed by a local CA (made or
 * reused under `--data`, key 0600), and runs an HTTP CONNECT proxy on loopback that sends those hosts to it and
 * answers 403 to every other host: it never connects out. A tool run with HTTPS_PROXY pointing at the proxy and
 * trusting the CA talks to box-server while it believes it talks to Box.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBoxServer } from './index.js';
import { issueServerCert, loadOrCreateCa } from './local-ca.js';
import type { BoxServer, BoxServerOptions } from './types.js';

/** Box's host names that --as-box serves; anything else is refused by the proxy. */
export const boxHosts = ['api.box.com', 'upload.box.com', 'account.box.com', 'app.box.com', 'dl.boxcloud.com'] as const;

export interface AsBoxServer {
  readonly server: BoxServer;
  /** `http://127.0.0.1:PORT`: what HTTPS_PROXY is set to. */
  readonly proxyUrl: string;
  /** The CA certificate a client must trust (PEM). */
  readonly caCertFile: string;
  /** A developer token of user 1. */
  readonly token: string;
  /** The lines to paste into a shell (and rclone's flag), as printed by the CLI. */
  readonly instructions: string;
  close(): Promise<void>;
}

export interface AsBoxOptions {
  /** Port of the CONNECT proxy (default 0: any free port); always on 127.0.0.1. */
  proxyPort?: number;
}

/** `host:port` of a CONNECT request line, or null when it is not one. */
function connectTarget(target: string): { host: string; port: number } | null {
  const m = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(target);
  if (!m) return null;
  return { host: m[1]!.toLowerCase().replace(/\.$/, ''), port: Number(m[2]) };
}

/** The CONNECT proxy: Box's hosts on 443 go to box-server's port; everything else gets 403 and no connection. */
export function startBoxProxy(serverPort: number, port = 0): Promise<{ server: Server; url: string; close(): Promise<void> }> {
  const allowed = new Set<string>(boxHosts);
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    // Plain-HTTP proxying (GET http://...): Box speaks only HTTPS, and nothing leaves this machine.
    req.resume();
    res.writeHead(403, { 'Content-Type': 'text/plain', Connection: 'close' });
    res.end('boxsync server --as-box: this proxy only tunnels HTTPS (CONNECT) to Box host names\n');
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('connect', (req, client: Socket, head: Buffer) => {
    const target = connectTarget(req.url ?? '');
    client.on('error', () => client.destroy());
    if (!target || !allowed.has(target.host) || target.port !== 443) {
      client.end(`HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nboxsync server --as-box serves only ${boxHosts.join(', ')} on port 443; nothing else is reached\n`, () => client.destroy());
      return;
    }
    const upstream = connect(serverPort, '127.0.0.1');
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    let tunnelled = false;
    upstream.on('error', () => {
      // Before the tunnel is up the client still reads HTTP; after it, TLS bytes: then only the connection ends.
      if (!tunnelled && !client.destroyed) client.end('HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n', () => client.destroy());
      else client.destroy();
    });
    client.on('close', () => upstream.destroy());
    upstream.on('connect', () => {
      tunnelled = true;
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      resolve({
        server,
        url,
        close: () =>
          new Promise<void>((done) => {
            for (const s of sockets) s.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}

const unprintable = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * Quoted for a POSIX shell, so a path with spaces or quotes pastes as one word; one with control or bidi characters
 * is written as bash's $'...' with every such character escaped, so that nothing printed can act on the terminal.
 */
export function shellQuote(s: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(s)) return s;
  if (!new RegExp(unprintable.source).test(s)) return `'${s.replace(/'/g, `'\\''`)}'`;
  const escaped = s.replace(/[\\']/g, (c) => `\\${c}`).replace(unprintable, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
  return `$'${escaped}'`;
}

export function asBoxInstructions(proxyUrl: string, caCertFile: string, token: string): string {
  const ca = shellQuote(caCertFile);
  return [
    `# boxsync server --as-box: ${boxHosts.join(', ')} are served here, offline; the proxy refuses every other host.`,
    `export HTTPS_PROXY=${proxyUrl} https_proxy=${proxyUrl}`,
    `export SSL_CERT_FILE=${ca} CURL_CA_BUNDLE=${ca} REQUESTS_CA_BUNDLE=${ca}`,
    `export NODE_EXTRA_CA_CERTS=${ca}`,
    `# rclone: --ca-cert ${ca}, and the token below as the box remote's access_token`,
    `export BOX_DEVELOPER_TOKEN=${token}`,
  ].join('\n');
}

/**
 * Start box-server as Box: `opts.tls` and `opts.publicUrls` are set here. The CA lives in `<dataDir>/ca/` (reused
 * across runs), or in a private temp dir removed on close when there is no data dir.
 */
export async function startAsBox(opts: BoxServerOptions, asBox: AsBoxOptions = {}): Promise<AsBoxServer> {
  const privateCaDir = opts.dataDir ? null : mkdtempSync(join(tmpdir(), 'box-server-ca-'));
  const cleanup = (): void => {
    if (privateCaDir) rmSync(privateCaDir, { recursive: true, force: true });
  };
  try {
    const ca = loadOrCreateCa(opts.dataDir ? join(opts.dataDir, 'ca') : privateCaDir!);
    const tls = issueServerCert(ca, boxHosts);
    const token = opts.tokens?.[0] ?? randomBytes(24).toString('base64url');
    const server = await startBoxServer({
      ...opts,
      host: '127.0.0.1',
      tokens: opts.tokens?.length ? opts.tokens : [token],
      tls,
      publicUrls: { upload: 'https://upload.box.com', download: 'https://dl.boxcloud.com', realtime: 'https://api.box.com', api: 'https://api.box.com' },
    });
    let proxy;
    try {
      proxy = await startBoxProxy(Number(new URL(server.baseUrl).port), asBox.proxyPort ?? 0);
    } catch (e) {
      await server.close();
      throw e;
    }
    const p = proxy;
    return {
      server,
      proxyUrl: p.url,
      caCertFile: ca.certFile,
      token,
      instructions: asBoxInstructions(p.url, ca.certFile, token),
      async close() {
        await p.close();
        await server.close();
        cleanup();
      },
    };
  } catch (e) {
    cleanup();
    throw e;
  }
}
