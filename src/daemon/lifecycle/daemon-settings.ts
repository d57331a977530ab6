/**
 * The daemon's own settings: the config's `daemon` object (validated, with defaults, in src/config/schema.ts and
 * documented in config/README.md), each overridable per process by an environment variable (for tests, and for
 * a quick experiment without editing the config):
 *
 *   BOXSYNC_DAEMON_STREAM        daemon.streamType          sync | changes | all   (default sync)
 *   BOXSYNC_WATCHER              daemon.watcher             inotify | dirs | chokidar (default inotify)
 *   BOXSYNC_MAX_WATCHES          daemon.maxWatches          positive integer       (default none)
 *   BOXSYNC_FALLBACK_SCAN_SEC    daemon.fallbackScanSec     integer seconds        (default 60)
 *   BOXSYNC_SHUTDOWN_TIMEOUT_SEC daemon.shutdownTimeoutSec  integer seconds        (default 4)
 *   BOXSYNC_SYNC_CHECK_SEC       daemon.syncCheckSec        integer seconds        (default 5)
 *   BOXSYNC_UPLOAD_GROWING_EVERY_SEC daemon.uploadGrowingEverySec integer seconds  (default 60)
 *   BOXSYNC_UI_PORT              daemon.ui.port             0 to 65535             (default 8385; 0 = a free port)
 *
 * And one for tests and tuning, with no config key:
 *
 *   BOXSYNC_IDLE_CHECK_SLICE_MS  how long each slice of the idle journal check holds the event loop, 0 to 1000 ms
 *                                (default 25, convergence-watch.ts; 0: a slice per pause point, every 64 rows), so
 *                                that a test's check takes many slices, and is still running, on any machine.
 *
 * A variable is checked by the same rule as its config key; a bad value throws an Error naming the variable,
 * and the daemon refuses to start (exit 2) before touching anything.
 *
 * `streamType` is the one Box event stream the daemon reads: its long poll and its engine's catch-up both use
 * it (the top-level config `streamType` is what `sync --once` reads).
 */
import { z } from 'zod';
import type { Config } from '../../config/index.js';
import { DEFAULT_SHUTDOWN_TIMEOUT_SEC, MAX_SHUTDOWN_TIMEOUT_SEC, daemonFields } from '../../config/schema.js';
import type { WatcherKind } from '../../local/watcher-options.js';
import type { StreamType } from '../../ports/remote-changes.js';
import type { ScheduleName } from './schedules.js';

export interface DaemonSettings {
  readonly streamType: StreamType;
  readonly watcher: WatcherKind;
  readonly maxWatches: number | undefined;
  readonly fallbackScanMs: number;
  readonly shutdownTimeoutMs: number;
  readonly syncCheckMs: number;
  /** A file still being written is hinted (and uploaded as it is) at least this often (watcher-hint-batcher.ts). */
  readonly uploadGrowingEveryMs: number;
  readonly schedules: Readonly<Record<ScheduleName, string>>;
  /** The local web page (src/daemon/ui/): off, or on loopback at this port (0 = a free one). */
  readonly ui: { readonly enabled: boolean; readonly port: number };
  /** The idle journal check's slice length in ms (BOXSYNC_IDLE_CHECK_SLICE_MS); undefined: its default. */
  readonly idleCheckSliceMs?: number;
}

const idleCheckSliceMs = z.int().min(0).max(1000);

/** systemd's TimeoutStopSec in systemd/boxsync.service is this bound plus a margin for the last log lines. */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = DEFAULT_SHUTDOWN_TIMEOUT_SEC * 1000;

export function daemonSettings(config: Config, env: NodeJS.ProcessEnv = process.env): DaemonSettings {
  const d = config.daemon;
  const maxWatches = fromEnv(env, 'BOXSYNC_MAX_WATCHES', daemonFields.maxWatches, 'a positive integer', Number) ?? d.maxWatches;
  return {
    streamType: fromEnv(env, 'BOXSYNC_DAEMON_STREAM', daemonFields.streamType, 'sync, changes or all', String) ?? d.streamType,
    watcher: fromEnv(env, 'BOXSYNC_WATCHER', daemonFields.watcher, 'inotify, dirs or chokidar', String) ?? d.watcher,
    maxWatches: maxWatches ?? undefined,
    fallbackScanMs: 1000 * (fromEnv(env, 'BOXSYNC_FALLBACK_SCAN_SEC', daemonFields.fallbackScanSec, 'whole seconds, 1 to 86400', Number) ?? d.fallbackScanSec),
    shutdownTimeoutMs:
      1000 * (fromEnv(env, 'BOXSYNC_SHUTDOWN_TIMEOUT_SEC', daemonFields.shutdownTimeoutSec, `whole seconds, 1 to ${MAX_SHUTDOWN_TIMEOUT_SEC}`, Number) ?? d.shutdownTimeoutSec),
    syncCheckMs: 1000 * (fromEnv(env, 'BOXSYNC_SYNC_CHECK_SEC', daemonFields.syncCheckSec, 'whole seconds, 1 to 600', Number) ?? d.syncCheckSec),
    uploadGrowingEveryMs:
      1000 * (fromEnv(env, 'BOXSYNC_UPLOAD_GROWING_EVERY_SEC', daemonFields.uploadGrowingEverySec, 'whole seconds, 1 to 86400', Number) ?? d.uploadGrowingEverySec),
    ui: { enabled: d.ui.enabled, port: fromEnv(env, 'BOXSYNC_UI_PORT', daemonFields.uiPort, 'a port number, 0 to 65535', Number) ?? d.ui.port },
    idleCheckSliceMs: fromEnv(env, 'BOXSYNC_IDLE_CHECK_SLICE_MS', idleCheckSliceMs, 'whole milliseconds, 0 to 1000', Number),
    schedules: {
      fullRescan: config.schedules.fullRescan,
      uploadSessionCleanup: config.schedules.uploadSessionCleanup,
      localTrashPurge: config.schedules.localTrashPurge,
      journalMaintenance: d.schedules.journalMaintenance,
      tokenRefresh: d.schedules.tokenRefresh,
    },
  };
}

/** The variable's value checked by its config key's rule; undefined when unset or empty. */
function fromEnv<S extends z.ZodType>(env: NodeJS.ProcessEnv, name: string, schema: S, expected: string, convert: (raw: string) => unknown): z.output<S> | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  const parsed = schema.safeParse(convert(raw.trim()));
  if (!parsed.success) throw new Error(`environment variable ${name}="${raw}" is invalid: expected ${expected}. Nothing was synced; fix or unset it and start again`);
  return parsed.data;
}
