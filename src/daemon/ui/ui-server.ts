/**
 * The daemon's local web page (issue 31): an HTTP server on 127.0.0.1 only, at `daemon.ui.port` (0: a free port,
 * written to STATE_DIR/ui-port). It serves the page (page-assets.ts), a JSON API that sends the same control
 * requests as the shell commands (one implementation: the daemon's control handler), and a Server-Sent Events
 * stream fed by the daemon's status and operation events (no polling of the whole state).
 *
 * A page on loopback is reachable by every web page the user visits, so every request is checked, in order:
 *   1. Host must be 127.0.0.1:PORT or localhost:PORT, or 403 (DNS rebinding);
 *   2. the session cookie (HttpOnly, SameSite=Strict, set by a one-time login link from `boxsync ui`) must be
 *      valid, or 401; `GET /login?t=TOKEN` is the one way to get it, works once, and redirects to `/` so the
 *      token does not stay in the address bar;
 *   3. a request that changes anything (POST) must carry an Origin equal to the page's own and a JSON body, or
 *      403 (CSRF).
 * Every answer carries a strict Content-Security-Policy (no inline script, nothing from another origin). Paths
 * in requests must be inside a configured folder pair (the verbs check it again). Nothing here logs a URL's
 * query, so the login token never reaches a log.
 */
import { spawn } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { z } from 'zod';
import type { Logger } from '../../logger.js';
import type { ControlRequest, DaemonStatus } from '../control/control-protocol.js';
import { ItemCommandError, type ItemRequest } from '../control/item-protocol.js';
import { overallState } from './overview.js';
import type { PageAssets } from './page-assets.js';
import { UiAuth } from './ui-auth.js';

export const UI_PORT_FILE = 'ui-port';
const COOKIE = 'boxsync_ui';
const MAX_BODY_BYTES = 64 * 1024;
const MAX_STREAMS = 16;
/** Status pushes are coalesced: at most one per this many ms, however busy the engine is. */
const STATUS_PUSH_MS = 250;
const HEARTBEAT_MS = 20_000;

export const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export interface UiServerOptions {
  readonly port: number;
  readonly stateDir: string;
  readonly log: Logger;
  /** The daemon's control handler: the same code the control socket runs. */
  readonly control: (req: ControlRequest) => Promise<unknown>;
  /** The configured folder pairs' local paths, now (a reload may change them). */
  readonly roots: () => readonly string[];
  readonly assets: () => Promise<PageAssets>;
}

export interface OperationEvent {
  readonly root: string;
  readonly path: string;
  readonly kind: string;
  readonly reason: string;
  readonly ok: boolean;
  readonly error: string | null;
  readonly atMs: number;
}

export interface UiServer {
  readonly port: number;
  /** A one-time login link for `boxsync ui`. */
  loginUrl(): string;
  /** The daemon's status changed (a pass, a transfer's progress, a pause): push a fresh overview. */
  statusChanged(): void;
  /** An operation finished: push it to Recent changes. */
  operation(op: OperationEvent): void;
  close(): Promise<void>;
}

