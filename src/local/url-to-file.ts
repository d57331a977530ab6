/**
 * A zip download's scratch archive written by a file worker thread (worker-fetch.ts; zip-prefetch.ts `writeUrlTo`,
 * wired by the composition root): the file is created here, its body fetched into it there without hashing.
 */
import { close, open } from 'node:fs';
import type { WriteUrlToFile } from '../ports/local-fs.js';
import type { FileWorkerPool } from './file-workers.js';

/**
 * WriteUrlToFile on `pool`'s threads: the file is created here (O_EXCL, 0600), its body fetched into it by a thread
 * without hashing, and closed here (zip-prefetch.ts reads it next; its own checks are the archive's).
 */
export function writeUrlToFile(pool: FileWorkerPool): WriteUrlToFile {
  return async (f) => {
    if (!pool.threaded) return null;
    const fd = await new Promise<number>((resolve, reject) => open(f.path, 'wx', 0o600, (e, d) => (e ? reject(e) : resolve(d))));
    try {
      const { url, headers, path, limit, stallMs, connectTimeoutMs, deadlineInMs } = f;
      const r = await pool.run(
        { op: 'fetch', path, fd, position: 0, url, headers, limit, stallMs, connectTimeoutMs, deadlineInMs, hash: false },
        { signal: f.signal, timeoutMs: deadlineInMs + stallMs + connectTimeoutMs },
      );
      return r.fetched ?? null;
    } finally {
      await new Promise<void>((resolve) => close(fd, () => resolve()));
    }
  };
}
