/**
 * Download URLs: GET /files/{id}/content answers 302 to `${baseUrl}/dl/<signed>`, valid 15 minutes, needing no
 * bearer token (like dl.boxcloud.com). The signature is an HMAC over the blob, size and expiry with the server
 * secret. The /dl handler serves Range requests with 206 and streams from disk.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BoxError } from './box-error.js';
import { param, sendEmpty, type Ctx } from './http-context.js';
import type { VersionRec } from './state.js';
import { sendFileRange } from './send-file.js';
import type { Store } from './store.js';

export const downloadUrlLifetimeMs = 15 * 60_000;

interface Ticket {
  readonly b: string;
  readonly s: number;
  readonly e: number;
  readonly n: string;
}

function sign(store: Store, payload: string): string {
  return createHmac('sha256', store.state.secret).update(payload).digest('base64url');
}

export function downloadUrl(store: Store, version: VersionRec): string {
  const ticket: Ticket = { b: version.blobId, s: version.sizeBytes, e: store.now() + downloadUrlLifetimeMs, n: version.name };
  const payload = Buffer.from(JSON.stringify(ticket)).toString('base64url');
  return `${store.baseUrl('download')}/dl/${payload}.${sign(store, payload)}`;
}

function readTicket(store: Store, token: string): Ticket {
  const [payload, sig] = token.split('.');
  const expected = payload ? sign(store, payload) : '';
  if (!payload || !sig || sig.length !== expected.length || !timingSafeEqual(Buffer.from(sig), Buffer.from(expected))) {
    throw new BoxError(403, 'forbidden', 'This download URL is not valid; ask GET /files/{id}/content for a new one');
  }
  const t = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Ticket;
  if (t.e <= store.now()) throw new BoxError(403, 'forbidden', 'This download URL has expired; ask GET /files/{id}/content for a new one');
  return t;
}

function parseRange(header: string | undefined, size: number): { start: number; end: number } | null | 'bad' {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return 'bad';
  if (m[1] === '') {
    const n = Number(m[2]);
    if (n === 0) return 'bad';
    return { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size || end < start) return 'bad';
  return { start, end };
}

/** Destroys the socket once `bytes` of the body went out (the 'mid-body' reset fault; zip archives use it too). */
export function cutAfter(ctx: Ctx, bytes: number): Transform {
  let sent = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, cb) {
      if (sent + chunk.length >= bytes) {
        this.push(chunk.subarray(0, Math.max(0, bytes - sent)));
        sent = bytes;
        setImmediate(() => ctx.req.socket.destroy());
        cb();
        return;
      }
      sent += chunk.length;
      cb(null, chunk);
    },
  });
}

export async function serveDownload(ctx: Ctx): Promise<void> {
  const store = ctx.core.store;
  const t = readTicket(store, param(ctx, 0));
  const range = parseRange(ctx.req.headers.range, t.s);
  if (range === 'bad') return sendEmpty(ctx, 416, { 'Content-Range': `bytes */${t.s}` });
  const start = range?.start ?? 0;
  const end = range?.end ?? t.s - 1;
  const length = t.s === 0 ? 0 : end - start + 1;
  const headers: Record<string, string> = {
    'box-request-id': ctx.requestId,
    'Content-Type': 'application/octet-stream',
    'Content-Length': String(length),
    'Accept-Ranges': 'bytes',
    'Content-Disposition': `attachment; filename*=UTF-8''${encodeURIComponent(t.n)}`,
  };
  if (range) headers['Content-Range'] = `bytes ${start}-${end}/${t.s}`;
  ctx.res.writeHead(range ? 206 : 200, headers);
  if (ctx.req.method === 'HEAD' || length === 0) {
    ctx.res.end();
    return;
  }
  try {
    const path = store.blobs.filePath(t.b);
    if (ctx.midBodyReset) await pipeline(store.blobs.read(t.b, start, end), cutAfter(ctx, Math.floor(length / 2)), ctx.res);
    else if (path === null) await pipeline(store.blobs.read(t.b, start, end), ctx.res);
    // From a file: read into reused buffers (no allocation a chunk, see send-file.ts).
    else await sendFileRange(path, start, end, ctx.res);
  } catch {
    // The client went away or the reset fault cut the body: nothing more to send.
  }
}
