/**
 * The request pipeline: record the request, apply injected faults (delay, error status, reset), rate limiting,
 * route matching (API routes under both `/2.0` and `/api/2.0`, so one port serves every Box host), bearer auth,
 * then the handler. Any thrown error becomes a Box error body and the server keeps serving.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BoxError } from './box-error.js';
import { requestLogCapacity, type ServerCore } from './core.js';
import { sendError, type Ctx } from './http-context.js';
import type { Route } from './route.js';
import { sharedItemOf } from './routes-shared.js';
import { addressedItemId, visibleTo } from './visibility.js';
import type { FaultRule } from './types.js';

const apiPrefix = /^\/(?:api\/)?2\.0(\/.*)$/;

const defaultCodes: Readonly<Record<number, string>> = {
  400: 'bad_request', 401: 'unauthorized', 403: 'forbidden', 404: 'not_found', 409: 'conflict', 412: 'precondition_failed',
  429: 'rate_limit_exceeded', 500: 'internal_server_error', 502: 'bad_gateway', 503: 'unavailable', 504: 'gateway_timeout',
};

function recordRequest(core: ServerCore, ctx: Ctx, startMs: number): void {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(ctx.req.headers)) if (k !== 'authorization' && v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
  const status = ctx.res.headersSent ? ctx.res.statusCode : 0;
  const query = ctx.url.searchParams.has('access_token') ? ctx.url.search.replace(/access_token=[^&]*/, 'access_token=REDACTED') : ctx.url.search;
  core.requestLog.push({ method: ctx.req.method ?? '', path: ctx.url.pathname, query, status, atMs: startMs, headers });
  if (core.requestLog.length > requestLogCapacity) core.requestLog.splice(0, core.requestLog.length - requestLogCapacity);
  if (core.logRequests) process.stderr.write(`box-server ${ctx.req.method} ${ctx.url.pathname} ${status} ${Date.now() - startMs}ms\n`);
}

function hasBody(req: IncomingMessage): boolean {
  return Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
}

/** Read about half the request body, then cut the connection (the 'mid-body' fault on uploads). */
function resetAfterHalfBody(ctx: Ctx): void {
  const total = Number(ctx.req.headers['content-length'] ?? 0);
  const half = total > 0 ? Math.floor(total / 2) : 64 * 1024;
  let seen = 0;
  ctx.req.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen >= half) ctx.req.socket.destroy();
  });
  ctx.req.on('end', () => ctx.req.socket.destroy());
}

/** A generated 200 body for the `stream` fault: bounded by sendBytes, or by the client closing. */
function streamBody(ctx: Ctx, spec: NonNullable<FaultRule['stream']>, headers: Record<string, string>): void {
  const chunk = Buffer.alloc(Math.max(1, spec.chunkBytes ?? 64 * 1024), 0x61);
  const head: Record<string, string> = { 'Content-Type': 'application/octet-stream', ...headers };
  if (spec.announceBytes !== undefined) head['Content-Length'] = String(spec.announceBytes);
  ctx.res.writeHead(200, head);
  let sent = 0;
  let timer: NodeJS.Timeout | undefined;
  const stop = (): void => {
    if (timer) clearTimeout(timer);
    timer = undefined;
  };
  ctx.res.on('close', stop);
  const next = (): void => {
    if (ctx.res.destroyed) return stop();
    if (spec.sendBytes !== 'forever' && sent >= spec.sendBytes) {
      ctx.req.socket.destroy();
      return;
    }
    const n = spec.sendBytes === 'forever' ? chunk.length : Math.min(chunk.length, spec.sendBytes - sent);
    sent += n;
    const ok = ctx.res.write(chunk.subarray(0, n));
    const go = (): void => {
      timer = setTimeout(next, spec.everyMs ?? 0);
    };
    if (ok) go();
    else ctx.res.once('drain', go);
  };
  next();
}

async function applyFault(ctx: Ctx, rule: FaultRule): Promise<boolean> {
  if (rule.hook) await rule.hook({ method: ctx.req.method ?? 'GET', path: ctx.url.pathname });
  if (rule.delayMs) await new Promise((r) => setTimeout(r, rule.delayMs));
  if (rule.hang) {
    ctx.req.resume();
    return true;
  }
  const headers: Record<string, string> = { ...(rule.retryAfterSec !== undefined ? { 'Retry-After': String(rule.retryAfterSec) } : {}), ...rule.headers };
  if (rule.stream) {
    ctx.req.resume();
    streamBody(ctx, rule.stream, headers);
    return true;
  }
  if (rule.body !== undefined || rule.rawBody !== undefined || rule.respond !== undefined) {
    ctx.req.resume();
    const text = rule.rawBody ?? JSON.stringify(rule.respond ? rule.respond({ path: ctx.url.pathname, query: ctx.url.searchParams }) : rule.body);
    const body = Buffer.from(text);
    ctx.res.writeHead(rule.status ?? 200, { 'box-request-id': ctx.requestId, 'Content-Type': 'application/json', 'Content-Length': String(body.length), ...headers });
    ctx.res.end(body);
    return true;
  }
  if (rule.transform) {
    const fn = rule.transform;
    const query = ctx.url.searchParams;
    const path = ctx.url.pathname;
    ctx.transform = { fn: (b) => fn(b, { path, query }), headers };
  }
  if (rule.reset === 'before-response') {
    ctx.req.socket.destroy();
    return true;
  }
  if (rule.reset === 'mid-body') {
    if (hasBody(ctx.req)) {
      resetAfterHalfBody(ctx);
      return true;
    }
    ctx.midBodyReset = true;
  }
  if (rule.status) {
    const errHeaders: Record<string, string> = { ...headers, ...(rule.retryAfterSec !== undefined ? { 'Retry-After': String(rule.retryAfterSec) } : {}) };
    ctx.req.resume();
    sendError(ctx, new BoxError(rule.status, rule.code ?? defaultCodes[rule.status] ?? 'error', `Injected fault: ${rule.status} ${rule.code ?? ''}`.trim(), null, errHeaders));
    return true;
  }
  return false;
}

