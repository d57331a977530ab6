/**
 * A bigger young generation for big transfers (issue 29 point 4), and the small one everywhere else.
 *
 * The CLI holds V8's young generation at two semi-spaces of 1 MiB (`--semi-space-growth-factor=1`, heap-flags.ts)
 * for a small resident set. In a first mirror of 20,000 small files that made the main thread scavenge every
 * megabyte it allocated. So while many transfers start in a short time (BULK_TRANSFERS within BULK_WINDOW_MS: a
 * first mirror, not a daemon's edits), the transfer queue holds the young generation at BULK_SEMI_SPACE_MIB per
 * semi-space: V8 grows a semi-space by the growth factor at a scavenge that finds enough has survived since the last
 * growth, so holdYoungGeneration() sets the factor to the wanted size over the current one while the young
 * generation is smaller (`--optimize-for-size` makes V8 shrink it again at its full collections), and back to 1 as
 * soon as it has that size; releaseYoungGeneration() sets it back to 1 when the burst ends. V8's flags are the
 * process's: the file worker threads' young generations may grow to about that size too while the factor is up.
 * Measured (README.md, "Performance").
 *
 * Back to small: V8 shrinks the young generation at its full collections (`--optimize-for-size` asks for that), and
 * at the daemon's idle collections (daemon/lifecycle/idle-reclaim.ts). Small runs and an idle daemon never grow it.
 *
 * Only where heap-flags.ts set the growth factor (not when the user gave node flags of their own on the young
 * generation, nor with BOXSYNC_V8_HEAP=default).
 */
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

/** Transfers started within BULK_WINDOW_MS that make a big transfer (the queue holds only a few hundred at once). */
export const BULK_TRANSFERS = 500;
export const BULK_WINDOW_MS = 2_000;
/** The semi-space size held during a big transfer, in MiB (V8's own maximum is 16 on 64-bit). */
export const BULK_SEMI_SPACE_MIB = 4;
const MIB = 1024 * 1024;
const MAX_FACTOR = 4;

let allowed = false;

/** heap-flags.ts: the growth factor is boxsync's to set (true) or the user's / V8's (false). */
export function allowYoungGrowth(allow: boolean): void {
  allowed = allow;
}

/** One semi-space's size now, in bytes (V8's new space holds two). */
export function semiSpaceBytes(): number {
  return (getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0) / 2;
}

function setFactor(f: number): void {
  setFlagsFromString(`--semi-space-growth-factor=${f}`);
}

/** During a big transfer, every so often: let the young generation grow to BULK_SEMI_SPACE_MIB, never past it. */
export function holdYoungGeneration(): void {
  if (!allowed) return;
  const semi = semiSpaceBytes();
  // The whole factor that stays within the size (a factor below 2 would not grow it: 1 then), at most 4: V8 may
  // shrink the young generation between two looks, and a factor taken from the size before must not overshoot.
  const f = semi > 0 ? Math.min(MAX_FACTOR, Math.floor((BULK_SEMI_SPACE_MIB * MIB) / semi)) : 1;
  setFactor(f >= 2 ? f : 1);
}

/** The big transfer ended (or the queue emptied): the young generation grows no more. */
export function releaseYoungGeneration(): void {
  if (allowed) setFactor(1);
}
