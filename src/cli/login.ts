/**
 * `boxsync login`: the OAuth 2.0 authorization-code flow with a loopback redirect (as rclone's `authorize`).
 *
 * 1. Listen on http://127.0.0.1:<port>/ (the CLI's default: DEFAULT_LOGIN_PORT in cli/commands/login.ts; register
 *    exactly this redirect URI with the Box app).
 * 2. Print the authorize URL (client_id, redirect_uri, a random `state`) and open it with xdg-open when a
 *    desktop session is there.
 * 3. The browser comes back to the loopback server with `code` and `state`. A wrong state is refused and the
 *    login keeps waiting; an `error` from Box ends it.
 * 4. Trade the code at the token URL; the Box adapter's auth writes the pair atomically to auth.tokenFile, 0600.
 * 5. Check the token with GET /users/me and say who is logged in.
 *
 * Headless (`--headless`, or no desktop session): the URL can be opened on any machine. The browser then goes
 * to http://127.0.0.1:<port>/?code=...&state=..., which fails to load there; the user copies that address (or
 * just the code) from the address bar and pastes it here, as with `rclone authorize`. The pasted answer and the
 * loopback redirect race: whichever arrives first is used. A pasted URL with the wrong state is refused.
 *
 * Nothing is stored unless all of that succeeds. Returns the exit code (0 ok, 2 failed).
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import type { Config } from '../config/index.js';
import { silentLogger } from '../logger.js';
import { createBoxAdapter } from '../remote/box/index.js';

export interface LoginOptions {
  /** Where Box is and the OAuth client and token file to log in with (`boxsync init` passes the config it is about to write). */
  readonly config: Pick<Config, 'remote' | 'auth'>;
  readonly port: number;
  readonly openBrowser: boolean;
  readonly timeoutMs: number;
  readonly out: (line: string) => void;
  /** Also accept the redirect URL or the code pasted on this stream (default: when there is no desktop session). */
  readonly headless?: boolean;
  readonly input?: NodeJS.ReadableStream;
}

/** The code in a pasted answer: the whole redirect URL (state checked) or the bare code. */
export function codeFromPaste(text: string, state: string): { code: string } | { error: string } {
  const t = text.trim();
  if (t === '') return { error: 'nothing was pasted' };
  if (/^https?:\/\//i.test(t) || t.startsWith('/?') || t.startsWith('?')) {
    const u = new URL(t, 'http://127.0.0.1/');
    const error = u.searchParams.get('error');
    if (error) return { error: `Box refused the authorization: ${error}` };
    if (u.searchParams.get('state') !== state) return { error: 'the pasted address belongs to another login (its state does not match); paste the address from this login' };
    const code = u.searchParams.get('code');
    return code ? { code } : { error: 'the pasted address has no code= in it' };
  }
  if (!/^[\w.~-]{8,512}$/.test(t)) return { error: 'that is neither the redirect address nor an authorization code' };
  return { code: t };
}

