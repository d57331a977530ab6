/**
 * The native inotify addon (native/inotify.c, built by `npm ci` into build/Release/boxsync_inotify.node through
 * scripts/build-native.mjs) and the parser of the raw events it delivers. Loading never throws: a missing or
 * broken build is an answer with the reason, and the daemon then uses DirWatcher (watcher-factory.ts).
 *
 * BOXSYNC_INOTIFY_ADDON names another file to load (a packager's own build; tests point it at a missing file to
 * show the fallback), or `off` (native-addon.ts, the loader of every addon).
 */
import { loadNativeAddon, type NativeAddonLoad, type NativeAddonSpec } from './native-addon.js';

/** An open inotify instance (opaque: a native external). */
export type InotifyHandle = { readonly __inotify: unique symbol };

export interface InotifyAddon {
  /** inotify_init1(IN_NONBLOCK | IN_CLOEXEC), polled on the event loop; onEvents gets raw records, or errno != 0. */
  open(onEvents: (records: Buffer, errno: number) => void): InotifyHandle;
  /** The watch descriptor (>= 0), or -errno. */
  add(h: InotifyHandle, path: string, mask: number): number;
  /** 0, or -errno. */
  remove(h: InotifyHandle, wd: number): number;
  fd(h: InotifyHandle): number;
  close(h: InotifyHandle): void;
}

export type AddonLoad = NativeAddonLoad<InotifyAddon>;

/** <linux/inotify.h> */
export const IN = {
  MODIFY: 0x2,
  ATTRIB: 0x4,
  MOVED_FROM: 0x40,
  MOVED_TO: 0x80,
  CREATE: 0x100,
  DELETE: 0x200,
  DELETE_SELF: 0x400,
  MOVE_SELF: 0x800,
  UNMOUNT: 0x2000,
  Q_OVERFLOW: 0x4000,
  IGNORED: 0x8000,
  ONLYDIR: 0x1000000,
  DONT_FOLLOW: 0x2000000,
  EXCL_UNLINK: 0x4000000,
  ISDIR: 0x40000000,
} as const;

const INOTIFY: NativeAddonSpec<InotifyAddon> = {
  file: 'boxsync_inotify.node',
  envVar: 'BOXSYNC_INOTIFY_ADDON',
  linuxOnly: 'inotify is Linux only',
  notBuiltHint: '(run `npm rebuild -g boxsync` or `node scripts/build-native.mjs`)',
  accept: (got, path) => (typeof got.open === 'function' && typeof got.add === 'function'
    ? (got as unknown as InotifyAddon)
    : `${path} is not the boxsync inotify addon`),
};

export function loadInotifyAddon(path?: string): AddonLoad {
  return loadNativeAddon(INOTIFY, path);
}

/** Walk the `struct inotify_event` records of one read: wd, mask, cookie, and the name ('' for the folder itself). */
export function forEachInotifyEvent(buf: Buffer, fn: (wd: number, mask: number, cookie: number, name: string) => void): void {
  let off = 0;
  while (off + 16 <= buf.length) {
    const wd = buf.readInt32LE(off);
    const mask = buf.readUInt32LE(off + 4);
    const cookie = buf.readUInt32LE(off + 8);
    const len = buf.readUInt32LE(off + 12);
    const start = off + 16;
    const end = Math.min(start + len, buf.length);
    const nul = len === 0 ? start : buf.indexOf(0, start);
    const name = buf.toString('utf8', start, nul < 0 || nul > end ? end : nul);
    off = start + len;
    fn(wd, mask, cookie, name);
  }
}
