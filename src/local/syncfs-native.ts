/**
 * The durability point of the file worker threads (native/syncfs.c, built by `npm ci` into
 * build/Release/boxsync_syncfs.node through scripts/build-native.mjs): syncfs(2) on a file's file system, in libuv's
 * pool, so a worker makes a batch of temp files durable at once instead of fsyncing each (file-workers.ts). The
 * worker threads load it themselves; this module only finds the file and checks that it loads. Loading never
 * throws: without the addon (not Linux, not built) each temp file is fsynced as before.
 *
 * BOXSYNC_SYNCFS_ADDON names another file to load (a packager's own build); BOXSYNC_SYNCFS_ADDON=off turns it off
 * (tests run the workers both ways).
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const DEFAULT_PATH = fileURLToPath(new URL('../../build/Release/boxsync_syncfs.node', import.meta.url));
const found = new Map<string, string | null>();

/** The path of an addon that loads and has `syncfs`, or null (not Linux, not built, another file, turned off). */
export function syncfsAddonPath(path: string = process.env.BOXSYNC_SYNCFS_ADDON || DEFAULT_PATH): string | null {
  if (!found.has(path)) found.set(path, loads(path) ? path : null);
  return found.get(path) ?? null;
}

function loads(path: string): boolean {
  if (process.platform !== 'linux' || path === 'off') return false;
  try {
    return typeof (createRequire(import.meta.url)(path) as { syncfs?: unknown }).syncfs === 'function';
  } catch {
    return false; // Not built or not loadable here: the workers fsync each file.
  }
}
