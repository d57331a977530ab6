/**
 * The composition root: the ONLY place adapters are constructed. From a validated Config it builds
 *
 *   journal (stateDir/journal.db) ─┐
 *   Box adapter (store + changes) ─┼─► engine (createEngine)      used by `sync --once`, the demo and the daemon
 *   LocalFs + ignore rules per root┘
 *
 * The caller holds the state-dir lock (daemon/lock.ts) before calling `compose` and releases it after `close()`.
 * `journalRebuilt` says why the journal was set aside and started fresh (the engine then does a full scan and
 * listing; user files are not touched for it). Errors: SyncError `journal_unusable` (fatal) when the journal
 * cannot be opened at all.
 */
import { mkdir } from 'node:fs/promises';
import * as nodeFs from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config/index.js';
import type { SyncRoot, RootId } from '../core/model.js';
import { createEngine } from '../engine/index.js';
import { planDryRun, type DryRunReport } from '../engine/dry-run.js';
import type { Engine, EngineDeps, EngineEvents } from '../engine/types.js';
import { openJournal, openJournalCheckedApart } from '../journal/index.js';
import { createIgnoreMatcher, ignoreReason, ignoreSalt, readIgnoreFile, type IgnoreMatcher } from '../local/ignore.js';
import { fingerprintOf, type ScopeRules } from '../engine/scope-change.js';
import { withSelective } from '../engine/selective.js';
import { writeSelection } from '../config/edit-selection.js';
import { escapeText } from '../core/escape.js';
import { createLocalFs } from '../local/local-fs.js';
import { FileWorkerPool } from '../local/file-workers.js';
import { writeUrlToFile } from '../local/url-to-file.js';
import { loadTempKey, TempNames } from '../local/temp-name.js';
import { createLocalTrash, type LocalTrash } from '../local/local-trash.js';
import type { TrashPlaces } from '../local/local-trash-entries.js';
import type { WatcherKind } from '../local/watcher-options.js';
import type { Logger } from '../logger.js';
import { systemClock, type Clock } from '../ports/clock.js';
import type { Journal } from '../ports/journal.js';
import type { LocalFs } from '../ports/local-fs.js';
import type { LocalWatcher } from '../ports/local-watcher.js';
import type { RemoteChanges, StreamType } from '../ports/remote-changes.js';
import type { RemoteStore } from '../ports/remote-store.js';
import { createBoxAdapter, type BoxActions } from '../remote/box/index.js';
import type { Bandwidth } from '../remote/box/bandwidth.js';

export interface ComposeOptions {
  readonly config: Config;
  readonly logger: Logger;
  readonly events?: EngineEvents;
  readonly clock?: Clock;
  /**
   * The Box event stream the engine catches up from; default the config's `streamType` (what `sync --once`
   * reads). The daemon passes its own setting, and tells the engine if its long poll falls back (Engine.useStream).
   */
  readonly streamType?: StreamType;
  /** The journal file; default `<stateDir>/journal.db`. `sync --once --dry-run` points it at a throw-away copy. */
  readonly journalFile?: string;
  /** The dry run: nothing but the journal (a copy) is written to the state dir. */
  readonly readOnlyStateDir?: boolean;
  /**
   * `--bwlimit RATE` (sync, daemon), read by parseRate: the cap in bytes per second, or null for none. It wins over
   * the config's http.bwlimitKiBps; undefined (no --bwlimit): the config's cap.
   */
  readonly bandwidthBytesPerSec?: number | null | undefined;
  /**
   * A long-running process that answers live changes while it transfers (the daemon): the local adapters give
   * other work turns between a download's file calls (LocalFsOptions.liveChanges). Default false (`sync --once`).
   */
  readonly liveChanges?: boolean;
  /**
   * `selective exclude --free-space`: a deselected folder's local copy is removed, not moved to the local trash. A
   * function is asked each time (the daemon's live `selective exclude --free-space`).
   */
  readonly freeSpace?: boolean | (() => boolean);
  /** The journal's SQLite page cache in KiB (OpenJournalOptions.cacheKiB); default better-sqlite3's. */
  readonly journalCacheKiB?: number;
  /**
   * The daemon: a due integrity check of the journal runs in a process of its own (openJournalCheckedApart);
   * `signal` stops it (SIGTERM during the start: compose then rejects with an AbortError), `repeat` makes it last
   * (BOXSYNC_JOURNAL_CHECK_REPEAT, a test's knob).
   */
  readonly journalCheckApart?: boolean | { readonly signal?: AbortSignal; readonly repeat?: number };
}

