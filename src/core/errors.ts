/**
 * Error vocabulary shared by every layer. PURE.
 *
 * Every failure that crosses a port is a SyncError with a stable `code` and a `disposition` that tells the
 * engine what to do; the engine branches on disposition, never on HTTP status or errno:
 * - retry:  transient (network, 5xx, 429, a lock held by someone else for now). Try the same op later, with backoff.
 * - replan: the world changed under us (412 precondition failed, 409 name in use, a guard that no longer
 *           matches, 404 on something we expected). Re-observe and plan again; never overwrite.
 * - skip:   this item cannot be synced as it is (name Box refuses, file too large, no permission). Record it in
 *           the failures table, tell the user, and go on with the rest.
 * - fatal:  nothing can proceed (auth revoked, journal unusable, disk full, config wrong). Stop and say why.
 *
 * Messages say what happens next ("...; will retry in 30 s", "...; run `boxsync login` again").
 */
export type Disposition = 'retry' | 'replan' | 'skip' | 'fatal';

export class SyncError extends Error {
  readonly code: string;
  readonly disposition: Disposition;
  /** Milliseconds the server asked us to wait (Retry-After), when it said so. */
  readonly retryAfterMs: number | undefined;
  /** Extra structured facts (HTTP status, request id, conflicting item id, …). Never tokens. */
  readonly details: Readonly<Record<string, unknown>>;

  constructor(opts: {
    code: string;
    disposition: Disposition;
    message: string;
    retryAfterMs?: number;
    details?: Record<string, unknown>;
    cause?: unknown;
  }) {
    super(opts.message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'SyncError';
    this.code = opts.code;
    this.disposition = opts.disposition;
    this.retryAfterMs = opts.retryAfterMs;
    this.details = opts.details ?? {};
  }
}

export function isSyncError(e: unknown): e is SyncError {
  return e instanceof SyncError;
}

/** Code of the abort reason boxsync uses when it stops itself; see `shutdownReason`. */
export const SHUTDOWN_CODE = 'shutdown';

/**
 * The abort reason for a stop of the whole process or session (SIGTERM, a config reload, `engine.close()`), as
 * opposed to a cancel of the work itself. An adapter that sees an operation aborted with this reason checkpoints
 * instead of giving up: a resumable upload session keeps its server-side session and its persisted record, so
 * the next process resumes it from the last confirmed part. Any other abort reason is a cancel: the session is
 * aborted on the server and forgotten. Disposition `retry`: the interrupted operation is planned again next run.
 */
export function shutdownReason(message = 'boxsync is stopping; interrupted work resumes on the next start'): SyncError {
  return new SyncError({ code: SHUTDOWN_CODE, disposition: 'retry', message });
}

/** True when `reason` (an AbortSignal's reason) is a shutdown, not a cancel. */
export function isShutdownReason(reason: unknown): boolean {
  return isSyncError(reason) && reason.code === SHUTDOWN_CODE;
}
