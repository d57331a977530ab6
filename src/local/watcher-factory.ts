/**
 * Picks the LocalWatcher implementation named in the configuration. 'inotify' (the default) is the native
 * watcher when its addon loads on Linux; otherwise 'dirs' (one fs.watch per folder) with a note saying why, which
 * the daemon logs once (lifecycle/local-side.ts).
 */
import type { LocalWatcher } from '../ports/local-watcher.js';
import { assertNever } from '../core/operations.js';
import { loadInotifyAddon, type AddonLoad } from './inotify-native.js';
import { ChokidarWatcher } from './watcher-chokidar.js';
import { DirWatcher } from './watcher-dirs.js';
import { InotifyWatcher } from './watcher-inotify.js';
import type { WatcherKind, WatcherOptions } from './watcher-options.js';

export interface WatcherChoice {
  /** The kind that runs. */
  readonly kind: WatcherKind;
  /** Why it is not the kind asked for (null when it is). */
  readonly note: string | null;
}

export function chooseWatcher(kind: WatcherKind, load: () => AddonLoad = loadInotifyAddon): WatcherChoice {
  if (kind !== 'inotify') return { kind, note: null };
  const addon = load();
  if (addon.ok) return { kind, note: null };
  if (process.platform !== 'linux') return { kind: 'dirs', note: null }; // no inotify there: nothing to say
  return { kind: 'dirs', note: `native inotify watcher unavailable (${addon.reason}); using one fs.watch per folder ('dirs'), which costs more memory per folder` };
}

export function createWatcher(kind: WatcherKind, opts: WatcherOptions, load: () => AddonLoad = loadInotifyAddon): LocalWatcher {
  switch (kind) {
    case 'inotify': {
      const addon = load();
      return addon.ok ? new InotifyWatcher(opts, addon.addon) : new DirWatcher(opts);
    }
    case 'dirs':
      return new DirWatcher(opts);
    case 'chokidar':
      return new ChokidarWatcher(opts);
    default:
      return assertNever(kind);
  }
}
