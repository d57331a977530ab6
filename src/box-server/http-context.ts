/**
 * One request as handlers see it, plus the helpers every route uses: query access, bounded body reading, JSON
 * parsing that answers Box-style errors, and response writers that honour a mid-body reset fault.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BoxError, OAuthError } from './box-error.js';
import type { ServerCore } from './core.js';
import { parseFields } from './serialize.js';
import type { ItemRec } from './state.js';

export const maxJsonBodyBytes = 1024 * 1024;

export interface Ctx {
  readonly core: ServerCore;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly url: URL;
  readonly requestId: string;
  /** Capture groups of the matched route. */
  params: readonly string[];
  /** The authenticated user (set by the router before protected routes run). */
  userId: string;
  /** The item a valid `BoxApi: shared_link=...` header names, if any. */
  sharedRoot: ItemRec | null;
  /** A 'mid-body' reset fault applies to this response. */
  midBodyReset: boolean;
  /** An injected fault's rewrite of this response's JSON body, and its extra headers. */
  transform?: { readonly fn: (body: unknown) => unknown; readonly headers: Record<string, string> };
}

export function query(ctx: Ctx, name: string): string | null {
  return ctx.url.searchParams.get(name);
}

/** `fields`, spaces around names ignored; a repeated `fields` parameter asks for all the names it lists. */
export function fieldsOf(ctx: Ctx): string[] | null {
  return parseFields(ctx.url.searchParams.getAll('fields').join(','));
}

/** A path parameter, percent-decoded (`/files/%31%32` is file 12); a malformed escape addresses nothing: 404. */
export function param(ctx: Ctx, i: number): string {
  const raw = ctx.params[i] ?? '';
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new BoxError(404, 'not_found', `Could not find the specified resource (${raw})`);
  }
}

export function intQuery(ctx: Ctx, name: string, dflt: number, min: number, max: number): number {
  const raw = query(ctx, name);
  if (raw === null || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new BoxError(400, 'bad_request', `'${name}' must be an integer of at least ${min}`);
  return Math.min(n, max);
}

export async function readBody(ctx: Ctx, maxBytes = maxJsonBodyBytes): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  let tooBig = false;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) tooBig = true;
    else chunks.push(chunk);
  }
  if (tooBig) throw new BoxError(413, 'request_entity_too_large', `Request body is larger than ${maxBytes} bytes; nothing was changed`);
  return Buffer.concat(chunks);
}

/** A JSON object body; empty body = {}. Malformed JSON or a non-JSON content type gives 400. */
export async function readJson(ctx: Ctx): Promise<Record<string, unknown>> {
  const type = ctx.req.headers['content-type'] ?? '';
  const body = await readBody(ctx);
  if (body.length === 0) return {};
  if (type !== '' && !/json/i.test(type)) {
    throw new BoxError(400, 'bad_request', `Content-Type must be application/json, got ${type}; nothing was changed`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw new BoxError(400, 'bad_request', 'Could not parse JSON body; nothing was changed');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new BoxError(400, 'bad_request', 'The JSON body must be an object; nothing was changed');
  }
  return parsed as Record<string, unknown>;
}

export function objField(body: Record<string, unknown>, name: string): Record<string, unknown> | undefined {
  const v = body[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) throw new BoxError(400, 'bad_request', `'${name}' must be an object`);
  return v as Record<string, unknown>;
}

export function idOf(obj: Record<string, unknown> | undefined, name: string): string | undefined {
  if (!obj) return undefined;
  const id = obj['id'];
  if (typeof id === 'number') return String(id);
  if (typeof id !== 'string' || id === '') throw new BoxError(400, 'bad_request', `'${name}.id' must be a string id`);
  return id;
}

function writeBody(ctx: Ctx, status: number, body: Buffer, headers: Record<string, string>): void {
  const res = ctx.res;
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { 'box-request-id': ctx.requestId, 'Content-Length': String(body.length), ...headers });
  if (ctx.midBodyReset && body.length > 1) {
    res.write(body.subarray(0, Math.floor(body.length / 2)), () => ctx.req.socket.destroy());
    return;
  }
  res.end(body);
}

export function sendJson(ctx: Ctx, status: number, body: unknown, headers: Record<string, string> = {}): void {
  ctx.core.store.flush();
  const t = ctx.transform;
  const out = t ? t.fn(body) : body;
  const extra = t ? t.headers : {};
  writeBody(ctx, status, Buffer.from(typeof out === 'string' && t ? out : JSON.stringify(out)), { 'Content-Type': 'application/json', ...headers, ...extra });
}

export function sendEmpty(ctx: Ctx, status: number, headers: Record<string, string> = {}): void {
  ctx.core.store.flush();
  if (ctx.res.headersSent || ctx.res.destroyed) return;
  ctx.res.writeHead(status, { 'box-request-id': ctx.requestId, ...headers });
  ctx.res.end();
}

export function sendError(ctx: Ctx, err: unknown): void {
  if (err instanceof OAuthError) {
    sendJson(ctx, err.status, { error: err.error, error_description: err.description });
    return;
  }
  const e = err instanceof BoxError ? err : new BoxError(500, 'internal_server_error', `Internal server error: ${err instanceof Error ? err.message : String(err)}`);
  sendJson(ctx, e.status, errorBody(e.status, e.code, e.message, e.contextInfo, ctx.requestId), e.headers);
}

export function errorBody(status: number, code: string, message: string, contextInfo: Record<string, unknown> | null, requestId: string): Record<string, unknown> {
  return {
    type: 'error',
    status,
    code,
    message,
    context_info: contextInfo,
    help_url: 'http://developers.box.com/docs/#errors',
    request_id: requestId,
  };
}
