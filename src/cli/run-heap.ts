/**
 * The heap policy of one `sync --once` (issue 29 point 7; heap-flags.ts sets the flags). A run over a journal that is
 * already there (not a first mirror), of up to RELAX_MAX_JOURNAL_BYTES, runs with V8's defaults: a short pass of
 * edits, or none, is mostly the walk and the journal's rows, whose garbage the small heap's frequent full
 * collections cost a fifth of the run's CPU. Once
 * the pass plans big transfers (BIG_PASS_OPS operations or BIG_PASS_BYTES queued or in flight, as the engine's status
 * shows them after planning), the small heap's flags are set again for the rest of the run: a first mirror resumed,
 * or many new files on Box, keeps the resident set of a first mirror (issue 29 point 5). A first mirror (no journal
 * yet) keeps them from the start. The daemon never relaxes them (its idle resident set).
 */
import { statSync } from 'node:fs';
import type { StatusReport } from '../engine/types.js';
import { relaxHeapFlags, tightenHeapFlags } from './heap-flags.js';

/** Operations queued or in flight that make a pass big (a first mirror of 200 files is small; of 20,000, big). */
export const BIG_PASS_OPS = 1_000;
/** Bytes queued or in flight that make a pass big. */
export const BIG_PASS_BYTES = 256 * 1024 * 1024;

/**
 * The biggest journal a run relaxes over: about 200,000 files (62 MB at 100,000, 624 MB at a million). Relaxed, the
 * old generation may grow to several times what is live, and what is live grows with the tree: a no-change run at a
 * million files keeps the small heap (issue 29 point 6: under 400 MB).
 */
export const RELAX_MAX_JOURNAL_BYTES = 128 * 1024 * 1024;

/** Does a run over this journal (its size in bytes; null: none yet) start with V8's defaults? */
export function relaxedAtStart(journalBytes: number | null): boolean {
  return journalBytes !== null && journalBytes > 0 && journalBytes <= RELAX_MAX_JOURNAL_BYTES;
}

/** Does this status show a big pass (the small heap's flags wanted again)? */
export function bigPass(s: Pick<StatusReport, 'roots'>): boolean {
  let ops = 0;
  let bytes = 0;
  for (const r of s.roots) {
    ops += r.queued.ops + r.inFlight.length;
    bytes += r.queued.bytes;
    for (const t of r.inFlight) bytes += t.totalBytes - t.doneBytes;
  }
  return ops >= BIG_PASS_OPS || bytes >= BIG_PASS_BYTES;
}

/**
 * Relax the heap flags for a run over the journal at `journalPath` when it is already there; the returned status
 * listener sets them again at the first big-pass status.
 */
export function runHeapPolicy(journalPath: string): (s: StatusReport) => void {
  let size: number | null = null;
  try {
    size = statSync(journalPath).size;
  } catch {
    // no journal yet: a first mirror
  }
  if (!relaxedAtStart(size)) return () => {};
  relaxHeapFlags();
  let tight = false;
  return (s) => {
    if (tight || !bigPass(s)) return;
    tight = true;
    tightenHeapFlags();
  };
}
