/**
 * The daemon's own settings, with their defaults. They come from the config's optional `daemon` object when the
 * config schema carries one, and can be overridden per process by environment variables (for tests, and for a
 * quick experiment without editing the config):
 *
 *   BOXSYNC_DAEMON_STREAM        sync | changes | all          stream consumed for remote hints   (default sync)
 *   BOXSYNC_WATCHER              dirs | chokidar               local watcher implementation      (default dirs)
 *   BOXSYNC_MAX_WATCHES          integer                        inotify watch budget per root      (default none)
 *   BOXSYNC_FALLBACK_SCAN_SEC    integer                        full-scan interval when degraded   (default 60)
 *   BOXSYNC_SHUTDOWN_TIMEOUT_SEC integer                        SIGTERM bound, < TimeoutStopSec    (default 20)
 *   BOXSYNC_SYNC_CHECK_SEC       integer                        wait for ITEM_SYNC before fallback (default 5)
 */
import type { Config } from '../config.js';
import type { StreamType } from '../ports/remote-changes.js';
import type { WatcherKind } from '../local/watcher-options.js';
import { DEFAULT_DAEMON_SCHEDULES, type ScheduleName } from './schedules.js';

export interface DaemonSettings {
  readonly streamType: StreamType;
  readonly watcher: WatcherKind;
  readonly maxWatches: number | undefined;
  readonly fallbackScanMs: number;
  readonly shutdownTimeoutMs: number;
  readonly syncCheckMs: number;
  readonly schedules: Readonly<Record<ScheduleName, string>>;
}

/** systemd's TimeoutStopSec in systemd/boxsync.service is this bound plus a margin for the last log lines. */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 20_000;

interface OptionalDaemonConfig {
  readonly daemon?: Partial<{
    streamType: StreamType;
    watcher: WatcherKind;
    maxWatches: number;
    fallbackScanSec: number;
    shutdownTimeoutSec: number;
    syncCheckSec: number;
    schedules: Partial<Record<ScheduleName, string>>;
  }>;
}

export function daemonSettings(config: Config, env: NodeJS.ProcessEnv = process.env): DaemonSettings {
  const d = (config as Config & OptionalDaemonConfig).daemon ?? {};
  const stream = env.BOXSYNC_DAEMON_STREAM ?? d.streamType ?? 'sync';
  const watcher = env.BOXSYNC_WATCHER ?? d.watcher ?? 'dirs';
  if (stream !== 'sync' && stream !== 'changes' && stream !== 'all') throw new Error(`BOXSYNC_DAEMON_STREAM must be sync, changes or all, not "${stream}"`);
  if (watcher !== 'dirs' && watcher !== 'chokidar') throw new Error(`BOXSYNC_WATCHER must be dirs or chokidar, not "${watcher}"`);
  return {
    streamType: stream,
    watcher,
    maxWatches: num(env.BOXSYNC_MAX_WATCHES, 'BOXSYNC_MAX_WATCHES') ?? d.maxWatches,
    fallbackScanMs: 1000 * (num(env.BOXSYNC_FALLBACK_SCAN_SEC, 'BOXSYNC_FALLBACK_SCAN_SEC') ?? d.fallbackScanSec ?? 60),
    shutdownTimeoutMs: 1000 * (num(env.BOXSYNC_SHUTDOWN_TIMEOUT_SEC, 'BOXSYNC_SHUTDOWN_TIMEOUT_SEC') ?? d.shutdownTimeoutSec ?? DEFAULT_SHUTDOWN_TIMEOUT_MS / 1000),
    syncCheckMs: 1000 * (num(env.BOXSYNC_SYNC_CHECK_SEC, 'BOXSYNC_SYNC_CHECK_SEC') ?? d.syncCheckSec ?? 5),
    schedules: {
      ...DEFAULT_DAEMON_SCHEDULES,
      fullRescan: config.schedules.fullRescan,
      uploadSessionCleanup: config.schedules.uploadSessionCleanup,
      localTrashPurge: config.schedules.localTrashPurge,
      ...d.schedules,
    },
  };
}

function num(v: string | undefined, name: string): number | undefined {
  if (v === undefined || v === '') return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number, not "${v}"`);
  return n;
}
