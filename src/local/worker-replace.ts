/**
 * The replace mode of the commit on the file worker thread (issue 29 point 7): a downloaded file that replaces the
 * one under its name (LocalGuard `file`: a new version from Box of a synced file) is put in place by the job that
 * wrote its temp file, as a new file is (worker-commit.ts), so that the main thread only records it. Measured at
 * 100,000 files, the 100 renames of a run after 100 + 100 edits cost the main thread 0.17-0.24 s.
 *
 * The same guards as the main thread's replace path (local-fs.ts commitTemp with guard `file`), in the same order:
 * - the bytes: the job commits nothing unless they have the SHA-1 Box listed (worker-commit.ts commitReady);
 * - containment: every folder from the root down is a real folder (lstat each), before the temp file is created
 *   and again before the rename, so nothing is ever replaced through a symlinked folder;
 * - the guard: lstat of the target, which must still be a regular file with the size, mtime and inode the plan saw
 *   (guard.ts guardHolds, core/same-item.ts localUnchanged, compared exactly); anything else (a save by the user
 *   since the plan, an editor's rename, a folder or symlink there, nothing there) refuses the commit: the temp file
 *   is removed, the user's file is left as it is, and LocalFs.commitTemp throws `local_changed` (replan);
 * - then rename(2) over it. The old file goes where the main thread's path puts it: it is replaced (its content is
 *   the older version Box keeps). The window between the lstat and the rename is the main thread's too (a few
 *   microseconds; Linux cannot close it without kernel help).
 * - name twins: a replace adds no name, so neither path looks for a twin; the thread's kept listing of the folder
 *   keeps its names and follows the folder's new stamp after its own rename (as after its links), and the main
 *   thread's NameTwins reads the folder again at its next check, as after its own replace.
 * Box's mtime is set on the open file before its fsync (worker-commit.ts stampFile), as for a new file.
 */

/** What the target must still be (the plan's LocalGuard `file`), as the job carries it. */
export interface ReplaceGuard {
  readonly ino: number;
  readonly size: number;
  readonly mtimeMs: number;
}

/** The worker's side: plain CommonJS inside worker-commit.ts's COMMIT_CODE (which defines its helpers). */
export const REPLACE_CODE = `
function commitReplace(c, temp, st) {
  try {
    if (!ancestorsOk(c)) return drop(temp, { refused: 'ancestor' });
    let now;
    try {
      now = fs.lstatSync(c.target);
    } catch (e) {
      if (e && (e.code === 'ENOENT' || e.code === 'ENOTDIR')) return drop(temp, { refused: 'changed' });
      throw e;
    }
    const g = c.replace;
    if (!now.isFile() || now.ino !== g.ino || now.size !== g.size || now.mtimeMs !== g.mtimeMs) return drop(temp, { refused: 'changed' });
    const dir = dirOf(c.target);
    const l = listings.get(dir);
    const before = l === undefined ? undefined : stampOf(dir);
    fs.renameSync(temp, c.target);
    if (l !== undefined && before !== undefined && l.stamp === before) {
      const after = stampOf(dir);
      if (after !== undefined) l.stamp = after;
    }
    return { entry: st };
  } catch (e) {
    return drop(temp, { refused: 'error', message: String(e && e.message), code: e && e.code });
  }
}
`;
