/** Picks the LocalWatcher implementation named in the configuration ('dirs' is the default on Linux). */
import type { LocalWatcher } from '../ports/local-watcher.js';
import { assertNever } from '../core/operations.js';
import { ChokidarWatcher } from './watcher-chokidar.js';
import { DirWatcher } from './watcher-dirs.js';
import type { WatcherKind, WatcherOptions } from './watcher-options.js';

export function createWatcher(kind: WatcherKind, opts: WatcherOptions): LocalWatcher {
  switch (kind) {
    case 'dirs':
      return new DirWatcher(opts);
    case 'chokidar':
      return new ChokidarWatcher(opts);
    default:
      return assertNever(kind);
  }
}
