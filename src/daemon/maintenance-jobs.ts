/**
 * The bodies of the housekeeping schedules. Each returns a one-line summary for the log.
 */
import { lstat, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Journal } from '../ports/journal.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** Forget upload sessions whose server-side session has expired: they can never resume. */
export function cleanExpiredUploadSessions(journal: Journal, nowMs: number = Date.now()): string {
  const expired = journal.uploadSessions.list().filter((s) => s.expiresAtMs <= nowMs);
  for (const s of expired) journal.uploadSessions.delete(s.key);
  return `dropped ${expired.length} expired upload session(s)`;
}

/**
 * Remove entries of the state-dir trash older than the retention. Age is taken from ctime, which rename(2)
 * sets when the entry is moved into the trash (mtime would be the file's own, possibly years old).
 */
export async function purgeLocalTrash(trashDir: string, retentionDays: number, nowMs: number = Date.now()): Promise<string> {
  let names: string[];
  try {
    names = await readdir(trashDir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 'local trash is empty';
    throw e;
  }
  const cutoff = nowMs - retentionDays * DAY_MS;
  let removed = 0;
  for (const name of names) {
    const p = join(trashDir, name);
    const st = await lstat(p).catch(() => undefined);
    if (!st || st.ctimeMs > cutoff) continue;
    await rm(p, { recursive: true, force: true });
    removed++;
  }
  return `removed ${removed} local-trash entr${removed === 1 ? 'y' : 'ies'} older than ${retentionDays} days from ${trashDir}`;
}

export function maintainJournal(journal: Journal): string {
  if (!journal.maintain) return 'this journal has no maintenance step; skipped';
  journal.maintain();
  return 'WAL checkpointed and statistics optimized';
}
