/**
 * box-server for a test: started in-process on port 0 and closed afterwards, plus a thin raw-HTTP client
 * (Node's global fetch) so tests see exactly the bytes, statuses and headers the server sends.
 *
 * Contract:
 * - `useBoxServer(opts)` registers vitest `beforeAll`/`afterAll` hooks and returns a getter-backed handle;
 *   read `.srv` inside tests only. One server per test file keeps ports and temp blobs isolated.
 * - `withBoxServer(opts, fn)` starts a server, runs `fn`, and always closes it (for one-off scenarios).
 * - `boxHttp(srv, token)` returns a client whose calls never throw on HTTP statuses: every call resolves to a
 *   `BoxReply` with `status`, lower-cased `headers`, the raw `text`, and `json` (parsed, or `undefined` when the
 *   body is empty or not JSON). Paths starting with `/` are resolved against `srv.apiUrl`; absolute URLs
 *   (session endpoints, download locations, the long-poll URL) are used as given. Redirects are never
 *   followed, so a download answers 302 and the test follows `Location` itself.
 */
import { afterAll, beforeAll } from 'vitest';
import { startBoxServer, type BoxServer, type BoxServerOptions } from '../../src/box-server/index.js';
import { loadOpenApi } from './openapi.js';

export const DEFAULT_TOKEN = 'T1';

export interface BoxServerHandle {
  readonly srv: BoxServer;
}

export function useBoxServer(opts: BoxServerOptions = {}): BoxServerHandle {
  let current: BoxServer | undefined;
  beforeAll(async () => {
    current = await startBoxServer({ port: 0, tokens: [DEFAULT_TOKEN], longPollTimeoutMs: 2000, ...opts });
  });
  afterAll(async () => {
    await current?.close();
    current = undefined;
  });
  return {
    get srv(): BoxServer {
      if (!current) throw new Error('box-server is not running: read .srv inside a test, after beforeAll');
      return current;
    },
  };
}

export async function withBoxServer<T>(opts: BoxServerOptions, fn: (srv: BoxServer) => Promise<T>): Promise<T> {
  const srv = await startBoxServer({ port: 0, tokens: [DEFAULT_TOKEN], longPollTimeoutMs: 2000, ...opts });
  try {
    return await fn(srv);
  } finally {
    await srv.close();
  }
}

export interface BoxReply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly text: string;
  readonly json: unknown;
  readonly url: string;
}

export interface RequestOptions {
  readonly headers?: Readonly<Record<string, string>>;
  /** Sent as JSON with `Content-Type: application/json` unless `rawBody` is given. */
  readonly body?: unknown;
  readonly rawBody?: string | Buffer | FormData | URLSearchParams | ReadableStream<Uint8Array>;
  /** Omit the Authorization header entirely (or send this token instead of the client's). */
  readonly token?: string | null;
  readonly signal?: AbortSignal;
}

export interface BoxHttp {
  readonly token: string | null;
  request(method: string, pathOrUrl: string, opts?: RequestOptions): Promise<BoxReply>;
  get(pathOrUrl: string, opts?: RequestOptions): Promise<BoxReply>;
  post(pathOrUrl: string, opts?: RequestOptions): Promise<BoxReply>;
  put(pathOrUrl: string, opts?: RequestOptions): Promise<BoxReply>;
  delete(pathOrUrl: string, opts?: RequestOptions): Promise<BoxReply>;
  options(pathOrUrl: string, opts?: RequestOptions): Promise<BoxReply>;
  /** Multipart upload (attributes part first, as Box requires) to `srv.uploadUrl + path`. */
  upload(path: string, attributes: unknown, content: string | Buffer, opts?: RequestOptions & { fileName?: string }): Promise<BoxReply>;
}

function headersOf(h: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  h.forEach((v, k) => {
    out[k.toLowerCase()] = v;
  });
  return out;
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export function boxHttp(srv: BoxServer, token: string | null = DEFAULT_TOKEN): BoxHttp {
  const request = async (method: string, pathOrUrl: string, opts: RequestOptions = {}): Promise<BoxReply> => {
    const url = /^https?:\/\//.test(pathOrUrl) ? pathOrUrl : `${srv.apiUrl}${pathOrUrl}`;
    const headers: Record<string, string> = { ...opts.headers };
    const bearer = opts.token === undefined ? token : opts.token;
    if (bearer !== null && headers.Authorization === undefined) headers.Authorization = `Bearer ${bearer}`;
    let body: RequestInit['body'];
    if (opts.rawBody !== undefined) {
      body = opts.rawBody as RequestInit['body'];
    } else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['Content-Type'] ??= 'application/json';
    }
    const init: RequestInit & { duplex?: 'half' } = { method, headers, body, redirect: 'manual', signal: opts.signal };
    if (body instanceof ReadableStream) init.duplex = 'half';
    const res = await fetch(url, init);
    const text = await res.text();
    return { status: res.status, headers: headersOf(res.headers), text, json: parseJson(text), url };
  };
  return {
    token,
    request,
    get: (p, o) => request('GET', p, o),
    post: (p, o) => request('POST', p, o),
    put: (p, o) => request('PUT', p, o),
    delete: (p, o) => request('DELETE', p, o),
    options: (p, o) => request('OPTIONS', p, o),
    upload: (path, attributes, content, opts = {}) => {
      const form = new FormData();
      form.append('attributes', JSON.stringify(attributes));
      form.append('file', new Blob([content]), opts.fileName ?? 'upload.bin');
      return request('POST', `${srv.uploadUrl}${path}`, { ...opts, rawBody: form });
    },
  };
}

/** Narrowing helper for JSON bodies in assertions. */
export function obj(v: unknown): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error(`expected a JSON object, got ${JSON.stringify(v)}`);
  return v as Record<string, unknown>;
}

export function arr(v: unknown): unknown[] {
  if (!Array.isArray(v)) throw new Error(`expected a JSON array, got ${JSON.stringify(v)}`);
  return v;
}

/**
 * Asserts a Box error reply: the status, the detailed `code` (one of `codes`), a body matching the spec's
 * error schema for that operation and status (`ClientError`; `OAuth2Error` on the token endpoint), a
 * `request_id` and a `box-request-id` header. Returns the body for further checks.
 */
export function expectBoxError(reply: BoxReply, method: string, status: number, codes: string | readonly string[]): Record<string, unknown> {
  const wanted = typeof codes === 'string' ? [codes] : codes;
  if (reply.status !== status) {
    throw new Error(`${method} ${reply.url}: expected ${status} ${wanted.join('|')}, got ${reply.status}: ${reply.text.slice(0, 400)}`);
  }
  const path = new URL(reply.url).pathname;
  const spec = loadOpenApi();
  const { schemaRef } = spec.expectValid({ method, path, status, body: reply.json });
  const body = obj(reply.json);
  if (schemaRef === '#/components/schemas/OAuth2Error') {
    if (!wanted.includes(String(body.error))) throw new Error(`expected OAuth error ${wanted.join('|')}, got ${reply.text}`);
    return body;
  }
  if (body.type !== 'error' || body.status !== status) throw new Error(`not a Box error body for ${status}: ${reply.text}`);
  if (!wanted.includes(String(body.code))) throw new Error(`expected code ${wanted.join('|')}, got ${String(body.code)}: ${reply.text}`);
  if (typeof body.request_id !== 'string' || body.request_id === '') throw new Error(`error body without request_id: ${reply.text}`);
  // Box sends the request id as a header too (box-node-sdk#157); clients log it.
  if (!reply.headers['box-request-id']) throw new Error(`error reply without a box-request-id header: ${reply.text}`);
  return body;
}
