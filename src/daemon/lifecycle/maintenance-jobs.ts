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

export function maintainJournal(journal: Journal): string {
  if (!journal.maintain) return 'this journal has no maintenance step; skipped';
  journal.maintain();
  return 'WAL checkpointed and statistics optimized';
}
