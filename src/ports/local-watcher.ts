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
  /**
   * A barrier: make an empty file `name` at the root (a temp name no rule syncs), wait until this watcher reports
   * it, let what the events before it started end (a new folder's walk, a rename's lstat), hand every pending hint
   * to `onHints` at once, settled or not, and remove the file. Resolves once every change made before the call was
   * handed on; rejects (the file removed) when that cannot be known within `timeoutMs`. Absent: no barrier here (the
   * caller scans instead). The daemon's `sync --once` hand-off uses it (lifecycle/local-side.ts).
   */
  barrier?(name: string, timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}
