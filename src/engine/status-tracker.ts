/**
 * What `status` shows, assembled on demand from the journal (in-sync counts, failures with their next retry)
 * and from the transfer queue (queued work, in-flight transfers, rate), plus the few facts only the engine
 * holds in memory (phase, conflicts made by this process, a held guard, a fatal error). Listeners are told on
 * every phase change and, throttled, on transfer progress.
 */
import { readSelecting } from './selective.js';
import type { RelPath, RootId, SyncRoot } from '../core/model.js';
import type { Clock } from '../ports/clock.js';
import type { Journal } from '../ports/journal.js';
import type { TransferQueue } from './transfer-queue.js';
import type { HeldGuard, Phase, ProblemStatus, RootStatus, StatusReport } from './types.js';
import { PARKED_MS } from './failures.js';
import { runSliced, type Sliced } from '../core/slices.js';

const LAST_SUCCESS_KEY = 'engine.lastSuccessfulSyncAtMs';
const PROGRESS_THROTTLE_MS = 250;
const MAX_CONFLICTS_SHOWN = 200;
/**
 * The in-sync counts are an aggregate over every synced row of a root (30 ms at 100,000 rows, ten times that at a
 * million). Reports sent to listeners during a pass (progress every 250 ms, each window's phases) reuse the last
 * count while it is younger than 1 s or 20 times what counting took, so counting costs at most about 5 % of the
 * time; the end of a pass counts afresh. So does a status query between passes, unless the count was taken since
 * the last pass ended (only passes write the merge base: it is exact until the next one, and before the first; an
 * idle daemon at a million files asked every 100 ms counted 0.3 s of every 6 s, seconds on a loaded machine, with
 * nothing else answered meanwhile); during a pass it reuses a recent count too: a client asking every 200 ms while the daemon's
 * first pass ran over 200,000 files cost that pass 12 % of its CPU in counts (issue 29 point 6).
 */
const PASS_PHASES: ReadonlySet<Phase> = new Set<Phase>(['scanning', 'listing', 'planning', 'transferring']);
const COUNT_MIN_AGE_MS = 1_000;
const COUNT_COST_FACTOR = 20;
/** countsReady: counts made again when a pass ended during the last one, before the query counts in one call. */
const COUNT_TRIES = 3;

export class StatusTracker {
  private phaseNow: Phase = 'starting';
  private readonly conflictList: { root: RootId; path: RelPath; copy: RelPath; atMs: number }[] = [];
  heldGuard: HeldGuard | null = null;
  fatal: { readonly code: string; readonly message: string } | null = null;
  private lastEmitMs = 0;
  private readonly counted = new Map<RootId, { readonly value: ReturnType<Journal['countSynced']>; readonly atMs: number; readonly passEnds: number }>();
  private countCostMs = 0;
  /** The roots whose in-sync count is running in slices, each with its end. */
  private readonly slicedCounts = new Map<RootId, Promise<void>>();
  private lastSuccessMs: number | undefined;
  /** Passes ended (the phase went idle or error from another): a count taken since the last one is exact out of a pass. */
  private passEnds = 0;

  constructor(
    private readonly deps: {
      journal: Journal;
      roots: readonly SyncRoot[];
      clock: Clock;
      queue: () => TransferQueue;
      onStatus?: ((s: StatusReport) => void) | undefined;
    },
  ) {}


  setPhase(phase: Phase): void {
    if (phase === this.phaseNow) return;
    this.phaseNow = phase;
    if (phase === 'idle' || phase === 'error') this.passEnds += 1;
    // The end of a pass counts afresh; the phases within one (a window's planning and transfers) may reuse a count.
    this.emit(true, phase === 'idle' || phase === 'error');
  }

  addConflict(c: { root: RootId; path: RelPath; copy: RelPath; atMs: number }): void {
    this.conflictList.push(c);
    if (this.conflictList.length > MAX_CONFLICTS_SHOWN) this.conflictList.shift();
  }

  /**
   * A converged run. In the journal when the run wrote to it anyway (`inJournal`); a run that wrote nothing keeps
   * the time in memory and in a note beside the journal (Journal.setNote: no WAL write, no fsync), so that a no-change
   * run costs the journal nothing and `status` (this process's, or a daemon's started later) still shows it.
   */
  markSuccess(atMs: number, inJournal = true): void {
    this.lastSuccessMs = atMs;
    const { journal } = this.deps;
    if (inJournal || journal.setNote === undefined) journal.setMeta(LAST_SUCCESS_KEY, String(atMs));
    else journal.setNote(LAST_SUCCESS_KEY, String(atMs));
  }

  /** The latest of this process's last success, the journal's and the note's (none: null). */
  private lastSuccess(): number | null {
    const { journal } = this.deps;
    const seen = [this.lastSuccessMs, journal.getMeta(LAST_SUCCESS_KEY), journal.getNote?.(LAST_SUCCESS_KEY)].map(Number).filter((v) => Number.isFinite(v));
    return seen.length === 0 ? null : Math.max(...seen);
  }

  /** Tell listeners; progress updates are throttled, phase changes are not. */
  emit(force = false, fresh = false): void {
    if (!this.deps.onStatus) return;
    const now = this.deps.clock.now();
    if (!force && now - this.lastEmitMs < PROGRESS_THROTTLE_MS) return;
    this.lastEmitMs = now;
    this.deps.onStatus(this.report(fresh));
  }

