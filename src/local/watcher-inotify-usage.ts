/**
 * How many inotify watches a process holds, read from /proc/<pid>/fdinfo (one `inotify wd:` line per watch
 * on each inotify file descriptor), and the per-user limit. Linux only; null elsewhere or when unreadable.
 */
import { readdir, readFile, readlink } from 'node:fs/promises';

export async function countInotifyWatches(pid: number = process.pid): Promise<number | null> {
  let fds: string[];
  try {
    fds = await readdir(`/proc/${pid}/fd`);
  } catch {
    return null;
  }
  let total = 0;
  for (const fd of fds) {
    try {
      if ((await readlink(`/proc/${pid}/fd/${fd}`)) !== 'anon_inode:inotify') continue;
      const info = await readFile(`/proc/${pid}/fdinfo/${fd}`, 'utf8');
      total += info.split('\n').filter((l) => l.startsWith('inotify wd:')).length;
    } catch {
      // the fd closed between readdir and read
    }
  }
  return total;
}

export async function inotifyWatchLimit(): Promise<number | null> {
  try {
    return Number((await readFile('/proc/sys/fs/inotify/max_user_watches', 'utf8')).trim());
  } catch {
    return null;
  }
}
