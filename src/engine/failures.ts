/**
 * The item layer of retry (above BoxHttp's retries of one request and the transfer queue's rate layer): every failed operation becomes a row in the journal's failures
 * table, keyed by root and path, so one bad file never stalls the rest and the backoff survives restarts.
 *
 * - retry:  exponential backoff with jitter from the attempt count (core/retry.ts itemBackoff: 30 s doubling
 *           to 6 h), or the server's Retry-After when longer;
 * - skip:   parked until the item changes (the observer clears the row when it sees a change);
 * - replan: recorded with a short delay, so a replan that keeps failing cannot spin a pass.
 */
import type { SyncError } from '../core/errors.js';
import type { RelPath, RootId } from '../core/model.js';
import type { FailureRecord, Journal } from '../ports/journal.js';
import { backoffDelayMs, itemBackoff } from '../core/retry.js';
import { parkClassOf } from '../core/park-class.js';

const REPLAN_DELAY_MS = 60_000;
/** A 'skip' failure waits for a change, not for a time: far enough in the future never to elapse by itself. */
export const PARKED_MS = 100 * 365 * 24 * 60 * 60_000;


export function recordOpFailure(
  journal: Journal,
  f: { root: RootId; path: RelPath; error: SyncError; nowMs: number; random: number; probe?: string | null },
): FailureRecord {
  const previous = journal.getFailure(f.root, f.path);
  const attempts = (previous?.attempts ?? 0) + 1;
  const disposition = f.error.disposition === 'fatal' ? 'retry' : f.error.disposition;
  const parkClass = parkClassOf(f.error.code);
  // A park on a condition that can clear is re-checked by the daemon when this backoff elapses (park-recheck.ts).
  const backoff = (): number => backoffDelayMs({ policy: itemBackoff, attempt: attempts, random: f.random, retryAfterMs: f.error.retryAfterMs });
  const delayMs = disposition === 'skip' ? (parkClass === 'condition' ? backoff() : PARKED_MS) : disposition === 'replan' ? REPLAN_DELAY_MS : backoff();
  const record: FailureRecord = {
    root: f.root,
    path: f.path,
    code: f.error.code,
    message: f.error.message,
    attempts,
    nextRetryAtMs: f.nowMs + delayMs,
    disposition,
    parkClass,
    probe: f.probe ?? null,
    firstFailedAtMs: previous?.firstFailedAtMs ?? f.nowMs,
  };
  journal.recordFailure(record);
  return record;
}

/** Paths the planner must leave alone for now: parked skips and retries whose backoff has not elapsed. */
export function deferredPaths(journal: Journal, root: RootId, nowMs: number): Set<RelPath> {
  const out = new Set<RelPath>();
  for (const f of journal.failures(root)) if (f.disposition === 'skip' || f.nextRetryAtMs > nowMs) out.add(f.path);
  return out;
}
