/**
 * The stable error codes a RemoteStore may throw, each with its one disposition (see core/errors.ts: 'retry'
 * goes to the failures table's backoff, 'skip' parks the item, 'replan' observes again, 'fatal' stops the run). Both the Box adapter's classifier and the in-memory fake build their
 * SyncErrors through `remoteError`, so the engine sees the same vocabulary from either.
 */
import { SyncError, type Disposition } from '../../core/errors.js';

export type RemoteErrorCode =
  | 'unauthorized'
  | 'auth_revoked'
  | 'forbidden'
  | 'locked'
  | 'not_found'
  | 'item_name_in_use'
  | 'name_invalid'
  | 'operation_blocked'
  | 'precondition_failed'
  | 'rate_limited'
  | 'server_error'
  | 'network'
  | 'checksum_mismatch'
  | 'quota_exceeded'
  | 'file_too_large'
  | 'stream_position_invalid'
  | 'session_expired'
  | 'bad_request'
  | 'conflict'
  | 'aborted'
  | 'malformed_response'
  | 'listing_incomplete'
  | 'remote_item_invalid'
  | 'too_long';

export function dispositionOf(code: RemoteErrorCode): Disposition {
  switch (code) {
    case 'unauthorized':
    case 'auth_revoked':
      return 'fatal';
    case 'forbidden':
    case 'name_invalid':
    case 'quota_exceeded':
    case 'file_too_large':
    case 'bad_request':
    case 'remote_item_invalid':
      return 'skip';
    case 'not_found':
    case 'item_name_in_use':
    case 'precondition_failed':
    case 'stream_position_invalid':
    case 'conflict':
      return 'replan';
    case 'locked':
    case 'operation_blocked':
    case 'rate_limited':
    case 'server_error':
    case 'network':
    case 'checksum_mismatch':
    case 'session_expired':
    case 'aborted':
    case 'malformed_response':
    case 'listing_incomplete':
    case 'too_long':
      return 'retry';
    default:
      return assertNeverCode(code);
  }
}

function assertNeverCode(x: never): never {
  throw new Error(`unknown remote error code ${String(x)}`);
}

/** What the engine will do next, appended to every message so that logs and `status` say it. */
function nextStep(code: RemoteErrorCode, retryAfterMs: number | undefined): string {
  switch (dispositionOf(code)) {
    case 'retry':
      return retryAfterMs === undefined ? 'will retry with backoff' : `will retry in ${Math.ceil(retryAfterMs / 1000)} s`;
    case 'replan':
      return 'will re-read the item and plan again';
    case 'skip':
      return 'skipping this item until it changes';
    case 'fatal':
      return code === 'auth_revoked' || code === 'unauthorized'
        ? 'sync stopped; run `boxsync login` again (or configure a fresh developer token)'
        : 'sync stopped';
  }
}

export interface RemoteErrorInit {
  readonly retryAfterMs?: number;
  readonly details?: Record<string, unknown>;
  readonly cause?: unknown;
}

export function remoteError(code: RemoteErrorCode, what: string, init: RemoteErrorInit = {}): SyncError {
  return new SyncError({
    code,
    disposition: dispositionOf(code),
    message: `${what}; ${nextStep(code, init.retryAfterMs)}`,
    ...(init.retryAfterMs === undefined ? {} : { retryAfterMs: init.retryAfterMs }),
    ...(init.details === undefined ? {} : { details: init.details }),
    ...(init.cause === undefined ? {} : { cause: init.cause }),
  });
}
