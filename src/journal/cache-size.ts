/**
 * The journal's page cache for one `sync --once` (issue 29 point 5): as big as the journal file was when the run
 * opened it, between 6,000 KiB and better-sqlite3's 16,000 KiB. A cache bigger than the file holds nothing more,
 * and what a run writes (a first mirror writes the whole journal, reading little of it back) need not stay cached:
 * at 100,000 files a first mirror's pages filled the 16,000 KiB cache and set the peak RSS about 10 MiB higher
 * (README, Performance). SQLite's own default of 2,000 KiB (the daemon's) took 4 MiB more off that peak but cost
 * that mirror about a tenth more CPU (its B-tree pages read again and again). A run over a journal of 16 MB or
 * more (a no-change run at 100,000 files and up) keeps the whole 16,000 KiB for the reads it repeats.
 */
import { statSync } from 'node:fs';

export const RUN_CACHE_MIN_KIB = 6_000;
export const RUN_CACHE_MAX_KIB = 16_000;

/** The cache for a run over the journal at `path` (absent: a first run, the least). */
export function runJournalCacheKiB(path: string): number {
  let kib = 0;
  try {
    kib = statSync(path).size / 1024;
  } catch {
    // no journal yet: a first run
  }
  return Math.round(Math.min(RUN_CACHE_MAX_KIB, Math.max(RUN_CACHE_MIN_KIB, kib)));
}