const bodies = {
  /** retry, pause and resume: an optional path inside a folder pair. */
  retry: z.strictObject({ path: z.string().min(1).max(8192).optional() }),
  confirm: z.strictObject({ id: z.string().min(1).max(1024) }),
  resolve: z.strictObject({ path: z.string().min(1).max(8192), keep: z.enum(['local', 'remote', 'both']) }),
  open: z.strictObject({ path: z.string().min(1).max(8192) }),
  selective: z.strictObject({ action: z.enum(['exclude', 'include']), path: z.string().min(1).max(8192) }),
  bwlimit: z.strictObject({ rate: z.string().min(1).max(40) }),
  notifications: z.strictObject({ on: z.boolean() }),
  none: z.strictObject({}),
};

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export async function startUiServer(opts: UiServerOptions): Promise<UiServer> {
  const auth = new UiAuth();
  const streams = new Set<ServerResponse>();
  const sockets = new Set<Socket>();
  let port = 0;
  let pushTimer: NodeJS.Timeout | null = null;
  let closed = false;

  const allowedHosts = (): string[] => [`127.0.0.1:${port}`, `localhost:${port}`];

  const send = (res: ServerResponse, status: number, type: string, body: string, extra: Record<string, string> = {}): void => {
    res.writeHead(status, { ...securityHeaders(), 'content-type': type, 'content-length': Buffer.byteLength(body), ...extra });
    res.end(body);
  };
  const json = (res: ServerResponse, status: number, value: unknown): void => send(res, status, 'application/json; charset=utf-8', JSON.stringify(value));

  const overview = async (): Promise<unknown> => {
    const status = (await opts.control({ verb: 'status' })) as DaemonStatus;
    return { status, overall: overallState(status) };
  };

  const pushStatus = (): void => {
    if (streams.size === 0 || closed) return;
    void overview().then(
      (o) => broadcast('status', o),
      (e: unknown) => broadcast('status-error', { message: e instanceof Error ? e.message : String(e) }),
    );
  };

  const broadcast = (event: string, data: unknown): void => {
    const frame = `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
    for (const s of streams) s.write(frame);
  };

  const insideRoots = (p: string): string => {
    const abs = resolve(p);
    if (!isAbsolute(p)) throw new HttpError(400, 'expected an absolute path');
    const ok = opts.roots().some((r) => {
      const rel = relative(r, abs);
      return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
    });
    if (!ok) throw new HttpError(403, 'that path is not inside any configured folder pair');
    return abs;
  };

  const item = (request: ItemRequest): Promise<unknown> => opts.control({ verb: 'item', request });

  const routes: Record<string, (body: unknown, url: URL) => Promise<unknown>> = {
    'GET /api/overview': () => overview(),
    'GET /api/history': async (_b, url) => {
      const limit = Math.min(Math.max(1, Number(url.searchParams.get('limit') ?? 200) || 200), 5000);
      return item({ command: 'history', limit });
    },
    'GET /api/conflicts': () => item({ command: 'conflicts' }),
    // With a path: the one folder pair holding it (issue 31's per-pair pause); the engine tells the pages itself.
    'POST /api/pause': (b) => {
      const { path } = parse(bodies.retry, b);
      return opts.control({ verb: 'pause', ...(path === undefined ? {} : { path: insideRoots(path) }) }).finally(pushStatus);
    },
    'POST /api/resume': (b) => {
      const { path } = parse(bodies.retry, b);
      return opts.control({ verb: 'resume', ...(path === undefined ? {} : { path: insideRoots(path) }) }).finally(pushStatus);
    },
    'POST /api/sync-now': () => opts.control({ verb: 'sync-now' }),
    // Live settings the engine does not report on its own: the open pages hear of the change at once.
    'POST /api/bwlimit': (b) => opts.control({ verb: 'bwlimit', rate: parse(bodies.bwlimit, b).rate }).finally(pushStatus),
    'POST /api/notifications': (b) => opts.control({ verb: 'notifications', on: parse(bodies.notifications, b).on }).finally(pushStatus),
    'POST /api/retry': (b) => {
      const { path } = parse(bodies.retry, b);
      return opts.control({ verb: 'retry', ...(path === undefined ? {} : { path: insideRoots(path) }) });
    },
    'POST /api/confirm': (b) => opts.control({ verb: 'confirm-guard', id: parse(bodies.confirm, b).id }),
    'POST /api/conflicts/resolve': (b) => {
      const { path, keep } = parse(bodies.resolve, b);
      return item({ command: 'conflicts-resolve', path: insideRoots(path), keep });
    },
    // Selective sync: the tree, one folder (one page of its subfolders) at a time; a change goes through the
    // daemon's `selective` verb (uploads first, nothing deleted on Box) and answers with its outcome.
    'GET /api/selective/tree': (_b, url) => {
      const offset = Math.max(0, Math.trunc(Number(url.searchParams.get('offset') ?? 0)) || 0);
      const limit = Math.min(Math.max(1, Math.trunc(Number(url.searchParams.get('limit') ?? 200)) || 200), 1000);
      return item({ command: 'selective-tree', path: insideRoots(url.searchParams.get('path') ?? ''), offset, limit });
    },
    'POST /api/selective': (b) => {
      const { action, path } = parse(bodies.selective, b);
      return opts.control({ verb: 'selective', action, path: insideRoots(path) });
    },
    'POST /api/open-folder': async (b) => {
      const folder = dirname(insideRoots(parse(bodies.open, b).path));
      openWithDesktop(folder, opts.log);
      return { message: `asked the desktop to open ${folder}` };
    },
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const host = req.headers.host ?? '';
    if (!allowedHosts().includes(host)) return send(res, 403, 'text/plain; charset=utf-8', 'forbidden: this page answers only at its loopback address\n');
    const url = new URL(req.url ?? '/', `http://${host}`);
    const method = req.method ?? 'GET';
    if (method === 'GET' && url.pathname === '/login') {
      const session = auth.redeem(url.searchParams.get('t') ?? '');
      if (session === null) {
        opts.log.warn('web page: a login link was refused (already used, expired or unknown); `boxsync ui` makes a new one');
        return send(res, 401, 'text/plain; charset=utf-8', 'This login link was already used or has expired. Run `boxsync ui` again.\n');
      }
      res.writeHead(303, { ...securityHeaders(), location: '/', 'set-cookie': `${COOKIE}=${session}; HttpOnly; SameSite=Strict; Path=/` });
      res.end();
      return;
    }
    if (!auth.validSession(cookieOf(req, COOKIE))) return send(res, 401, 'text/plain; charset=utf-8', 'Not logged in. Run `boxsync ui` to open this page.\n');
    if (method !== 'GET' && method !== 'HEAD') {
      if (req.headers.origin !== `http://${host}`) return send(res, 403, 'text/plain; charset=utf-8', 'forbidden: a request from another origin\n');
      if (!(req.headers['content-type'] ?? '').startsWith('application/json')) return send(res, 415, 'text/plain; charset=utf-8', 'expected application/json\n');
    }
    if (method === 'GET') {
      if (url.pathname === '/') return send(res, 200, 'text/html; charset=utf-8', INDEX_HTML);
      if (url.pathname === '/app.js') return send(res, 200, 'text/javascript; charset=utf-8', (await opts.assets()).js);
      if (url.pathname === '/app.css') return send(res, 200, 'text/css; charset=utf-8', (await opts.assets()).css);
      if (url.pathname.startsWith('/favicon/')) {
        const svg = faviconSvg(url.pathname.slice('/favicon/'.length).replace(/\.svg$/, ''));
        return svg === null ? send(res, 404, 'text/plain; charset=utf-8', 'not found\n') : send(res, 200, 'image/svg+xml', svg);
      }
      if (url.pathname === '/api/events') return openStream(req, res);
    }
    const route = routes[`${method} ${url.pathname}`];
    if (!route) return send(res, 404, 'text/plain; charset=utf-8', 'not found\n');
    let body: unknown = {};
    if (method === 'POST') body = await readJson(req);
    try {
      const result = await route(body, url);
      json(res, 200, result ?? {});
      if (method === 'POST') pushStatus();
    } catch (e) {
      if (e instanceof HttpError) return json(res, e.status, { error: e.message });
      // The verb refused or failed: its message is for the user (and already escaped where it names paths).
      json(res, e instanceof ItemCommandError && e.kind === 'outside-root' ? 403 : 409, { error: e instanceof Error ? e.message : String(e) });
    }
  };

  const openStream = (req: IncomingMessage, res: ServerResponse): void => {
    if (streams.size >= MAX_STREAMS) return send(res, 503, 'text/plain; charset=utf-8', 'too many open pages; close one\n');
    res.writeHead(200, { ...securityHeaders(), 'content-type': 'text/event-stream; charset=utf-8', connection: 'keep-alive' });
    res.write('retry: 2000\n\n');
    streams.add(res);
    const beat = setInterval(() => res.write(': keep-alive\n\n'), HEARTBEAT_MS);
    beat.unref();
    req.on('close', () => {
      clearInterval(beat);
      streams.delete(res);
    });
    void overview().then(
      (o) => res.write(`event: status\ndata: ${JSON.stringify(o)}\n\n`),
      () => undefined,
    );
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      const status = e instanceof HttpError ? e.status : 500;
      if (status === 500) opts.log.warn({ err: e, method: req.method, path: (req.url ?? '').split('?')[0] }, 'web page: a request failed');
      if (!res.headersSent) json(res, status, { error: e instanceof Error ? e.message : String(e) });
      else res.end();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(opts.port, '127.0.0.1', () => {
      server.off('error', fail);
      ok();
    });
  });
  port = (server.address() as AddressInfo).port;
  const portFile = join(opts.stateDir, UI_PORT_FILE);
  await writeFile(portFile, `${port}\n`, { mode: 0o600 });
  opts.log.info({ port }, `web page at http://127.0.0.1:${port}/ (\`boxsync ui\` opens it)`);

  return {
    port,
    loginUrl: () => `http://127.0.0.1:${port}/login?t=${auth.issueLogin()}`,
    statusChanged() {
      if (pushTimer !== null || streams.size === 0) return;
      pushTimer = setTimeout(() => {
        pushTimer = null;
        pushStatus();
      }, STATUS_PUSH_MS);
      pushTimer.unref();
    },
    operation(op) {
      if (streams.size > 0) broadcast('operation', op);
    },
    async close() {
      closed = true;
      if (pushTimer) clearTimeout(pushTimer);
      for (const s of streams) s.end();
      for (const s of sockets) s.destroy();
      await new Promise<void>((ok) => server.close(() => ok()));
      await rm(portFile, { force: true });
    },
  };
}