export interface Composition {
  readonly config: Config;
  readonly engine: Engine;
  readonly journal: Journal;
  readonly remote: RemoteStore;
  readonly changes: RemoteChanges;
  /** Box features beyond the sync port (shared links, versions, locks) for CLI commands. */
  readonly boxActions: BoxActions;
  /** The transfer bandwidth cap of the Box adapter (the daemon's `bwlimit` verb sets it live). */
  readonly bandwidth: Bandwidth;
  /** The local trash of the state dir; `purgeOlderThan(retentionDays)` is the daemon's localTrashPurge job. */
  readonly localTrash: LocalTrash;
  /** Where that trash keeps its entries, for `trash list|restore` (the item commands). */
  readonly trashPlaces: TrashPlaces;
  readonly roots: readonly SyncRoot[];
  localFsFor(root: SyncRoot): LocalFs;
  /** A fresh temp-file name of this state dir (local/temp-name.ts): a leftover is cleaned up as one of ours. */
  tempName(): string;
  /** The ignore rules of a root: built-in defaults, folders[].exclude and the root's .boxsyncignore. */
  isIgnoredFor(root: SyncRoot): IgnoreMatcher;
  /** Why the journal was rebuilt on open, or null when it opened cleanly. */
  readonly journalRebuilt: string | null;
  /** What the next run would do, observed into this composition's journal (a copy: see engine/dry-run.ts). */
  planDryRun(opts?: { fullRescan?: boolean; signal?: AbortSignal }): Promise<DryRunReport>;
  /** Close the engine (checkpointing transfers), then the Box adapter and the journal. Idempotent. */
  close(): Promise<void>;
}

export async function compose(opts: ComposeOptions): Promise<Composition> {
  const { config, logger } = opts;
  const clock = opts.clock ?? systemClock;
  await mkdir(config.stateDir, { recursive: true, mode: 0o700 });

  const journalOpts = {
    logger: logger.child({ component: 'journal' }),
    ...(opts.journalCacheKiB === undefined ? {} : { cacheKiB: opts.journalCacheKiB }),
  };
  const journalFile = opts.journalFile ?? join(config.stateDir, 'journal.db');
  const apart = opts.journalCheckApart;
  const opened = apart ? await openJournalCheckedApart(journalFile, { ...journalOpts, ...(apart === true ? {} : apart) }) : openJournal(journalFile, journalOpts);
  const journal = opened.journal;
  try {
    const fileWorkers = config.http.fileWorkers === 0 ? undefined : new FileWorkerPool({ ...(config.http.fileWorkers === 'auto' ? {} : { size: config.http.fileWorkers }), minFiles: config.http.fileWorkersMinFiles, logger: logger.child({ component: 'file-workers' }) });
    const box = createBoxAdapter({
      apiUrl: config.remote.apiUrl,
      uploadUrl: config.remote.uploadUrl,
      tokenUrl: config.remote.tokenUrl,
      auth: config.auth,
      rateLimit: {
        ...(config.rateLimit.apiCallsPerMinute === undefined ? {} : { callsPerMinute: config.rateLimit.apiCallsPerMinute }),
        ...(config.rateLimit.uploadsPerMinute === undefined ? {} : { uploadsPerMinute: config.rateLimit.uploadsPerMinute }),
      },
      maxRetryAfterMs: config.http.maxRetryAfterSec * 1000,
      stallTimeoutMs: config.http.stallTimeoutSec * 1000,
      listingDeadlineMs: config.http.listingDeadlineSec * 1000,
      downloadDeadline: { baseMs: config.http.downloadDeadlineSec * 1000, minBytesPerSec: config.http.downloadMinRateKiBps * 1024 },
      bandwidthBytesPerSec: opts.bandwidthBytesPerSec !== undefined ? opts.bandwidthBytesPerSec : config.http.bwlimitKiBps === null ? null : config.http.bwlimitKiBps * 1024,
      uploadSessions: journal.uploadSessions,
      ...(config.http.zipMinFiles === 0 ? {} : { zipDownloads: { scratchDir: join(config.stateDir, 'zip'), minFiles: config.http.zipMinFiles, ...(fileWorkers === undefined ? {} : { writeUrlTo: writeUrlToFile(fileWorkers) }) } }),
      // The root logger: each part of the Box client names its own component (one `component` key per line).
      logger,
      clock,
    });

    const ignoreByRoot = new Map<RootId, IgnoreMatcher>();
    const scopeByRoot = new Map<RootId, ScopeRules>();
    const marker = config.safety.rootMarker;
    const skippedByRoot = new Map<RootId, Set<string>>();
    for (const root of config.folders) {
      const ignoreFile = await readIgnoreFile(nodeFs, root.localPath);
      // Selective sync's unselected folders are ignored like an exclude rule, with their own reason (selective.ts).
      const skipped = new Set<string>();
      skippedByRoot.set(root.id, skipped);
      const sel = withSelective(root, createIgnoreMatcher([...root.exclude, ...ignoreFile]), { fingerprint: fingerprintOf(root.exclude, ignoreFile), reasonFor: ignoreReason(root.exclude) }, skipped);
      // The root marker (safety.rootMarker) is never synced, on either side.
      ignoreByRoot.set(root.id, marker === null ? sel.isIgnored : (p, isDir) => p === marker || sel.isIgnored(p, isDir));
      scopeByRoot.set(root.id, sel.rules);
    }
    const isIgnoredFor = (root: SyncRoot): IgnoreMatcher => {
      const m = ignoreByRoot.get(root.id);
      if (!m) throw new Error(`compose: unknown root ${root.id} (${root.localPath})`);
      return m;
    };

    // One trash per state dir, shared by all roots; the daemon purges it on the localTrashPurge schedule.
    const localTrash = createLocalTrash({ mode: config.localTrash.mode, stateDir: config.stateDir, fs: nodeFs, logger: logger.child({ component: 'local-trash' }) });
    const localFsByRoot = new Map<RootId, LocalFs>();
    // Temp files of this state dir carry a tag made with this key (local/temp-name.ts): only they are cleaned up.
    const tempKey = loadTempKey(config.stateDir, { create: opts.readOnlyStateDir !== true });
    const tempNames = new TempNames(tempKey);
    const localFsFor = (root: SyncRoot): LocalFs => {
      let fs = localFsByRoot.get(root.id);
      if (!fs) {
        fs = createLocalFs({ rootPath: root.localPath, fs: nodeFs, trash: localTrash, logger: logger.child({ component: 'local', root: root.id }), liveChanges: opts.liveChanges === true, tempKey, fileWorkers });
        localFsByRoot.set(root.id, fs);
      }
      return fs;
    };

    const engineDeps: EngineDeps = {
        journal,
        remote: box.store,
        changes: box.changes,
        roots: config.folders,
        localFsFor,
        isIgnoredFor,
        skipNewFolder: (root, name) => skipNewFolder(config, root, name, skippedByRoot.get(root.id)),
        scopeRulesFor: (root) => scopeByRoot.get(root.id) ?? { fingerprint: fingerprintOf(root.exclude, []), reasonFor: ignoreReason(root.exclude) },
        // Read at each full scan: selective sync's choices can change while the daemon runs (the fingerprint's getter).
        listingSaltFor: (root) => {
          const rules = scopeByRoot.get(root.id);
          return rules === undefined ? undefined : ignoreSalt(rules.fingerprint, marker);
        },
        logger: logger.child({ component: 'engine' }),
        clock,
        options: {
          streamType: opts.streamType ?? config.streamType,
          transferConcurrency: config.transferConcurrency,
          growingUploads: opts.liveChanges === true,
          windowEntries: config.planWindowEntries,
          maxDeletes: config.safety.maxDeletes,
          maxDeleteFraction: config.safety.maxDeleteFraction,
          rootMarker: marker,
          get freeSpace(): boolean {
            return typeof opts.freeSpace === 'function' ? opts.freeSpace() : opts.freeSpace === true;
          },
        },
      };
    const engine = createEngine(engineDeps, opts.events ?? {});

    let closed: Promise<void> | null = null;
    return {
      config,
      engine,
      journal,
      remote: box.store,
      changes: box.changes,
      boxActions: box.actions,
      bandwidth: box.bandwidth,
      localTrash,
      trashPlaces: { mode: config.localTrash.mode, stateDir: config.stateDir, fs: nodeFs },
      roots: config.folders,
      localFsFor,
      tempName: () => tempNames.next(),
      isIgnoredFor,
      journalRebuilt: opened.rebuilt ? opened.reason : null,
      // A new Box folder is skipped as the real run would, but the config file is left as it is.
      planDryRun: (o = {}) => planDryRun({ ...engineDeps, skipNewFolder: (root, name) => skipNewFolder(config, root, name, skippedByRoot.get(root.id), true) }, o),
      close: () =>
        (closed ??= (async () => {
          try {
            await engine.close();
            await box.close();
          } finally {
            await fileWorkers?.close();
            journal.close();
          }
        })()),
    };
  } catch (e) {
    journal.close();
    throw e;
  }
}


