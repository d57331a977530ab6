/**
 * What the daemon needs from the composition root (compose.ts) for one configuration: the engine and the
 * adapters it was built from. The daemon builds a new set on SIGHUP and closes the old one.
 */
import type { Config } from '../../config/index.js';
import type { SyncRoot } from '../../core/model.js';
import type { Engine, EngineEvents } from '../../engine/types.js';
import type { Logger } from '../../logger.js';
import type { Journal } from '../../ports/journal.js';
import type { RemoteChanges, StreamType } from '../../ports/remote-changes.js';
import type { RemoteStore } from '../../ports/remote-store.js';
import type { BoxActions } from '../../remote/box/index.js';
import type { LocalFs } from '../../ports/local-fs.js';
import type { TrashPlaces } from '../../local/local-trash-entries.js';
import { compose, type ComposeOptions } from '../compose.js';
import { checkRepeat } from './maintenance-jobs.js';
import type { Bandwidth } from '../../remote/box/bandwidth.js';

export interface DaemonParts {
  readonly engine: Engine;
  readonly journal: Journal;
  readonly remote: RemoteStore;
  readonly changes: RemoteChanges;
  readonly roots: readonly SyncRoot[];
  /**
   * A root's local file system port, the daemon's one door to its disk: the watcher's echo filter and root checks,
   * the item commands, and the live `selective exclude` checking the folder against the merge base.
   */
  readonly localFsFor: (root: SyncRoot) => LocalFs;
  /** A fresh temp-file name of the state dir: the watchers' barrier files (`sync --once` handed to the daemon). */
  readonly tempName: () => string;
  /** The ignore rules of a root, including the local adapter's temp-file names. */
  readonly isIgnoredFor: (root: SyncRoot) => (path: string, isDir: boolean) => boolean;
  /** Remove local-trash entries trashed more than `ageMs` ago; returns how many were removed. */
  readonly purgeLocalTrash: (ageMs: number) => Promise<number>;
  /** Box features beyond sync, for the item commands on the control socket (absent: those commands are refused). */
  readonly boxActions?: BoxActions;
  /** The transfer bandwidth cap, set live by the `bwlimit` verb (absent: the verb is refused). */
  readonly bandwidth?: Bandwidth;
  /** Where the local trash keeps its entries (`trash list|restore`). */
  readonly trashPlaces: TrashPlaces;
  /** The configured Box API URL (web URLs of `boxsync info`). */
  readonly apiUrl?: string;
  /** Close the journal and the HTTP client (after engine.close()). */
  close(): Promise<void>;
}

/**
 * `streamType`: the event stream the daemon is set to read (its long poll may fall back: Engine.useStream);
 * `freeSpace`: asked when a deselected folder is freed (true: removed, not moved to the local trash).
 */
export type ComposeDaemonParts = (
  config: Config,
  logger: Logger,
  events: EngineEvents,
  streamType: StreamType,
  freeSpace?: () => boolean,
  /** Aborted by SIGTERM during the daemon's start: the journal's open check stops, the composition rejects. */
  signal?: AbortSignal,
) => Promise<DaemonParts>;

/**
 * The daemon's journal page cache: SQLite's own default (2,000 KiB) instead of better-sqlite3's 16,000. What a pass
 * reads into the cache stays resident after it (freed by `PRAGMA shrink_memory`, it stays with malloc: tried, no
 * change): at 100,000 files the idle daemon's malloc heap held 24 MiB with the larger cache and 10-11 MiB with this
 * one (docs/internals.md, "Memory when idle").
 */
export const DAEMON_JOURNAL_CACHE_KIB = 2_000;

/** What the daemon's command line adds to every composition (the first and each one after a SIGHUP reload). */
export type DaemonComposeOverrides = Pick<ComposeOptions, 'bandwidthBytesPerSec'>;

/** The production parts: the composition root's engine and adapters, with the command line's overrides. */
export function composeDaemonParts(overrides: DaemonComposeOverrides = {}): ComposeDaemonParts {
  return async (config, logger, events, streamType, freeSpace, signal) => {
    const journalCheckApart = { repeat: checkRepeat(), ...(signal ? { signal } : {}) };
    const c = await compose({ ...overrides, config, logger, events, streamType, liveChanges: true, journalCacheKiB: DAEMON_JOURNAL_CACHE_KIB, journalCheckApart, ...(freeSpace ? { freeSpace } : {}) });
    if (c.journalRebuilt) logger.warn(`the journal was rebuilt (${c.journalRebuilt}); the first pass scans and lists everything`);
    return {
      engine: c.engine,
      journal: c.journal,
      remote: c.remote,
      changes: c.changes,
      roots: c.roots,
      localFsFor: (root) => c.localFsFor(root),
      tempName: () => c.tempName(),
      isIgnoredFor: (root) => c.isIgnoredFor(root),
      purgeLocalTrash: (ageMs) => c.localTrash.purgeOlderThan(ageMs),
      boxActions: c.boxActions,
      bandwidth: c.bandwidth,
      trashPlaces: c.trashPlaces,
      apiUrl: config.remote.apiUrl,
      close: () => c.close(),
    };
  };
}