function securityHeaders(): Record<string, string> {
  return {
    'content-security-policy': CSP,
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'same-origin',
    'cache-control': 'no-store',
  };
}

function cookieOf(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, `request body over ${MAX_BODY_BYTES} bytes`);
    chunks.push(c);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new HttpError(400, 'the request body is not JSON');
  }
}

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const r = schema.safeParse(body);
  if (!r.success) throw new HttpError(400, `bad request: ${r.error.issues.map((i) => `${i.path.join('.') || 'body'} ${i.message}`).join('; ')}`);
  return r.data;
}

/** Open a folder in the user's file manager; a missing xdg-open is logged, never fatal. */
function openWithDesktop(folder: string, log: Logger): void {
  const child = spawn('xdg-open', [folder], { detached: true, stdio: 'ignore' });
  child.on('error', (e) => log.warn({ err: e }, 'web page: xdg-open could not be started to open a folder'));
  child.unref();
}

const STATE_COLOURS: Readonly<Record<string, string>> = {
  'up-to-date': '#2e7d32',
  syncing: '#1565c0',
  paused: '#757575',
  'needs-attention': '#e65100',
  offline: '#6d4c41',
  loading: '#9e9e9e',
};

function faviconSvg(state: string): string | null {
  const colour = STATE_COLOURS[state];
  if (colour === undefined) return null;
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><circle cx="8" cy="8" r="7" fill="${colour}"/></svg>`;
}

const INDEX_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>boxsync</title>
<link rel="icon" href="/favicon/loading.svg" type="image/svg+xml">
<link rel="stylesheet" href="/app.css">
<script src="/app.js" defer></script>
</head>
<body>
<div id="app"><p>Loading boxsync…</p></div>
</body>
</html>
`;
