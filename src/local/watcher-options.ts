/**
 * Options shared by every LocalWatcher implementation.
 *
 * `isIgnored` receives a root-relative '/'-separated path and whether it is a directory; it must reject the
 * local adapter's temp files (downloads land under a temp name and are renamed into place) as well as the
 * user's exclude rules, so neither half-downloaded files nor excluded trees ever become hints.
 */
import type { HintBatcherOptions } from './watcher-hint-batcher.js';

export interface WatcherOptions extends HintBatcherOptions {
  /** Absolute path of the sync root. */
  readonly rootPath: string;
  readonly isIgnored: (relPath: string, isDir: boolean) => boolean;
  /** Interval of the daemon's fallback full scans when the watcher is degraded (default 60 s). */
  readonly fallbackScanMs?: number;
  /**
   * Most inotify watches this root may use (default: unlimited, i.e. the kernel's limit). Over budget the
   * watcher degrades exactly as if the kernel had refused, leaving watches for other programs.
   */
  readonly maxWatches?: number;
}

export const DEFAULT_FALLBACK_SCAN_MS = 60_000;

export type WatcherKind = 'inotify' | 'dirs' | 'chokidar';
