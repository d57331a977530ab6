/**
 * Drops watcher hints that tell the engine nothing new, which is what the echoes of the daemon's own writes
 * are: after a download is renamed into place the engine records the file's inode, size and mtime in the
 * local tree, so the watcher event that follows finds exactly that state. A hint passes when the path's
 * lstat differs from the journal's local row (or one of them is missing); a rescan hint always passes.
 */
import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import type { RelPath, SyncRoot } from '../../core/model.js';
import type { Journal } from '../../ports/journal.js';

export async function dropEchoes(journal: Journal, root: SyncRoot, paths: readonly RelPath[]): Promise<RelPath[]> {
  const out: RelPath[] = [];
  for (const path of paths) {
    const known = journal.getLocal(root.id, path);
    let st;
    try {
      st = await lstat(join(root.localPath, path));
    } catch {
      st = undefined;
    }
    if (!st && !known) continue;
    if (st && known && known.kind === (st.isDirectory() ? 'folder' : st.isFile() ? 'file' : known.kind)) {
      const same =
        known.inode === st.ino && known.sizeBytes === (st.isDirectory() ? known.sizeBytes : st.size) && Math.trunc(known.mtimeMs) === Math.trunc(st.mtimeMs);
      if (same) continue;
    }
    out.push(path);
  }
  return out;
}
