/**
 * Which unselected folder (selective sync, folders[].selective.unselected) covers a path: a pure rule on the
 * configured root, in core so that the config's selection changes and the engine both ask it from below.
 */
import type { SyncRoot } from './model.js';

/** The unselected entry at or above `path`, if any. */
export function unselectedAt(root: Pick<SyncRoot, 'unselected'>, path: string): string | undefined {
  return (root.unselected ?? []).find((u) => path === u || path.startsWith(`${u}/`));
}
