/**
 * The bodies of the housekeeping schedules. Each returns a one-line summary for the log.
 */
import type { Journal } from '../../ports/journal.js';

/** Forget upload sessions whose server-side session has expired: they can never resume. */
export function cleanExpiredUploadSessions(journal: Journal, nowMs: number = Date.now()): string {
  const expired = journal.uploadSessions.list().filter((s) => s.expiresAtMs <= nowMs);
  for (const s of expired) journal.uploadSessions.delete(s.key);
  return `dropped ${expired.length} expired upload session(s)`;
}

export interface JournalMaintenanceOptions {
  /** Aborted when the daemon closes: the check's process is killed, the job ends at once. */
  readonly signal?: AbortSignal;
  /** Awaited after the check, before the checkpoint (the daemon: no pass running). */
  readonly beforeUpkeep?: () => Promise<void>;
  /** How many times the check runs (BOXSYNC_JOURNAL_CHECK_REPEAT, a test's knob: a long check on a small journal). */
  readonly repeat?: number;
}

/**
 * The journal's integrity check, then its WAL checkpoint and statistics. The check reads the whole file (seconds at
 * a million rows): in a process of its own when the journal offers it (maintainOffThread), so that the daemon keeps
 * answering, watching and syncing meanwhile; that process also runs `PRAGMA optimize` and a PASSIVE checkpoint (0.2-1.1 s
 * on the main thread at a million rows under load), and the main thread, between passes, only reloads the
 * statistics and truncates the WAL. A check that passes its time limit (check-process.ts CHECK_TIMEOUT_MS) fails
 * this run (logged; the journal is used as it is) and the next run checks again. A journal with neither is skipped.
 */
export async function maintainJournal(journal: Journal, opts: JournalMaintenanceOptions = {}): Promise<string> {
  if (journal.maintainOffThread) {
    const t = await journal.maintainOffThread(opts);
    return `integrity check passed, statistics optimized and WAL copied (${Math.round(t.checkMs)} ms in its own process); statistics reloaded and WAL truncated (${Math.round(t.upkeepMs)} ms on the main thread)`;
  }
  if (!journal.maintain) return 'this journal has no maintenance step; skipped';
  await opts.beforeUpkeep?.();
  journal.maintain();
  return 'WAL checkpointed and statistics optimized';
}

/** BOXSYNC_JOURNAL_CHECK_REPEAT: a whole number from 1 to 1,000,000, else 1. */
export function checkRepeat(env: NodeJS.ProcessEnv = process.env): number {
  const n = Number(env.BOXSYNC_JOURNAL_CHECK_REPEAT ?? 1);
  return Number.isInteger(n) && n >= 1 && n <= 1_000_000 ? n : 1;
}
