/**
 * No path is forgotten: at the end of every pass the daemon either has nothing out of sync or
 * has a wake-up scheduled.
 *
 * - After a pass: hints the engine still holds (a pass that did not finish gives back what it took; hints that
 *   came in meanwhile) get a pass: at once after a converged pass, else after a backoff (core/retry.ts
 *   unfinishedPassBackoff, reset by a converged pass) so a pass that keeps failing cannot spin.
 * - When the daemon goes idle (throttled: at most every 30 s, and at most 5 % of the time; an idle state met
 *   within the interval is checked when it ends): the journal is read
 *   for paths out of sync (engine/out-of-sync.ts). One with a failure row waits for its retry wake-up or is parked
 *   with its reason; one a pass deferred as settling has its own wake time (engine/scope/hint-ledger.ts). Any other is a forgotten path: it is
 *   logged and hinted, and a pass is asked for. A path hinted this way that is still out of sync at the next
 *   check is not hinted again (the planner has nothing to do for it: no spin), until it is found in sync.
 * - The check reads every row of the journal's three trees (seconds at a million files), so it runs in slices of
 *   about CHECK_SLICE_MS (core/slices.ts) with the event loop free between them: a status query, a watcher event or
 *   SIGTERM waits at most a slice. A pass asked for meanwhile (a live change) runs first: the check pauses while a
 *   pass runs or is wanted, and resumes where it stopped. Rows that pass wrote may have been read before it, so when
 *   a pass ran during the check, each path found is looked up again (pathOutOfSync) and only what is still out of
 *   sync is acted on. A check paused longer than CHECK_PAUSE_MAX_MS is dropped (the next idle state checks afresh);
 *   close() ends it at the next slice.
 */
import type { RelPath, SyncRoot } from '../../core/model.js';
import { escapeText } from '../../core/escape.js';
import { nominalDelayMs, unfinishedPassBackoff } from '../../core/retry.js';
import { settlingPaths } from '../../engine/clean-mark.js';
import { outOfSyncSteps, pathOutOfSync, type OutOfSyncPath } from '../../engine/out-of-sync.js';
import { nextTurn, runSliced, type Sliced, type SliceStats, type Steps } from '../../core/slices.js';
import type { Engine, RunSummary } from '../../engine/types.js';
import type { IdleCheckStatus } from '../control/control-protocol.js';
import type { Logger } from '../../logger.js';
import type { Journal } from '../../ports/journal.js';

const CHECK_MIN_INTERVAL_MS = 30_000;
const CHECK_COST_FACTOR = 20;
const CHECK_LIMIT = 200;
/** Each slice of the check holds the event loop about this long. */
const CHECK_SLICE_MS = 25;
/** While a pass runs, the paused check looks again this often. */
const CHECK_PAUSE_POLL_MS = 200;
/** A check paused this long (passes one after another) is dropped; the next idle state starts a fresh one. */
const CHECK_PAUSE_MAX_MS = 10 * 60_000;

export interface ConvergenceWatchDeps {
  readonly engine: Pick<Engine, 'hasHints' | 'hintLocal'>;
  readonly journal: Journal;
  readonly roots: readonly SyncRoot[];
  readonly isIgnoredFor: (root: SyncRoot) => (path: string, isDir: boolean) => boolean;
  /** Ask for a hinted pass. */
  readonly request: () => void;
  /** A pass is running or wanted (the journal is read only between passes). */
  readonly busy: () => boolean;
  readonly log: Logger;
  readonly minCheckIntervalMs?: number;
  /** The length of a slice of the check (default CHECK_SLICE_MS; 0: every pause point ends a slice). */
  readonly sliceMs?: number;
  /** Told when a check ended (done false: dropped or closed), with its slices; for the tests and the log. */
  readonly onChecked?: (c: { readonly done: boolean; readonly forgotten: number; readonly stats: SliceStats }) => void;
}

export class ConvergenceWatch {
  private wakeTimer: NodeJS.Timeout | null = null;
  private checkTimer: NodeJS.Timeout | null = null;
  /** Passes in a row that left hints behind without converging (for the backoff). */
  private unfinished = 0;
  private lastCheckAtMs = Number.NEGATIVE_INFINITY;
  private checkCostMs = 0;
  /** Paths this watch hinted as forgotten, per root: not hinted again while they stay out of sync. */
  private readonly rehinted = new Map<string, Set<RelPath>>();
  private closed = false;
  /** The check running in slices (paused between them), if any. */
  private checking: Promise<void> | null = null;
  /** A pass ran (or was wanted) while the running check was paused: what it found is looked up again. */
  private raced = false;
  /** The running check's slices and pauses so far, and the checks finished (for `status`). */
  private slices = 0;
  private pauses = 0;
  private done = 0;

  constructor(private readonly deps: ConvergenceWatchDeps) {}

  /** The wake-up a pass leaves behind when the engine still holds hints. */
  afterPass(s: Pick<RunSummary, 'outcome'>): void {
    if (this.checking !== null) this.raced = true;
    if (this.closed || s.outcome === 'fatal' || s.outcome === 'guard') return;
    if (s.outcome === 'converged') this.unfinished = 0;
    if (!this.deps.engine.hasHints()) return;
    if (s.outcome === 'converged') {
      this.deps.request();
      return;
    }
    if (this.wakeTimer) return;
    this.unfinished += 1;
    const ms = nominalDelayMs(unfinishedPassBackoff, this.unfinished);
    this.wakeTimer = setTimeout(() => {
      this.wakeTimer = null;
      if (!this.closed) this.deps.request();
    }, ms);
    this.wakeTimer.unref();
  }

