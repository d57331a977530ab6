/**
 * The look a park on a local condition is re-checked against (engine/park-recheck.ts): mode, owner, inode and
 * ctime of the item and of its folder. A chmod, a chown, an ACL change or a rename changes the ctime of what it
 * touched, so a changed probe means the cause may be gone and the item is tried again. Cheap: two lstats.
 */
import { dirname } from 'node:path';
import type { FsModule } from './fs-module.js';
import { errnoOf } from './fs-errors.js';

async function look(fs: FsModule, abs: string): Promise<string> {
  try {
    const st = await fs.promises.lstat(abs);
    return `${st.mode.toString(8)}:${st.uid}:${st.gid}:${st.ino}:${st.ctimeMs}`;
  } catch (e) {
    const errno = errnoOf(e);
    return errno === 'ENOENT' || errno === 'ENOTDIR' ? 'absent' : `err:${errno ?? 'unknown'}`;
  }
}

/** The probe of an absolute path: "<item>|<its folder>". */
export async function probePath(fs: FsModule, abs: string): Promise<string> {
  const [item, parent] = await Promise.all([look(fs, abs), look(fs, dirname(abs))]);
  return `${item}|${parent}`;
}
