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
import { loadNativeAddon, nativeAddonPath, type NativeAddonSpec } from './native-addon.js';

const SYNCFS: NativeAddonSpec<true> = {
  file: 'boxsync_syncfs.node',
  envVar: 'BOXSYNC_SYNCFS_ADDON',
  linuxOnly: 'syncfs(2) is Linux only',
  accept: (got, path) => (typeof got.syncfs === 'function' ? true : `${path} is not the boxsync syncfs addon`),
};

/** The path of an addon that loads and has `syncfs`, or null (not Linux, not built, another file, turned off). */
export function syncfsAddonPath(path: string = nativeAddonPath(SYNCFS)): string | null {
  // Not built or not loadable here: the workers fsync each file.
  return loadNativeAddon(SYNCFS, path).ok ? path : null;
}
