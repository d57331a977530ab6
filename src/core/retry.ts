/**
 * Backoff delays. PURE: randomness comes in as a number in [0, 1), so callers (and tests) decide the source.
 *
 * Delay for attempt n (1-based) is min(maxMs, baseMs * factor^(n-1)), then "equal jitter": half fixed, half
 * random, so retries of many items spread out without ever retrying sooner than half the nominal delay.
 * A server's Retry-After wins when it asks for longer.
 */

export interface BackoffPolicy {
  readonly baseMs: number;
  readonly maxMs: number;
  readonly factor: number;
}

/** A backoff for a loop that gives up: at most `retries` tries after the first. */
export interface RetryPolicy extends BackoffPolicy {
  readonly retries: number;
}

/** Per-item defaults: 30 s, doubling, capped at 6 h (the journal failures table). */
export const itemBackoff: BackoffPolicy = { baseMs: 30_000, maxMs: 6 * 3600_000, factor: 2 };
/** The daemon's pass runner after a pass that threw: 1 s, doubling, capped at 5 min. */
export const passRunnerBackoff: BackoffPolicy = { baseMs: 1_000, maxMs: 300_000, factor: 2 };
/** One HTTP request's retries (5xx, network): 500 ms, doubling, capped at 5 min (Retry-After wins when longer). */
export const httpBackoff: BackoffPolicy = { baseMs: 500, maxMs: 300_000, factor: 2 };
/** The daemon's wake-up for hints a pass that did not converge left behind: 1 s, doubling, to 60 s. */
export const unfinishedPassBackoff: BackoffPolicy = { baseMs: 1_000, maxMs: 60_000, factor: 2 };
/** The event stream: broken or empty-handed long polls, a stream that brings no news: 1 s, doubling, to 60 s. */
export const streamBackoff: BackoffPolicy = { baseMs: 1_000, maxMs: 60_000, factor: 2 };
/**
 * A request refused with 429 is sent again when the pacer lets it (its wait: Retry-After, else the HTTP delays):
 * at least 7 more times (more when `maxAttempts` is set higher), so it ends within 35 min at the longest wait.
 */
export const rateLimitedRetry: RetryPolicy = { ...httpBackoff, retries: 7 };
/** Token refresh after a 5xx (a 429 waits in the pacer, for at least this long): 1 s, doubling, capped at 30 s; 3 retries. */
export const tokenRetry: RetryPolicy = { baseMs: 1_000, maxMs: 30_000, factor: 2, retries: 3 };
/** A malformed page (a folder listing, the event stream) is asked for again: the HTTP delays, 2 retries. */
export const malformedPageRetry: RetryPolicy = { ...httpBackoff, retries: 2 };
/** Opening a download's body after a 5xx or network failure (download.ts owns these): the HTTP delays, 4 retries. */
export const downloadOpenRetry: RetryPolicy = { ...httpBackoff, retries: 4 };
/**
 * Box answered 202, "not ready yet", to an upload session's commit or a download: its Retry-After, else 1 s
 * (no growth: the work is under way and the answer says so). 59 more commits; 30 more download requests.
 */
export const uploadCommitRetry: RetryPolicy = { baseMs: 1_000, maxMs: 1_000, factor: 1, retries: 59 };
export const downloadNotReadyRetry: RetryPolicy = { baseMs: 1_000, maxMs: 1_000, factor: 1, retries: 30 };
/** After a refused token refresh, looking for the pair another process is writing: every 200 ms, 5 looks. */
export const sharedTokenPoll: RetryPolicy = { baseMs: 200, maxMs: 200, factor: 1, retries: 4 };

/**
 * A download whose body broke after bytes arrived resumes at once with a Range request from the bytes already
 * written (data flowed, so nothing says Box needs a rest): 5 resumes, then the item's own backoff takes over.
 */
export const downloadResumeRetry: RetryPolicy = { baseMs: 0, maxMs: 0, factor: 1, retries: 5 };
/**
 * Taking the state-dir lock (a hard link): when the link exists but its holder is gone, the stale lock is removed
 * and the link tried again at once; 4 more tries, since another process may be doing the same.
 */
export const stateLockRetry: RetryPolicy = { baseMs: 0, maxMs: 0, factor: 1, retries: 4 };
/*
 * Not retries, so no policy here: the bounded waits that poll for a condition (the daemon's wait for its first
 * event from the sync stream, a session's wait for its passes to end), each with its deadline where it waits.
 */

/** A policy with its bounds overridden (tests and settings shrink or stretch them). */
export function withBounds(policy: BackoffPolicy, bounds: { minMs?: number | undefined; maxMs?: number | undefined }): BackoffPolicy {
  return { ...policy, baseMs: bounds.minMs ?? policy.baseMs, maxMs: bounds.maxMs ?? policy.maxMs };
}

export function nominalDelayMs(policy: BackoffPolicy, attempt: number): number {
  const n = Math.max(1, Math.floor(attempt));
  // Exponent capped so that large attempt counts never overflow to Infinity before the min().
  const raw = policy.baseMs * Math.pow(policy.factor, Math.min(n - 1, 60));
  return Math.min(policy.maxMs, raw);
}

export function backoffDelayMs(opts: {
  readonly policy: BackoffPolicy;
  readonly attempt: number;
  /** A number in [0, 1). */
  readonly random: number;
  readonly retryAfterMs?: number | undefined;
}): number {
  const nominal = nominalDelayMs(opts.policy, opts.attempt);
  const r = Math.min(Math.max(opts.random, 0), 1);
  const jittered = Math.round(nominal / 2 + (nominal / 2) * r);
  return Math.max(jittered, opts.retryAfterMs ?? 0);
}
