/**
 * Fallback ignore rules, used only when the composition root does not pass the local adapter's rules
 * (EngineDeps.isIgnoredFor). gitignore semantics come from the `ignore` library.
 */
import ignore from 'ignore';
import type { RelPath, SyncRoot } from '../core/model.js';

const BUILT_IN = ['~$*', '.~lock.*#', '*.swp', '*~', '.DS_Store', 'Thumbs.db', '.boxsync-*'];

export function fallbackIgnore(root: SyncRoot): (path: RelPath, isDir: boolean) => boolean {
  const ig = ignore().add([...BUILT_IN, ...root.exclude]);
  return (path, isDir) => ig.ignores(isDir ? `${path}/` : path);
}
