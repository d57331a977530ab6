/**
 * Drops watcher hints that tell the engine nothing new, which is what the echoes of the daemon's own writes
 * are: after a download is renamed into place the engine records the file's inode, size and mtime in the
 * local tree, so the watcher event that follows finds exactly that state. A hint passes when the path's
 * lstat differs from the journal's local row (or one of them is missing); a rescan hint always passes. The path is
 * looked at through the root's LocalFs (its lstat), never on the disk directly.
 */
import type { RelPath, SyncRoot } from '../../core/model.js';
import type { Journal } from '../../ports/journal.js';
import type { LocalFs } from '../../ports/local-fs.js';
import { localUnchanged } from '../../core/same-item.js';

export async function dropEchoes(fs: Pick<LocalFs, 'stat'>, journal: Journal, root: SyncRoot, paths: readonly RelPath[]): Promise<RelPath[]> {
  const out: RelPath[] = [];
  for (const path of paths) {
    const known = journal.getLocal(root.id, path);
    // One that cannot be looked at passes: the pass that follows says why.
    const st = await fs.stat(path).catch(() => undefined);
    if (!st && !known) continue;
    if (st && known && known.kind === (st.kind === 'folder' || st.kind === 'file' ? st.kind : known.kind)) {
      const same = localUnchanged(known, { ...st, sizeBytes: st.kind === 'folder' ? known.sizeBytes : st.sizeBytes });
      if (same) continue;
    }
    out.push(path);
  }
  return out;
}
