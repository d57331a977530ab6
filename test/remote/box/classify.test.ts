import { describe, expect, it } from 'vitest';
import { classify, retryAfterMs, type FailureFacts } from '../../../src/remote/box/classify.js';

const boxError = (status: number, code: string, extra: Record<string, unknown> = {}): unknown => ({
  type: 'error',
  status,
  code,
  message: `message for ${code}`,
  request_id: 'req-1',
  ...extra,
});

type Row = readonly [name: string, facts: Omit<FailureFacts, 'what'>, code: string, disposition: string];

const table: readonly Row[] = [
  ['400 bad_request', { status: 400, body: boxError(400, 'bad_request') }, 'bad_request', 'skip'],
  ['400 item_name_invalid', { status: 400, body: boxError(400, 'item_name_invalid') }, 'name_invalid', 'skip'],
  ['400 item_name_too_long', { status: 400, body: boxError(400, 'item_name_too_long') }, 'name_invalid', 'skip'],
  ['400 bad_digest', { status: 400, body: boxError(400, 'bad_digest') }, 'checksum_mismatch', 'retry'],
  ['400 invalid_grant (OAuth body)', { status: 400, body: { error: 'invalid_grant', error_description: 'Refresh token has expired' } }, 'auth_revoked', 'fatal'],
  ['401', { status: 401, body: boxError(401, 'unauthorized') }, 'unauthorized', 'fatal'],
  ['403 forbidden', { status: 403, body: boxError(403, 'access_denied_insufficient_permissions') }, 'forbidden', 'skip'],
  ['403 locked', { status: 403, body: boxError(403, 'access_denied_item_locked') }, 'locked', 'retry'],
  ['403 storage_limit_exceeded', { status: 403, body: boxError(403, 'storage_limit_exceeded') }, 'quota_exceeded', 'skip'],
  ['403 file_size_limit_exceeded', { status: 403, body: boxError(403, 'file_size_limit_exceeded') }, 'file_too_large', 'skip'],
  ['404', { status: 404, body: boxError(404, 'not_found') }, 'not_found', 'replan'],
  ['404 without a body', { status: 404 }, 'not_found', 'replan'],
  ['409 item_name_in_use', { status: 409, body: boxError(409, 'item_name_in_use') }, 'item_name_in_use', 'replan'],
  ['409 operation_blocked_temporary', { status: 409, body: boxError(409, 'operation_blocked_temporary') }, 'operation_blocked', 'retry'],
  ['409 name_temporarily_reserved', { status: 409, body: boxError(409, 'name_temporarily_reserved') }, 'operation_blocked', 'retry'],
  ['409 unknown code', { status: 409, body: boxError(409, 'something_new') }, 'conflict', 'replan'],
  ['410 session_expired', { status: 410, body: boxError(410, 'session_expired') }, 'session_expired', 'retry'],
  ['412', { status: 412, body: boxError(412, 'precondition_failed') }, 'precondition_failed', 'replan'],
  ['413', { status: 413 }, 'file_too_large', 'skip'],
  ['429', { status: 429, body: boxError(429, 'rate_limit_exceeded'), headers: { 'retry-after': '7' } }, 'rate_limited', 'retry'],
  ['500', { status: 500, body: boxError(500, 'internal_server_error') }, 'server_error', 'retry'],
  ['502 non-JSON', { status: 502, body: undefined }, 'server_error', 'retry'],
  ['503 with Retry-After', { status: 503, headers: { 'retry-after': '3' } }, 'server_error', 'retry'],
  ['507', { status: 507 }, 'quota_exceeded', 'skip'],
  ['ECONNRESET', { networkError: { code: 'ECONNRESET', message: 'socket hang up' } }, 'network', 'retry'],
  ['ETIMEDOUT', { networkError: { code: 'ETIMEDOUT', message: 'timeout' } }, 'network', 'retry'],
];

describe('classify', () => {
  it.each(table)('%s', (_name, facts, code, disposition) => {
    const e = classify({ what: 'GET /files/1', ...facts });
    expect({ code: e.code, disposition: e.disposition }).toEqual({ code, disposition });
    expect(e.message).toContain('GET /files/1');
    expect(e.message).toMatch(/will retry|plan again|skipping|sync stopped/);
  });

  it('names the conflicting item of a 409, whether conflicts is an object (files) or an array (folders)', () => {
    const asObject = classify({
      what: 'POST /files/content',
      status: 409,
      body: boxError(409, 'item_name_in_use', { context_info: { conflicts: { type: 'file', id: '42', etag: '3', sha1: 'ABC' } } }),
    });
    expect(asObject.details).toMatchObject({ conflictId: '42', conflictKind: 'file', conflictEtag: '3', conflictSha1: 'abc', status: 409, boxCode: 'item_name_in_use', requestId: 'req-1' });
    const asArray = classify({
      what: 'POST /folders',
      status: 409,
      body: boxError(409, 'item_name_in_use', { context_info: { conflicts: [{ type: 'folder', id: 7, etag: 0 }] } }),
    });
    expect(asArray.details).toMatchObject({ conflictId: '7', conflictKind: 'folder', conflictEtag: '0' });
  });

  it('carries Retry-After in milliseconds, from seconds or an HTTP date', () => {
    expect(classify({ what: 'x', status: 429, headers: { 'retry-after': '7' } }).retryAfterMs).toBe(7000);
    expect(retryAfterMs({ 'retry-after': 'Thu, 01 Jan 2026 00:00:10 GMT' }, Date.parse('2026-01-01T00:00:00Z'))).toBe(10_000);
    expect(retryAfterMs({}, 0)).toBeUndefined();
    expect(classify({ what: 'x', status: 500 }).retryAfterMs).toBeUndefined();
  });

  it('takes the request id from the box-request-id header when the body has none', () => {
    expect(classify({ what: 'x', status: 500, headers: { 'box-request-id': 'hdr-9' } }).details.requestId).toBe('hdr-9');
  });
});