export async function runLogin(opts: LoginOptions): Promise<number> {
  const { config } = opts;
  const auth = config.auth;
  if (!('clientId' in auth)) {
    opts.out('boxsync login: the config uses a developer token, which needs no login; set auth.clientId and auth.clientSecret to use OAuth');
    return 2;
  }
  const state = randomBytes(16).toString('hex');
  const callback = new LoopbackCallback(state);
  let server: Server;
  try {
    server = await callback.listen(opts.port);
  } catch (e) {
    opts.out(`boxsync login: cannot listen on 127.0.0.1:${opts.port} (${(e as NodeJS.ErrnoException).code ?? String(e)}); pass --port with a free port and register that redirect URI with your Box app`);
    return 2;
  }
  const redirectUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const url = new URL(config.remote.authorizeUrl);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', auth.clientId);
  url.searchParams.set('redirect_uri', redirectUri);
  url.searchParams.set('state', state);
  const headless = opts.headless ?? (!process.env.DISPLAY && !process.env.WAYLAND_DISPLAY);
  opts.out(`Open this URL in a browser and grant access (waiting on ${redirectUri}):`);
  opts.out(url.toString());
  if (headless) {
    opts.out('No browser here? Open it on any machine. Box then sends that browser to an address starting with');
    opts.out(`${redirectUri}?code= (it may fail to load): copy the whole address, or just the code, and paste it here:`);
  }
  if (opts.openBrowser && !headless) tryOpen(url.toString(), opts.out);
  const input = headless ? (opts.input ?? process.stdin) : null;
  const stopPaste = input ? acceptPaste(input, state, callback, opts.out) : () => undefined;

  try {
    const code = await callback.code(opts.timeoutMs);
    await mkdir(dirname(auth.tokenFile), { recursive: true, mode: 0o700 });
    const adapter = createBoxAdapter({
      apiUrl: config.remote.apiUrl,
      uploadUrl: config.remote.uploadUrl,
      tokenUrl: config.remote.tokenUrl,
      auth: { clientId: auth.clientId, clientSecret: auth.clientSecret, tokenFile: auth.tokenFile },
      logger: silentLogger,
    });
    try {
      await adapter.auth.exchangeCode(code, redirectUri);
      await chmod(auth.tokenFile, 0o600);
      const me = await adapter.store.account();
      const mode = (await stat(auth.tokenFile)).mode & 0o777;
      opts.out(`logged in as ${me.name} <${me.login}>; tokens stored in ${auth.tokenFile} (mode ${mode.toString(8)})`);
    } finally {
      await adapter.close();
    }
    return 0;
  } catch (e) {
    opts.out(`boxsync login: ${e instanceof Error ? e.message : String(e)}; nothing was stored, run \`boxsync login\` again`);
    return 2;
  } finally {
    stopPaste();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
}

/** Read pasted lines until one holds a code (a wrong one is explained and the wait goes on). */
function acceptPaste(input: NodeJS.ReadableStream, state: string, callback: LoopbackCallback, out: (line: string) => void): () => void {
  let buffer = '';
  const onData = (d: Buffer | string): void => {
    buffer += d.toString();
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (line.trim() === '') continue;
      const r = codeFromPaste(line, state);
      if ('code' in r) callback.deliver(r.code);
      else out(`boxsync login: ${r.error}; paste again, or press Ctrl-C`);
    }
  };
  input.on('data', onData);
  return () => {
    input.off('data', onData);
    (input as NodeJS.ReadableStream & { pause?: () => void; unref?: () => void }).pause?.();
    (input as { unref?: () => void }).unref?.();
  };
}

/** The loopback HTTP server that receives the browser's redirect. */
class LoopbackCallback {
  private settle: { resolve: (code: string) => void; reject: (e: Error) => void } | null = null;
  private result: { code: string } | { error: Error } | null = null;

  constructor(private readonly state: string) {}

  listen(port: number): Promise<Server> {
    const server = createServer((req, res) => {
      const u = new URL(req.url ?? '/', 'http://127.0.0.1');
      const send = (status: number, text: string): void => {
        res.writeHead(status, { 'Content-Type': 'text/html; charset=utf-8', Connection: 'close' });
        res.end(`<!doctype html><html><body><p>${text}</p></body></html>`);
      };
      if (u.pathname !== '/') return send(404, 'Not the boxsync login callback.');
      const error = u.searchParams.get('error');
      if (error) {
        send(400, 'Box did not grant access. You can close this tab.');
        return this.finish({ error: new Error(`Box refused the authorization: ${error}${u.searchParams.get('error_description') ? ` (${u.searchParams.get('error_description')})` : ''}`) });
      }
      if (u.searchParams.get('state') !== this.state) return send(400, 'This answer does not belong to the login that is waiting (state mismatch); it was ignored.');
      const code = u.searchParams.get('code');
      if (!code) return send(400, 'The answer has no authorization code; it was ignored.');
      send(200, 'boxsync is authorized. You can close this tab.');
      this.finish({ code });
    });
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve(server);
      });
    });
  }

  code(timeoutMs: number): Promise<string> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer from the browser within ${Math.round(timeoutMs / 1000)} s`)), timeoutMs);
      this.settle = {
        resolve: (c) => {
          clearTimeout(timer);
          resolve(c);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      if (this.result) this.finish(this.result);
    });
  }

  /** A code that arrived another way (pasted). */
  deliver(code: string): void {
    this.finish({ code });
  }

  private finish(r: { code: string } | { error: Error }): void {
    this.result ??= r;
    if (!this.settle) return;
    if ('code' in this.result) this.settle.resolve(this.result.code);
    else this.settle.reject(this.result.error);
  }
}

function tryOpen(url: string, out: (line: string) => void): void {
  if (!process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) return;
  if (spawnSync('sh', ['-c', 'command -v xdg-open'], { encoding: 'utf8' }).status !== 0) return;
  const child = spawn('xdg-open', [url], { detached: true, stdio: 'ignore' });
  child.on('error', () => out('could not start xdg-open; open the URL above yourself'));
  child.unref();
}