/**
 * `selective.newFolders: "skip"`: `name` (a new folder at the top of the pair on Box) is ignored by this process at
 * once and written to the pair's `selective.unselected` in the config file, so every later run leaves it too.
 */
async function skipNewFolder(config: Config, root: SyncRoot, name: string, skipped: Set<string> | undefined, dryRun = false): Promise<string> {
  skipped?.add(name);
  const index = config.folders.findIndex((r) => r.id === root.id);
  const what = `${escapeText(name)}/ appeared on Box and is not kept on this disk (folders[${index}].selective.newFolders is "skip")`;
  const keep = `\`boxsync selective include ${escapeText(join(root.localPath, name))}\` keeps it`;
  if (dryRun) return `${escapeText(name)}/ appeared on Box: the real run leaves it unselected (selective.newFolders is "skip"), adds it to folders[${index}].selective.unselected and downloads nothing of it; ${keep}`;
  try {
    await writeSelection(config.file, index, [...new Set([...(root.unselected ?? []), ...(skipped ?? [name])])].sort());
    return `${what}: it is added to folders[${index}].selective.unselected; ${keep}`;
  } catch (e) {
    return `${what}, but the config could not record it (${escapeText(e instanceof Error ? e.message : String(e))}): this process skips it, the next one may download it; ${keep}`;
  }
}
