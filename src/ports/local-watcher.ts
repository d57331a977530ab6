/**
 * LocalWatcher: hints about local changes under one root. Implemented by src/local/watcher-*.ts
 * (chokidar, or a directory-level inotify watcher); the daemon picks one.
 *
 * Hints are not truth: the observer re-stats every hinted path. Writes are debounced by the implementation
 * until a file stops changing; the daemon ignores echoes of its own writes.
 */
import type { RelPath } from '../core/model.js';

export interface WatchHint {
  readonly path: RelPath;
  /** 'change' covers create, modify and delete: the observer stats the path to learn which. */
  readonly type: 'change' | 'rescan';
}

export type WatcherHealth =
  | { readonly state: 'starting' }
  | { readonly state: 'ok'; readonly watches: number }
  | { readonly state: 'degraded'; readonly reason: string; readonly fallbackScanMs: number };

export interface LocalWatcher {
  start(onHints: (hints: readonly WatchHint[]) => void, onHealth: (h: WatcherHealth) => void): Promise<void>;
  health(): WatcherHealth;
  close(): Promise<void>;
}
