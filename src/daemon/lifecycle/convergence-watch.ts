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
 */
import type { RelPath, SyncRoot } from '../../core/model.js';
import { escapeText } from '../../core/escape.js';
import { nominalDelayMs, unfinishedPassBackoff } from '../../core/retry.js';
import { settlingPaths } from '../../engine/clean-mark.js';
import { outOfSync } from '../../engine/out-of-sync.js';
import type { Engine, RunSummary } from '../../engine/types.js';
import type { Logger } from '../../logger.js';
import type { Journal } from '../../ports/journal.js';

const CHECK_MIN_INTERVAL_MS = 30_000;
const CHECK_COST_FACTOR = 20;
const CHECK_LIMIT = 200;

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

  constructor(private readonly deps: ConvergenceWatchDeps) {}

  /** The wake-up a pass leaves behind when the engine still holds hints. */
  afterPass(s: Pick<RunSummary, 'outcome'>): void {
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
    if (this.closed || this.deps.busy() || this.deps.engine.hasHints()) return;
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
    const t0 = performance.now();
    let forgotten = 0;
    try {
      forgotten = this.check();
    } catch (e) {
      this.deps.log.warn({ err: e }, `could not read the journal for paths out of sync (${e instanceof Error ? e.message : String(e)}); the next idle check tries again`);
    }
    this.checkCostMs = performance.now() - t0;
    if (forgotten > 0) this.deps.request();
  }

  close(): void {
    this.closed = true;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    if (this.checkTimer) clearTimeout(this.checkTimer);
    this.wakeTimer = null;
    this.checkTimer = null;
  }

  private check(): number {
    let total = 0;
    for (const root of this.deps.roots) {
      // A one-way root keeps differences by design (what it does not sync in that direction).
      if (root.direction !== 'two-way') continue;
      const failed = new Set(this.deps.journal.failures(root.id).map((f) => f.path));
      const settling = new Set(settlingPaths(this.deps.journal, root) ?? []);
      const before = this.rehinted.get(root.id) ?? new Set<RelPath>();
      const found = outOfSync(this.deps.journal, root, this.deps.isIgnoredFor(root), CHECK_LIMIT).filter((o) => !failed.has(o.path) && !settling.has(o.path));
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
