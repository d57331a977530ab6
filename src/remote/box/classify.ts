/**
 * The one classifier at the Box boundary: (HTTP status, Box error body, headers, network error) -> SyncError
 * with a stable code and a disposition. PURE: no I/O, no clock (an HTTP-date Retry-After needs `nowMs`).
 *
 * Box error bodies: the API answers `{type:"error", status, code, message, context_info, request_id}`; the OAuth
 * endpoints answer `{error, error_description}`. Switch on status first, then on code, and keep unknown codes
 * working (they fall into the status's general bucket).
 */
import type { SyncError } from '../../core/errors.js';
import { remoteError, type RemoteErrorCode } from './error-codes.js';
import { idString, kindOfWire } from './decode.js';
import type { WireError, WireItem } from './wire-types.js';
import { safeText } from '../../core/escape.js';

export type HeaderBag = Readonly<Record<string, string | readonly string[] | undefined>>;

export interface FailureFacts {
  /** What was attempted, for the message: "GET /files/123". Never contains tokens. */
  readonly what: string;
  /** HTTP status; undefined when no response arrived. */
  readonly status?: number;
  readonly body?: unknown;
  readonly headers?: HeaderBag;
  /** The network-level error (ECONNRESET, ETIMEDOUT, ...) when no response arrived. */
  readonly networkError?: { readonly code?: string; readonly message: string };
  /** Epoch ms, only needed to turn an HTTP-date Retry-After into milliseconds. */
  readonly nowMs?: number;
}

function header(h: HeaderBag | undefined, name: string): string | undefined {
  const v = h?.[name] ?? h?.[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : (v as string | undefined);
}

/** Retry-After in ms (seconds or an HTTP date), or undefined. */
export function retryAfterMs(headers: HeaderBag | undefined, nowMs?: number): number | undefined {
  const raw = header(headers, 'retry-after');
  if (raw === undefined || raw.trim() === '') return undefined;
  const secs = Number(raw);
  if (Number.isFinite(secs)) return Math.max(0, Math.round(secs * 1000));
  const at = Date.parse(raw);
  if (Number.isNaN(at) || nowMs === undefined) return undefined;
  return Math.max(0, at - nowMs);
}

function asWireError(body: unknown): WireError {
  return body !== null && typeof body === 'object' ? (body as WireError) : {};
}

function conflictOf(ctx: WireError['context_info']): WireItem | undefined {
  const c = ctx?.conflicts;
  if (!c) return undefined;
  return Array.isArray(c) ? (c as readonly WireItem[])[0] : (c as WireItem);
}

export function classify(f: FailureFacts): SyncError {
  const body = asWireError(f.body);
  const boxCode = body.code ?? body.error;
  const requestId = body.request_id ?? header(f.headers, 'box-request-id');
  const wait = retryAfterMs(f.headers, f.nowMs);
  const base: Record<string, unknown> = {
    ...(f.status === undefined ? {} : { status: f.status }),
    ...(boxCode === undefined ? {} : { boxCode }),
    ...(requestId === undefined ? {} : { requestId }),
  };
  // Box's own words are untrusted text: escaped, cut, and anything token-shaped redacted (a 403 can echo headers).
  const saidRaw = body.message ?? body.error_description;
  const said = saidRaw === undefined || saidRaw === null ? undefined : safeText(saidRaw, 300);
  const make = (code: RemoteErrorCode, text: string, extra: Record<string, unknown> = {}): SyncError =>
    remoteError(code, `${f.what}: ${text}${said ? ` (Box: ${said})` : ''}`, {
      ...(wait === undefined ? {} : { retryAfterMs: wait }),
      details: { ...base, ...extra },
    });

  if (f.status === undefined) {
    const net = f.networkError;
    return make('network', `network error ${net?.code ?? ''} ${safeText(net?.message ?? '', 300)}`.replace(/\s+/g, ' ').trim(), {
      ...(net?.code === undefined ? {} : { errno: net.code }),
    });
  }
  const s = f.status;
  switch (true) {
    case s === 400:
      switch (boxCode) {
        case 'invalid_grant':
          return make('auth_revoked', 'the Box authorization was revoked or has expired');
        case 'invalid_client':
        case 'unauthorized_client':
          return make('unauthorized', 'Box rejected the client id or secret');
        case 'item_name_invalid':
        case 'item_name_too_long':
          return make('name_invalid', 'Box does not accept this name');
        case 'bad_digest':
          return make('checksum_mismatch', 'Box computed a different SHA-1 for the uploaded bytes');
        case 'parts_mismatch':
          return make('operation_blocked', 'Box has not processed every uploaded part yet');
        default:
          return make('bad_request', 'Box rejected the request');
      }
    case s === 401:
      return make('unauthorized', 'Box did not accept the access token');
    case s === 403:
      switch (boxCode) {
        case 'access_denied_item_locked':
          return make('locked', 'the item is locked by another user');
        case 'storage_limit_exceeded':
          return make('quota_exceeded', 'the Box account is out of space');
        case 'file_size_limit_exceeded':
          return make('file_too_large', 'the file is larger than this Box account may upload');
        default:
          return make('forbidden', 'no permission for this item');
      }
    case s === 404:
      return make('not_found', 'the item is gone or not visible to this account');
    case s === 405:
      return make('bad_request', 'Box does not allow this method here (or the id is malformed)');
    case s === 409: {
      switch (boxCode) {
        case 'item_name_in_use': {
          const c = conflictOf(body.context_info);
          const extra: Record<string, unknown> = {};
          if (c && c.id !== undefined) {
            extra.conflictId = idString(c.id);
            const k = kindOfWire(c.type);
            if (k) extra.conflictKind = k;
            if (c.etag !== undefined && c.etag !== null) extra.conflictEtag = String(c.etag);
            if (c.sha1) extra.conflictSha1 = c.sha1.toLowerCase();
          }
          return make('item_name_in_use', 'an item with this name already exists', extra);
        }
        case 'operation_blocked_temporary':
        case 'name_temporarily_reserved':
          return make('operation_blocked', 'Box is busy with another operation on this tree');
        case 'storage_limit_exceeded':
          return make('quota_exceeded', 'the Box account is out of space');
        default:
          return make('conflict', 'Box reported a conflict');
      }
    }
    case s === 410:
      return make('session_expired', 'the upload session expired or failed');
    case s === 412:
      return make('precondition_failed', 'the item changed since it was read');
    case s === 413:
      return make('file_too_large', 'the request body is too large for Box');
    case s === 429:
      return make('rate_limited', 'Box rate limit reached');
    case s === 507:
      return make('quota_exceeded', 'Box storage is exhausted');
    case s >= 500:
      return make('server_error', `Box answered ${s}`);
    default:
      return make('bad_request', `unexpected HTTP ${s}`);
  }
}
