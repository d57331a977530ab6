/**
 * Path ranges for subtree statements. Under the BINARY collation the descendants of `p` are exactly the paths in
 * [p + '/', p + '0'): '0' is the byte right after '/', so the range stops before siblings like "p0" and never
 * includes "p.txt" or "p copy" (those sort before "p/"). One indexed range scan on (root, path), never a full scan.
 */
import type { RelPath } from '../core/model.js';

export interface SubtreeRange {
  /** Inclusive lower bound of the descendants. */
  readonly lower: string;
  /** Exclusive upper bound of the descendants. */
  readonly upper: string;
}

export function descendantsRange(path: RelPath): SubtreeRange {
  return { lower: `${path}/`, upper: `${path}0` };
}

/** Named parameters of the subtree statements: the rows of `path` itself and of the range below it. */
export interface SubtreeParams {
  readonly root: string;
  readonly path: string;
  readonly lower: string;
  readonly upper: string;
}

/** Throws when a subtree move could not be done by rename(2) either: into itself, or onto an ancestor. */
export function assertMovable(from: RelPath, to: RelPath): void {
  if (from === to) return;
  if (to.startsWith(`${from}/`) || from.startsWith(`${to}/`)) {
    throw new Error(`cannot move "${from}" to "${to}": one contains the other`);
  }
}

/** Rows fetched per page by the keyset iterators: bounds memory however big the tree is. */
export const PAGE_ROWS = 1000;
