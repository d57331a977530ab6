/**
 * The local half of the daemon: one watcher per root, hints → echo filter → engine.hintLocal → a pass.
 *
 * A watcher that cannot start, hits the inotify limit or fails reports 'degraded'; from then on this root gets a
 * full rescan every `fallbackScanMs`, and status and the log say so. It never goes silently stale.
 */
import { raceTimeout } from '../../core/race-timeout.js';
import { asRelPath, type RelPath, type SyncRoot } from '../../core/model.js';
import type { Engine } from '../../engine/types.js';
import type { Logger } from '../../logger.js';
import type { Journal } from '../../ports/journal.js';
import type { LocalFs } from '../../ports/local-fs.js';
import type { LocalWatcher, WatcherHealth } from '../../ports/local-watcher.js';
import { chooseWatcher, createWatcher, type WatcherChoice } from '../../local/watcher-factory.js';
import type { WatcherKind } from '../../local/watcher-options.js';
import type { WatcherStatus } from '../control/control-protocol.js';
import { dropEchoes } from './echo-filter.js';
import type { PassRunner } from './pass-runner.js';

export interface LocalSideDeps {
  readonly roots: readonly SyncRoot[];
  readonly engine: Engine;
  readonly journal: Journal;
  /** The disk door of each root (echo filter, root checks). */
  readonly localFsFor: (root: SyncRoot) => Pick<LocalFs, 'stat' | 'rootExists'>;
  readonly passes: PassRunner;
  readonly log: Logger;
  readonly isIgnoredFor: (root: SyncRoot) => (path: string, isDir: boolean) => boolean;
  readonly watcherKind: WatcherKind;
  readonly fallbackScanMs: number;
  /** A path written without pause is hinted at least this often (HintBatcherOptions.maxSettleMs). */
  readonly maxSettleMs?: number;
  readonly maxWatches?: number | undefined;
  /** A fresh name for a barrier file (a temp name of this state dir: a leftover is cleaned up as one). */
  readonly tempName: () => string;
}

interface RootWatch {
  readonly root: SyncRoot;
  readonly watcher: LocalWatcher;
  health: WatcherHealth;
  fallbackTimer: NodeJS.Timeout | null;
  lastFallbackScanAtMs: number | null;
}

export class LocalSide {
  private readonly watches: RootWatch[] = [];
  private readonly missing: SyncRoot[] = [];
  private closed = false;
  /** Hint batches between the watcher and the engine (the echo filter's stats): a barrier waits for them. */
  private readonly handing = new Set<Promise<void>>();
  /** The kind that runs: 'inotify' falls back to 'dirs' when its native addon cannot load (said once, here). */
  private readonly choice: WatcherChoice;

  constructor(private readonly deps: LocalSideDeps) {
    this.choice = chooseWatcher(deps.watcherKind);
    if (this.choice.note) deps.log.warn({ asked: deps.watcherKind, kind: this.choice.kind }, this.choice.note);
  }

  /**
   * Start a watcher on every root that exists. A root folder that does not exist yet is left for
   * `startMissing()`, called after the first pass: the engine creates a missing root on a first run (and refuses
   * to when files were in sync there, the unmounted-disk guard), so the watcher must not create it.
   */
  async start(): Promise<void> {
    for (const root of this.deps.roots) {
      if (!(await this.deps.localFsFor(root).rootExists())) {
        this.missing.push(root);
        continue;
      }
      await this.startRoot(root);
    }
  }

  async startMissing(): Promise<void> {
    // A root stays in `missing` until its watcher is registered, so status never shows it in neither list.
    for (const root of [...this.missing]) {
      if (this.closed) return;
      if (await this.deps.localFsFor(root).rootExists()) {
        const i = this.missing.indexOf(root);
        if (i >= 0) this.missing.splice(i, 1);
        await this.startRoot(root);
      } else {
        this.deps.log.warn({ root: root.localPath }, `${root.localPath} does not exist; not watching it (see boxsync status)`);
      }
    }
  }

  /**
   * Watch the root's folder afresh: after the user accepted a new local folder for it (a confirmed
   * local-root-missing guard), the old watcher still watches the folder that was replaced.
   */
  async restartRoot(rootId: string): Promise<void> {
    const i = this.watches.findIndex((w) => w.root.id === rootId);
    if (i < 0 || this.closed) return;
    const [old] = this.watches.splice(i, 1);
    if (old!.fallbackTimer) clearInterval(old!.fallbackTimer);
    await old!.watcher.close();
    if (await this.deps.localFsFor(old!.root).rootExists()) await this.startRoot(old!.root);
    else this.missing.push(old!.root);
  }

