/**
 * The native folder reader of the tree walk (native/walk.c, built by `npm ci` into build/Release/boxsync_walk.node
 * through scripts/build-native.mjs): one call reads a folder and lstats its entries in C, and gives their names and
 * a Float64Array of numbers instead of a node Stats object per entry (scan.ts uses it while its synchronous calls
 * are allowed: a local disk, quick answers). Loading never throws: without the addon the walk reads folders and
 * lstats entries through node:fs as before.
 *
 * BOXSYNC_WALK_ADDON names another file to load (a packager's own build); BOXSYNC_WALK_ADDON=off turns it off
 * (tests run the walk both ways).
 */
import type { LocalKind } from '../core/model.js';
import { loadNativeAddon, type NativeAddonSpec } from './native-addon.js';

export interface WalkAddon {
  /**
   * [names joined by "\0", WALK_FIELDS numbers per entry], sorted as JS sorts strings; a negative number: -errno
   * (the folder could not be read); 1: a name in it is not UTF-8.
   */
  list(path: string): readonly [string, Float64Array] | number;
  /** list() of each path, run in turn on a libuv thread-pool thread (absent from an older build of the addon). */
  readonly listAhead?: (paths: readonly string[]) => Promise<readonly (readonly [string, Float64Array] | number)[]>;
  readonly fields: number;
}

/** The numbers per entry: kind (or -errno of its lstat), size, mtime seconds, mtime nanoseconds, inode. */
export const WALK_FIELDS = 5;
/** The kind codes of native/walk.c. */
export const WALK_KINDS: readonly LocalKind[] = ['file', 'folder', 'symlink', 'other'];

const WALK: NativeAddonSpec<WalkAddon> = {
  file: 'boxsync_walk.node',
  envVar: 'BOXSYNC_WALK_ADDON',
  linuxOnly: 'the native walk is Linux only',
  accept: (got, path) => (typeof got.list === 'function' && got.fields === WALK_FIELDS
    ? { list: got.list as WalkAddon['list'], fields: WALK_FIELDS, ...(typeof got.listAhead === 'function' ? { listAhead: got.listAhead as NonNullable<WalkAddon['listAhead']> } : {}) }
    : `${path} is not the boxsync walk addon`),
};

/** The addon, or null (not Linux, not built, another file, turned off): then the walk uses node:fs. */
export function loadWalkAddon(path?: string): WalkAddon | null {
  const load = loadNativeAddon(WALK, path);
  return load.ok ? load.addon : null;
}

/** mtimeMs as node's own lstat computes it from the same two numbers (lib/internal/fs/utils.js msFromTimeSpec). */
export function mtimeMsOf(sec: number, nsec: number): number {
  return sec * 1e3 + nsec / 1e6;
}
