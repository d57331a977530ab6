/**
 * Which folder pair holds an absolute local path: the one answer for `status PATH`, the item commands, `retry PATH`
 * and `selective`. Pure path arithmetic (no disk access): the caller resolves the path first.
 */
import { isAbsolute, relative } from 'node:path';

/** True when `inner` is `outer` or below it (both absolute). A name that merely starts with `..` is below. */
export function within(inner: string, outer: string): boolean {
  const rel = relative(outer, inner);
  return rel === '' || (rel !== '..' && !rel.startsWith('../') && !isAbsolute(rel));
}

export interface PairHit<R> {
  readonly pair: R;
  /** Its place in the list (folders[index] of the config). */
  readonly index: number;
  /** The path relative to the pair's folder; '' for that folder itself. */
  readonly rel: string;
}

/**
 * The pair whose `localPath` holds `absPath` (itself or below it), null when none does. The configuration refuses
 * pairs that contain each other (resolve.ts); should two still match, the deepest wins.
 */
export function pairHolding<R extends { readonly localPath: string }>(pairs: readonly R[], absPath: string): PairHit<R> | null {
  let best: PairHit<R> | null = null;
  pairs.forEach((pair, index) => {
    if (!within(absPath, pair.localPath)) return;
    if (best === null || pair.localPath.length > best.pair.localPath.length) best = { pair, index, rel: relative(pair.localPath, absPath) };
  });
  return best;
}