  private async startRoot(root: SyncRoot): Promise<void> {
    const watcher = createWatcher(this.choice.kind, {
      rootPath: root.localPath,
      isIgnored: this.deps.isIgnoredFor(root),
      fallbackScanMs: this.deps.fallbackScanMs,
      ...(this.deps.maxSettleMs === undefined ? {} : { maxSettleMs: this.deps.maxSettleMs }),
      ...(this.deps.maxWatches === undefined ? {} : { maxWatches: this.deps.maxWatches }),
    });
    const w: RootWatch = { root, watcher, health: { state: 'starting' }, fallbackTimer: null, lastFallbackScanAtMs: null };
    this.watches.push(w);
    try {
      await watcher.start(
        (hints) => {
          // A batch that fails (its stats, the journal's read; or the journal closed under it as the daemon stops)
          // is logged, never left to crash the daemon as an unhandled rejection: its paths are found again by the
          // next full pass, as after a restart.
          const p = this.onHints(root, hints)
            .catch((e: unknown) => this.deps.log[this.closed ? 'debug' : 'error']({ err: e, root: root.id }, 'local change hints could not be handed to the engine; the next full pass finds them'))
            .finally(() => this.handing.delete(p));
          this.handing.add(p);
        },
        (h) => this.onHealth(w, h),
      );
    } catch (e) {
      this.onHealth(w, {
        state: 'degraded',
        reason: `file watcher could not start (${e instanceof Error ? e.message : String(e)}); falling back to a full scan every ${Math.round(this.deps.fallbackScanMs / 1000)} s`,
        fallbackScanMs: this.deps.fallbackScanMs,
      });
    }
    if (w.health.state === 'ok') this.deps.log.info({ root: root.localPath, kind: this.choice.kind, watches: w.health.watches }, 'watching for local changes');
  }

  status(): WatcherStatus[] {
    const missing: WatcherStatus[] = this.missing.map((root) => ({
      root: root.id,
      localPath: root.localPath,
      kind: this.choice.kind,
      health: { state: 'starting' },
      lastFallbackScanAtMs: null,
    }));
    return missing.concat(this.watches.map((w) => ({
      root: w.root.id,
      localPath: w.root.localPath,
      kind: this.choice.kind,
      health: w.watcher.health().state === 'starting' ? w.health : w.watcher.health(),
      lastFallbackScanAtMs: w.lastFallbackScanAtMs,
    })));
  }

  /**
   * The `sync --once` hand-off's barrier (session.ts): every local change made before this call has been handed to
   * the engine as a hint when it resolves. Per root, a file made at its top must come back through its watcher
   * (LocalWatcher.barrier). The roots whose watcher cannot say so (missing, degraded, still starting, a watcher
   * without a barrier, no answer within `timeoutMs`) come back with the reason: the caller scans them in full.
   */
  async barrier(timeoutMs: number): Promise<{ readonly root: SyncRoot; readonly reason: string }[]> {
    const unsure: { root: SyncRoot; reason: string }[] = this.missing.map((root) => ({ root, reason: 'its folder is not watched (it did not exist when the daemon started)' }));
    await Promise.all(this.watches.map(async (w) => {
      if (w.watcher.barrier === undefined) {
        unsure.push({ root: w.root, reason: `the ${this.choice.kind} watcher cannot confirm it has reported every change` });
        return;
      }
      const name = this.deps.tempName();
      try {
        await w.watcher.barrier(name, timeoutMs);
      } catch (e) {
        unsure.push({ root: w.root, reason: e instanceof Error ? e.message : String(e) });
      }
    }));
    // The batches the barriers flushed are on their way through the echo filter (a stat each): wait until the
    // engine has them, within the same bound.
    const deadline = Date.now() + timeoutMs;
    while (this.handing.size > 0) {
      const left = deadline - Date.now();
      if (left <= 0 || (await raceTimeout(Promise.allSettled([...this.handing]), left)) === null) {
        for (const w of this.watches) if (!unsure.some((u) => u.root === w.root)) unsure.push({ root: w.root, reason: `its changes were still being checked after ${timeoutMs} ms` });
        break;
      }
    }
    return unsure;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const w of this.watches) {
      if (w.fallbackTimer) clearInterval(w.fallbackTimer);
      await w.watcher.close();
    }
  }

  private async onHints(root: SyncRoot, hints: readonly { path: RelPath; type: 'change' | 'rescan' }[]): Promise<void> {
    if (this.closed) return;
    if (hints.some((h) => h.type === 'rescan')) {
      this.deps.passes.request('full');
      return;
    }
    const paths = await dropEchoes(this.deps.localFsFor(root), this.deps.journal, root, hints.map((h) => h.path));
    if (paths.length === 0 || this.closed) return;
    if (paths.length >= BURST_HINTS) paths.push(...parentFolders(paths));
    this.deps.log.debug({ root: root.localPath, count: paths.length, paths: paths.slice(0, 20) }, 'local change hints');
    this.deps.engine.hintLocal(root.id, paths);
    this.deps.passes.request('hint');
  }

  private onHealth(w: RootWatch, h: WatcherHealth): void {
    w.health = h;
    if (h.state !== 'degraded' || w.fallbackTimer || this.closed) return;
    this.deps.log.warn({ root: w.root.localPath, reason: h.reason }, `watcher degraded for ${w.root.localPath}: ${h.reason}`);
    w.fallbackTimer = setInterval(() => {
      w.lastFallbackScanAtMs = Date.now();
      this.deps.passes.request('full');
    }, h.fallbackScanMs);
    w.fallbackTimer.unref();
  }
}

/**
 * A batch this large may have overflowed the kernel's inotify queue (fs.inotify.max_queued_events, 16384 by
 * default), and libuv drops the overflow notice silently. The folders the burst touched are hinted too, and
 * the engine rescans a hinted folder's subtree, so files whose events were lost in those folders are found.
 */
const BURST_HINTS = 1_000;

function parentFolders(paths: readonly RelPath[]): RelPath[] {
  const parents = new Set<string>();
  for (const p of paths) {
    const slash = p.lastIndexOf('/');
    if (slash > 0) parents.add(p.slice(0, slash));
  }
  return [...parents].map(asRelPath);
}