  /** The daemon has run every pass asked for: read the journal for a forgotten path (throttled). */
  idle(nowMs = Date.now()): void {
    // A check paused for a pass resumes by itself (between()).
    if (this.closed || this.checking !== null || this.deps.busy() || this.deps.engine.hasHints()) return;
    const interval = Math.max(this.deps.minCheckIntervalMs ?? CHECK_MIN_INTERVAL_MS, CHECK_COST_FACTOR * this.checkCostMs);
    if (nowMs - this.lastCheckAtMs < interval) {
      // Checked a moment ago: this idle state is checked when the interval is over (unless a pass runs first).
      this.checkTimer ??= setTimeout(() => {
        this.checkTimer = null;
        this.idle();
      }, this.lastCheckAtMs + interval - nowMs);
      this.checkTimer.unref();
      return;
    }
    this.lastCheckAtMs = nowMs;
    this.raced = false;
    this.slices = 1;
    this.pauses = 0;
    const t0 = performance.now();
    const failed = (e: unknown): void => {
      this.checking = null;
      this.deps.log.warn({ err: e }, `could not read the journal for paths out of sync (${e instanceof Error ? e.message : String(e)}); the next idle check tries again`);
    };
    let run: Sliced<number> | Promise<Sliced<number>>;
    try {
      run = runSliced(this.check(), { sliceMs: this.deps.sliceMs ?? CHECK_SLICE_MS, between: () => this.between() });
    } catch (e) {
      failed(e);
      return;
    }
    if (!(run instanceof Promise)) {
      this.checked(run, t0);
      return;
    }
    this.checking = run.then((r) => this.checked(r, t0), failed);
  }

  /** The check is over (or dropped): its cost sets the interval to the next one (the work, not the pauses). */
  private checked(r: Sliced<number>, t0: number): void {
    this.checking = null;
    this.checkCostMs = r.stats.workMs;
    if (r.done) this.done += 1;
    const forgotten = r.done ? r.value : 0;
    if (r.stats.slices > 1 && (r.done || !this.closed)) {
      this.deps.log.info(
        { done: r.done, slices: r.stats.slices, pauses: this.pauses, workMs: Math.round(r.stats.workMs), longestSliceMs: Math.round(r.stats.longestMs), wallMs: Math.round(performance.now() - t0), forgotten },
        r.done
          ? `idle check of the journal: ${Math.round(r.stats.workMs)} ms of reading in ${r.stats.slices} slices (the longest ${Math.round(r.stats.longestMs)} ms)`
          : 'idle check of the journal dropped (the daemon is closing, or passes kept it paused); the next idle state checks again',
      );
    }
    this.deps.onChecked?.({ done: r.done, forgotten, stats: r.stats });
    if (forgotten > 0 && !this.closed) this.deps.request();
  }

  /**
   * Between two slices: one turn of the event loop, then wait (bounded) while a pass runs or is wanted. Not for
   * hints alone: those a pass gave back wait for their backoff (afterPass), which a check need not wait for.
   */
  private async between(): Promise<boolean> {
    await nextTurn();
    const since = Date.now();
    if (!this.closed && this.deps.busy()) this.pauses += 1;
    while (!this.closed && this.deps.busy()) {
      this.raced = true;
      if (Date.now() - since > CHECK_PAUSE_MAX_MS) return false;
      await new Promise<void>((resolve) => setTimeout(resolve, CHECK_PAUSE_POLL_MS).unref());
    }
    if (!this.closed) this.slices += 1;
    return !this.closed;
  }

  status(): IdleCheckStatus {
    const running = this.checking !== null;
    return { running, slices: running ? this.slices : 0, pauses: running ? this.pauses : 0, done: this.done };
  }

  close(): void {
    this.closed = true;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    if (this.checkTimer) clearTimeout(this.checkTimer);
    this.wakeTimer = null;
    this.checkTimer = null;
  }

  private *check(): Steps<number> {
    let total = 0;
    for (const root of this.deps.roots) {
      // A one-way root keeps differences by design (what it does not sync in that direction).
      if (root.direction !== 'two-way') continue;
      const isIgnored = this.deps.isIgnoredFor(root);
      let all: OutOfSyncPath[] = yield* outOfSyncSteps(this.deps.journal, root, isIgnored, CHECK_LIMIT);
      // From here on, no pause: the failures, the settling paths and the hints are read and written in one piece.
      if (this.raced) all = all.filter((o) => pathOutOfSync(this.deps.journal, root, isIgnored, o.path) !== null);
      const failed = new Set(this.deps.journal.failures(root.id).map((f) => f.path));
      const settling = new Set(settlingPaths(this.deps.journal, root) ?? []);
      const before = this.rehinted.get(root.id) ?? new Set<RelPath>();
      const found = all.filter((o) => !failed.has(o.path) && !settling.has(o.path));
      const now = new Set(found.map((o) => o.path));
      const fresh = found.filter((o) => !before.has(o.path));
      // Forget what is in sync again; keep what was hinted and is still out (never hinted twice in a row).
      this.rehinted.set(root.id, new Set([...before].filter((p) => now.has(p)).concat(fresh.map((o) => o.path))));
      if (fresh.length === 0) continue;
      this.deps.log.warn(
        { root: root.id, paths: fresh.slice(0, 20).map((o) => `${escapeText(o.path)} (${o.why})`) },
        `${fresh.length} path(s) out of sync with no pass planned for them; planning them now`,
      );
      this.deps.engine.hintLocal(root.id, fresh.map((o) => o.path));
      total += fresh.length;
    }
    return total;
  }
}
