/**
 * Streamed GETs (the download calls and the download host) over node:http(s) itself, not got.
 *
 * A first mirror of small files is two streamed GETs per file, and got's work per request (merging its options,
 * its hooks, its stream wrapper around the response) cost more main-thread time than a small file's bytes. A
 * streamed GET uses nothing got adds: BoxHttp never retries one (download.ts owns a download's retries and
 * resumes), never decompresses one (Range offsets and the SHA-1 are of the raw bytes), and never follows its
 * redirects. What got gave them is kept here: the same agents (the global keep-alive agents, or the proxy's from
 * proxy.ts), a connect timeout, and a stall timeout (no byte in either direction for `stallMs`, before the answer
 * or in the middle of the body).
 */
import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import https from 'node:https';

export interface RawGetOptions {
  readonly headers: Readonly<Record<string, string>>;
  /** The agent for this URL (a proxy's), or undefined for Node's global keep-alive agent. */
  readonly agent: http.Agent | undefined;
  readonly connectTimeoutMs: number;
  readonly stallMs: number;
  readonly signal: AbortSignal;
}

export interface RawResponse {
  readonly statusCode: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: IncomingMessage;
}

/** A failed request, shaped like got's RequestError where BoxHttp reads it: `code`, and `request.reusedSocket`. */
export interface RawRequestError extends Error {
  code?: string;
  request?: { reusedSocket: boolean };
}

function timedOut(what: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`Timeout awaiting '${what}'`), { code: 'ETIMEDOUT' });
}

/** Resolves with the answer's status line and headers; the body is the caller's to read or destroy. */
export function rawGet(url: URL, o: RawGetOptions): Promise<RawResponse> {
  return new Promise<RawResponse>((resolve, reject) => {
    const mod = url.protocol === 'https:' ? https : http;
    const req = mod.request(url, { method: 'GET', headers: o.headers, agent: o.agent, signal: o.signal });
    let answered = false;
    const connectTimer = setTimeout(() => req.destroy(timedOut('connect')), o.connectTimeoutMs);
    req.once('socket', (socket) => {
      if (socket.connecting) socket.once('connect', () => clearTimeout(connectTimer));
      else clearTimeout(connectTimer);
    });
    // The socket's idle timeout lasts until the answer's body is over: a stall then errors the body.
    req.setTimeout(o.stallMs, () => req.destroy(timedOut('socket')));
    req.on('error', (e: RawRequestError) => {
      clearTimeout(connectTimer);
      if (answered) return;
      e.request = { reusedSocket: req.reusedSocket };
      reject(e);
    });
    req.once('response', (res) => {
      clearTimeout(connectTimer);
      answered = true;
      resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body: res });
    });
    req.end();
  });
}

/** Bodies this small are read to their end when dropped, so their kept-alive connection can serve the next request. */
const SMALL_BODY = 64 * 1024;

/**
 * Drop an answer's body. A small one (a redirect's, a 202's) is read to its end and thrown away: destroying an
 * unread answer closes its connection, and every download then paid for a new TCP connection to the API. A big or
 * unknown-length one is destroyed.
 */
export function discardBody(body: IncomingMessage): void {
  const length = Number(body.headers['content-length']);
  if (body.complete || (Number.isFinite(length) && length <= SMALL_BODY)) {
    body.on('error', () => undefined);
    body.resume();
  } else body.destroy();
}