export function createHandler(core: ServerCore, routes: readonly Route[]): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const startMs = Date.now();
    const ctx: Ctx = {
      core,
      req,
      res,
      url: new URL(req.url ?? '/', 'http://box-server.invalid'),
      requestId: randomBytes(8).toString('hex'),
      params: [],
      userId: '',
      sharedRoot: null,
      midBodyReset: false,
    };
    res.on('close', () => recordRequest(core, ctx, startMs));
    handle(core, ctx, routes).catch((e: unknown) => {
      req.resume();
      sendError(ctx, e);
    });
  };
}

async function handle(core: ServerCore, ctx: Ctx, routes: readonly Route[]): Promise<void> {
  const pathname = ctx.url.pathname;
  const method = (ctx.req.method ?? 'GET').toUpperCase();
  if (!pathname.startsWith('/_control/')) {
    const rule = core.faults.take(method, pathname);
    if (rule && (await applyFault(ctx, rule))) return;
  }
  const apiPath = withoutTrailingSlash(apiPrefix.exec(pathname)?.[1]);
  const openPath = withoutTrailingSlash(pathname)!;
  let pathMatched = false;
  for (const route of routes) {
    const target = route.kind === 'api' ? apiPath : openPath;
    if (target === undefined) continue;
    const m = route.pattern.exec(target);
    if (!m) continue;
    pathMatched = true;
    // HEAD is served wherever GET is, as on Box: the same status and headers, no body (Node's server drops it).
    if (route.method !== method && !(route.method === 'GET' && method === 'HEAD')) continue;
    ctx.params = m.slice(1);
    if (route.kind === 'api') {
      ctx.userId = actingUser(core, core.auth.authenticate(ctx.req.headers.authorization ?? bearerFromQuery(ctx)), ctx.req.headers['as-user']);
      ctx.sharedRoot = sharedItemOf(core.store, ctx.req.headers['boxapi']);
      const addressed = addressedItemId(decodedPath(target));
      const item = addressed === null ? undefined : core.store.item(addressed);
      if (item && !visibleTo(core.store, ctx.userId, item, ctx.sharedRoot)) throw new BoxError(404, 'not_found', `Could not find the specified resource (${addressed})`);
      core.boxLimits?.check(ctx.userId, method, target, Date.now());
      const wait = core.faults.rateLimited(ctx.userId, Date.now());
      if (wait !== null) {
        throw new BoxError(429, 'rate_limit_exceeded', `Request rate limit exceeded, please try again after ${wait} seconds`, null, { 'Retry-After': String(wait) });
      }
    }
    await route.handler(ctx);
    return;
  }
  if (pathMatched) throw new BoxError(405, 'method_not_allowed', `Method ${method} is not allowed on ${pathname}`);
  throw new BoxError(404, 'not_found', `No such endpoint: ${method} ${pathname}`);
}

/**
 * Box answers `/2.0/files/content/` as `/2.0/files/content` (rclone preflights uploads that way): one trailing slash
 * is dropped before matching (never from `/` itself).
 */
function withoutTrailingSlash(path: string | undefined): string | undefined {
  return path !== undefined && path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

/** The path with percent-escapes decoded (`/files/%31%32` addresses item 12), or as it is when they are malformed. */
function decodedPath(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

function bearerFromQuery(ctx: Ctx): string | undefined {
  const t = ctx.url.searchParams.get('access_token');
  return t ? `Bearer ${t}` : undefined;
}

/** `As-User: <id>`: an enterprise admin acts on behalf of another user, as on Box; anyone else gets 403. */
function actingUser(core: ServerCore, userId: string, asUser: string | string[] | undefined): string {
  if (asUser === undefined || asUser === '') return userId;
  const target = Array.isArray(asUser) ? asUser[0]! : asUser;
  if (!core.store.user(userId).enterpriseAdmin) {
    throw new BoxError(403, 'access_denied_insufficient_permissions', 'As-User needs an enterprise admin token');
  }
  if (!core.store.state.users[target]) throw new BoxError(400, 'bad_request', `As-User names no user: ${target}`);
  return target;
}