  /**
   * The report; `fresh` counts the in-sync rows again instead of using a recent count (see COUNT_MIN_AGE_MS); by
   * default, unless a pass is running.
   */
  report(fresh = !PASS_PHASES.has(this.phaseNow)): StatusReport {
    const { journal, roots, clock } = this.deps;
    const queue = this.deps.queue();
    const rate = queue.rateBytesPerSec();
    const rootStatus: RootStatus[] = roots.map((root) => {
      const queued = queue.queued(root.id);
      // Counted when first read, once: the progress display of `sync --once` never reads it, and a count of
      // 100,000 rows at the end of a no-change run cost 0.14 s. A status query (JSON) reads it at once.
      let inSync: ReturnType<Journal['countSynced']> | undefined;
      const count = (): ReturnType<Journal['countSynced']> => (inSync ??= this.inSync(root.id, fresh));
      return {
        root: root.id,
        localPath: root.localPath,
        remoteId: root.remoteId,
        get inSync() {
          return count();
        },
        queued,
        inFlight: queue.inFlight(root.id),
        rateBytesPerSec: rate,
        etaSec: rate > 0 ? Math.ceil(queued.bytes / rate) : queued.bytes === 0 ? 0 : null,
      };
    });
    const now = clock.now();
    const errors: ProblemStatus[] = journal.failures().map((f) => ({
      root: f.root,
      path: f.path,
      code: f.code,
      message: f.message,
      nextRetryAtMs: f.disposition === 'skip' || f.nextRetryAtMs - now >= PARKED_MS / 2 ? null : f.nextRetryAtMs,
      sinceMs: f.firstFailedAtMs ?? null,
    }));
    return {
      phase: queue.paused ? 'paused' : this.phaseNow,
      roots: rootStatus,
      conflicts: [...this.conflictList],
      errors,
      heldGuard: this.heldGuard,
      lastSuccessfulSyncAtMs: this.lastSuccess(),
      fatal: this.fatal,
      unsynced: journal.unsyncedPaths().filter((u) => roots.some((r) => r.id === u.root)),
      selecting: roots.flatMap((r) => readSelecting(journal, r.id).map((path) => ({ root: r.id, path }))),
    };
  }

  /**
   * Makes the counts a status query (report() with its default `fresh`) would take in one call ready in slices
   * instead (core/slices.ts), so that the query then reads them: the exact count between passes, and the first one,
   * were one synchronous aggregate (130 ms at a million rows) during which the daemon answered nothing. The answer is
   * the same: a count between passes is stored only when no pass ended while it ran (else it runs again, at most
   * COUNT_TRIES times; the query then counts in one call as before). During a pass, with a count to show, it does not
   * wait: report() answers with the last one and starts the due count in slices, as before. Never rejects: a count
   * that fails (the journal closed under it) leaves the query to count as before.
   */
  async countsReady(): Promise<void> {
    for (const root of this.deps.roots) {
      for (let tries = 0; tries < COUNT_TRIES; tries++) {
        const fresh = !PASS_PHASES.has(this.phaseNow);
        if (!this.countDue(root.id, fresh)) break;
        // During a pass, a due count runs in slices while the query is answered with the last one (report()).
        if (!fresh && this.counted.has(root.id)) break;
        if (!this.countInSlices(root.id)) return;
        await this.slicedCounts.get(root.id);
      }
    }
  }

  /** No count of `root` that report(fresh) may reuse: it would count. */
  private countDue(root: RootId, fresh: boolean): boolean {
    const last = this.counted.get(root);
    if (last === undefined) return true;
    // Out of a pass (between two, or before the first), a count taken since the last pass ended is exact.
    if (last.passEnds === this.passEnds && !PASS_PHASES.has(this.phaseNow)) return false;
    return fresh || this.deps.clock.now() - last.atMs >= Math.max(COUNT_MIN_AGE_MS, COUNT_COST_FACTOR * this.countCostMs);
  }

  private inSync(root: RootId, fresh: boolean): ReturnType<Journal['countSynced']> {
    const now = this.deps.clock.now();
    const last = this.counted.get(root);
    if (!this.countDue(root, fresh)) return last!.value;
    // During a pass, a count that is due runs in slices when the journal can (0.1-0.3 s in one call at a million
    // rows, during which the daemon answered nothing); the last count is shown until it ends (a small count ends
    // in its first slice, at once).
    if (!fresh && last !== undefined && this.countInSlices(root)) return this.counted.get(root)!.value;
    const t0 = performance.now();
    const value = this.deps.journal.countSynced(root);
    this.countCostMs = performance.now() - t0;
    this.counted.set(root, { value, atMs: now, passEnds: this.passEnds });
    return value;
  }

  /** A count of `root` running in slices (core/slices.ts), started now or before; false when the journal has none. */
  private countInSlices(root: RootId): boolean {
    if (this.slicedCounts.has(root)) return true;
    const steps = this.deps.journal.countSyncedSteps?.(root);
    if (steps === undefined) return false;
    // Stored as of the pass count at its start: a pass that ended meanwhile may have written what it did not see.
    const passEnds = this.passEnds;
    const done = (r: Sliced<ReturnType<Journal['countSynced']>>): void => {
      this.slicedCounts.delete(root);
      if (!r.done) return;
      this.countCostMs = r.stats.workMs;
      this.counted.set(root, { value: r.value, atMs: this.deps.clock.now(), passEnds });
    };
    // A count that fails (the journal closed under it) leaves the last one; the next due count tries again.
    const failed = (): void => void this.slicedCounts.delete(root);
    try {
      const run = runSliced(steps);
      if (run instanceof Promise) this.slicedCounts.set(root, run.then(done, failed));
      else done(run);
    } catch {
      failed();
    }
    return true;
  }
}
