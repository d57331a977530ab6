/**
 * The heap policy of one `sync --once` (issue 29 point 7; heap-flags.ts sets the flags). A run over a journal that is
 * already there (not a first mirror), of up to RELAX_MAX_JOURNAL_BYTES, runs with V8's defaults: a short pass of
 * edits, or none, is mostly the walk and the journal's rows, whose garbage the small heap's frequent full
 * collections cost a fifth of the run's CPU. Once
 * the run's plans come to big transfers (BIG_PASS_OPS operations or BIG_PASS_BYTES in all, as the engine announces
 * each plan before its operations start: EngineEvents.onPlanned), the small heap's flags are set again for the rest
 * of the run: a first mirror resumed,
 * or many new files on Box, keeps the resident set of a first mirror (issue 29 point 5). A first mirror (no journal
 * yet) keeps them from the start. The daemon never relaxes them (its idle resident set).
 */
import { statSync } from 'node:fs';
import { relaxHeapFlags, tightenHeapFlags } from './heap-flags.js';

/** Operations planned in a run that make it big (a first mirror of 200 files is small; of 20,000, big). */
export const BIG_PASS_OPS = 1_000;
/** Bytes the transfers planned in a run move that make it big. */
export const BIG_PASS_BYTES = 256 * 1024 * 1024;

/** What a run planned so far (the sum of its plans, every root and pass). */
export interface Planned {
  readonly ops: number;
  readonly bytes: number;
}

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

/** Do the plans so far make a big run (the small heap's flags wanted again)? */
export function bigPass(p: Planned): boolean {
  return p.ops >= BIG_PASS_OPS || p.bytes >= BIG_PASS_BYTES;
}

/**
 * Relax the heap flags for a run over the journal at `journalPath` when it is already there; the returned plan
 * listener (EngineEvents.onPlanned) sets them again once the run's plans come to a big run.
 */
export function runHeapPolicy(journalPath: string): (p: Planned) => void {
  let size: number | null = null;
  try {
    size = statSync(journalPath).size;
  } catch {
    // no journal yet: a first mirror
  }
  if (!relaxedAtStart(size)) return () => {};
  relaxHeapFlags();
  let tight = false;
  let ops = 0;
  let bytes = 0;
  return (p) => {
    ops += p.ops;
    bytes += p.bytes;
    if (tight || !bigPass({ ops, bytes })) return;
    tight = true;
    tightenHeapFlags();
  };
}
