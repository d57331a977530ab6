/**
 * The engine: observe, then reconcile each root until quiescent (see the diagram in types.ts and reconciler.ts).
 * Runs are serialized: a second runOnce waits for the first. Safety refusals (a local root that is missing, a
 * remote root that is gone or suddenly empty, a mass delete) skip the root, leave everything untouched and end
 * the run with outcome 'guard'.
 *
 * Scope of a run: the first run of a process, `fullRescan`, a full remote listing, or a run that received no
 * hints (sync --once, tests) rescans every root in full. When hints came in since the last run (the daemon),
 * only the hinted local paths are re-stat'ed and the planner sees only what the hints and the remote events
 * touched.
 */
import { setMaxListeners } from 'node:events';
import { shutdownReason } from '../core/errors.js';
import { safeText } from '../core/escape.js';
import type { RelPath, RemoteId, RootId, SyncRoot } from '../core/model.js';
import type { LocalFs } from '../ports/local-fs.js';
import type { RemoteHint, StreamType } from '../ports/remote-changes.js';
import { toSyncError } from './executor.js';
import { scanLocal, type IsIgnored, type ScanResult } from './observe-local.js';
import { checkLocalRoot } from './root-guard.js';
import { hintedScope, SETTLE_GONE_MS } from './hinted-scope.js';
import { HintLedger, type TakenHints } from './scope/hint-ledger.js';
import { observeRemote } from './observe-remote.js';
import { recheckParks } from './park-recheck.js';
import { parkUnreadableRoot } from './scan-parks.js';
import { shownFailurePath } from './remote-listing.js';
import { cursorName, onlyOwnEchoes } from './remote-hints.js';
import { clearClean, isClean, markClean, setSettlingPaths, settlingPaths } from './clean-mark.js';
import { DEFAULT_WINDOW_ENTRIES, fitsOneWindow } from './windows.js';
import { applyScopeChange, configOnlyRules, forgetRemovedRoots } from './scope-change.js';
import { freeDeselected, freeNotice } from './selective-free.js';
import { clearSelecting, newTopFolders } from './selective.js';
import { newTally, reconcileRoot, type ReconcileContext, type RootContext, type RootOutcome, type Tally } from './reconciler.js';
import type { SnapshotScope } from './snapshot.js';
import { StatusTracker } from './status-tracker.js';
import { guardIdText } from './guard-id.js';
import { summaryMessage } from './summary.js';
import { TransferQueue } from './transfer-queue.js';
import { type BusyPaths, type InFlight, withLiveLane } from './live-lane.js';
import type { Engine, EngineDeps, EngineEvents, RunSummary, StatusReport, Unsettled } from './types.js';

/**
 * How long after our last write to Box its echo may still come in Box's event stream (Box delivers events within
 * seconds; a minute is generous). Within it the daemon looks at the news before it wakes a pass (echoesLikely).
 */
const ECHO_LOOK_MS = 60_000;

function waiter(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

export function createEngine(deps: EngineDeps, events: EngineEvents = {}): Engine {
  return new SyncEngine(deps, events);
}

class SyncEngine implements Engine {
  private readonly queue: TransferQueue;
  /** The event stream passes catch up from: the options' until the daemon says which one its long poll reads. */
  private streamType: StreamType;
  /** The position the daemon took before the first pass (useStream), for the first full listing's cursor. */
  private startPosition: string | null = null;
  private readonly tracker: StatusTracker;
  private readonly rootContexts = new Map<RootId, RootContext>();
  /** Hints, settling paths and wake times (scope/hint-ledger.ts). */
  private readonly hints: HintLedger;
  /** When an operation that wrote to Box was last committed (echoesLikely). */
  private lastBoxWriteMs: number | null = null;
  /** Roots fully scanned by this process: later passes may re-stat only hinted paths. */
  private readonly scanned = new Set<RootId>();
  /** The first pass of the process listed again what earlier listings had refused (see relistParked). */
  private relisted = false;
  private readonly allowedGuards = new Set<string>();
  private readonly closer = new AbortController();
  private chain: Promise<unknown> = Promise.resolve();
  /** Resolved by the next hint (a live lane waits on it). */
  private hintWaiter: { readonly promise: Promise<void>; readonly resolve: () => void } | null = null;

  constructor(
    private readonly deps: EngineDeps,
    private readonly events: EngineEvents,
  ) {
    this.streamType = deps.options.streamType;
    this.queue = new TransferQueue({ concurrency: deps.options.transferConcurrency, clock: deps.clock, onChange: () => this.tracker.emit() });
    this.tracker = new StatusTracker({ journal: deps.journal, roots: deps.roots, clock: deps.clock, queue: () => this.queue, onStatus: events.onStatus });
    this.hints = new HintLedger(deps.journal, deps.roots, this.settleMs());
  }

  private settleMs(): number {
    return this.deps.options.settleGoneMs ?? SETTLE_GONE_MS;
  }

  runOnce(opts: { signal?: AbortSignal; fullRescan?: boolean; confirm?: readonly string[] } = {}): Promise<RunSummary> {
    const run = this.chain.then(() => this.run(opts));
    this.chain = run.catch(() => undefined);
    return run;
  }

  hintLocal(root: RootId, paths: readonly RelPath[]): void {
    this.hints.hintLocal(root, paths);
    this.hintArrived();
  }

  /** What hinted passes deferred as still settling and not yet hinted again, and the Box ids they consumed (hintedScope). */
  takeUnsettled(): Unsettled {
    return this.hints.takeUnsettled();
  }

  useStream(stream: StreamType, since?: string): void {
    this.streamType = stream;
    this.startPosition = since ?? null;
  }

  hasHints(): boolean {
    return this.hints.hasHints();
  }

  hintRemote(ids: readonly RemoteId[]): void {
    this.hints.hintRemote(ids);
    this.hintArrived();
  }

  hasRemoteNews(): boolean {
    return this.hints.remoteNewsPending;
  }

  /**
   * Has this process written to Box lately (ECHO_LOOK_MS)? Only then can Box's news be the echo of our own writes,
   * worth a look before a pass (the daemon's loop guard): otherwise a change on Box costs one GET /events, the pass's.
   */
  echoesLikely(): boolean {
    return this.lastBoxWriteMs !== null && this.deps.clock.now() - this.lastBoxWriteMs < ECHO_LOOK_MS;
  }

  onlyOwnEchoes(hints: readonly RemoteHint[]): boolean {
    return onlyOwnEchoes(this.deps.journal, this.deps.roots, hints);
  }

  /** Wakes a live lane waiting for hints (live-lane.ts). */
  private hintArrived(): void {
    this.hintWaiter?.resolve();
    this.hintWaiter = null;
  }

  /**
   * While a batch has only big transfers in flight: what is hinted meanwhile is synced at once, around the busy
   * paths (live-lane.ts). What a live sync held back waits until the batch ended, then is hinted again.
   */
  private async liveLane(ctx: ReconcileContext, tally: Tally, signal: AbortSignal, batch: Promise<unknown>, inFlight: InFlight): Promise<void> {
    const held: TakenHints[] = [];
    try {
      await withLiveLane(batch, {
        inFlight,
        hasHints: () => this.hints.hasHints() || this.hints.remoteNewsPending,
        nextHint: () => (this.hintWaiter ??= waiter()).promise,
        liveSync: (paths) => this.syncHintsNow(ctx, tally, signal, { paths, held }),
        signal,
      });
    } finally {
      for (const t of held) this.hints.giveBack(t);
      ctx.status.setPhase('transferring');
    }
  }

  nextWakeAtMs(): number | null {
    return this.hints.nextWakeAtMs();
  }

  wake(): void {
    this.hints.wake(this.deps.clock.now());
  }

  status(): StatusReport {
    return this.tracker.report();
  }

  statusReady(): Promise<void> {
    return this.tracker.countsReady();
  }

  /** Holds transfers that have not started; the phase reads 'paused' until resume. Observation still runs. */
  pause(): void {
    this.queue.pause();
    this.tracker.emit(true);
  }

  resume(): void {
    this.queue.resume();
    this.tracker.emit(true);
  }

  /** One folder pair held (`boxsync pause PATH`): passes skip it, its local hints wait; the others go on. */
  pauseRoot(root: RootId, paused: boolean): void {
    if (paused) this.pausedRootIds.add(root);
    else this.pausedRootIds.delete(root);
    this.tracker.emit(true);
  }

  /** Folder pairs the user paused on their own: the hint ledger holds them, so they neither count nor wake. */
  private get pausedRootIds(): Set<RootId> {
    return this.hints.held;
  }

  pausedRoots(): readonly RootId[] {
    return [...this.pausedRootIds];
  }

  confirmGuard(id: string): boolean {
    if (this.tracker.heldGuard?.id !== id) return false;
    this.allowedGuards.add(id);
    this.tracker.heldGuard = null;
    this.tracker.emit(true);
    return true;
  }

  async close(): Promise<void> {
    // A shutdown, not a cancel: transfers stop, and upload sessions keep their confirmed parts (persisted under
    // their resumeKey) so the next process resumes them instead of starting over.
    this.closer.abort(shutdownReason('the sync engine is closing; interrupted transfers resume on the next start'));
    this.queue.resume();
    await this.chain;
  }

  private rootContext(root: SyncRoot): RootContext {
    let rc = this.rootContexts.get(root.id);
    if (!rc) {
      const fs: LocalFs = this.deps.localFsFor(root);
      const isIgnored: IsIgnored = this.deps.isIgnoredFor(root);
      rc = { root, fs, isIgnored };
      this.rootContexts.set(root.id, rc);
    }
    return rc;
  }

  private async run(opts: { signal?: AbortSignal; fullRescan?: boolean; confirm?: readonly string[] }): Promise<RunSummary> {
    const { journal, clock, logger } = this.deps;
    for (const id of opts.confirm ?? []) this.allowedGuards.add(id);
    const startedAtMs = clock.now();
    const signal = opts.signal ? AbortSignal.any([opts.signal, this.closer.signal]) : this.closer.signal;
    // Every transfer in flight listens on this one signal; dozens at once are expected, not a leak.
    setMaxListeners(0, signal);
    const tally = newTally();
    const refusals: { id: string; message: string }[] = [];
    // Roots this pass scanned whole whose reconcile has not converged (yet): what the scan found is in the journal
    // now, so the next scan would not find it changed, and no hint names it. Until such a pass converges, the next
    // pass scans again (and, the clean mark being cleared, plans the whole root) instead of a hinted pass, which
    // would look at the hints alone: a held guard confirmed, a stalled or failed pass, lose no local change.
    const scannedUnfinished = new Set<RootId>();
    const outcomes: RootOutcome[] = [];
    const taken: TakenHints = { local: new Map(), remote: [] };
    let why: string | null = null;
    /** Whether this run wrote to the journal (its clean marks cleared first). */
    let wrote = false;
    this.tracker.fatal = null;
    // A held guard stays shown (and confirmable) while this pass runs: cleared at its start, a Confirm clicked on the
    // page in between was refused ("no safety guard ... is held") and the pass then held the same guard again. It
    // goes at the end unless this pass held it again (a new object).
    const heldBefore = this.tracker.heldGuard;
    const ctx: ReconcileContext = {
      journal,
      remote: this.deps.remote,
      logger,
      clock,
      options: this.deps.options,
      queue: this.queue,
      status: this.tracker,
      events: this.events,
      allowedGuards: this.allowedGuards,
      random: Math.random,
      signal,
      betweenWindows: () => this.syncHintsNow(ctx, tally, signal),
      liveLane: (batch, inFlight) => this.liveLane(ctx, tally, signal, batch, inFlight),
      onBoxWrite: () => (this.lastBoxWriteMs = clock.now()),
      ...(this.deps.executor ? { executor: this.deps.executor } : {}),
    };
    try {
      // Before anything is observed: an observation written to the journal and not yet reconciled (a crash, a
      // stop) must make the next run plan the whole root, not only what it will see change (clean-mark.ts).
      const clean = new Set(this.deps.roots.filter((r) => isClean(journal, r, startedAtMs)).map((r) => r.id));
      // Right before the first write of the run (a run that finds nothing changed writes nothing: first-write.ts).
      const clear = (): void => {
        wrote = true;
        journal.transaction(() => {
          for (const root of this.deps.roots) clearClean(journal, root);
        });
      };
      if (journal.beforeNextWrite !== undefined) journal.beforeNextWrite(clear);
      else clear();
      // A folder pair that left the config forgets its merge base: added back, it is a first sync (scope-change.ts).
      for (const text of forgetRemovedRoots(journal, this.deps.roots)) this.notice(null, text);
      this.tracker.setPhase('listing');
      const extraIds = this.hints.takeRemote(taken);
      const hintedPass = this.hints.beginPass() && opts.fullRescan !== true;
      // The first root's check and whole scan run while Box's events are read (scansEarly).
      const first = this.deps.roots[0];
      const early = first !== undefined && this.scansEarly(first) ? this.scanWhole(this.rootContext(first), signal) : undefined;
      // Settled before this pass goes on or throws: the scan never writes to a journal being closed.
      const observed = await observeRemote(
        { journal, remote: this.deps.remote, changes: this.deps.changes, roots: this.deps.roots, streamType: this.streamType, logger },
        {
          full: opts.fullRescan === true,
          extraIds,
          signal,
          allowEmpty: (root) => this.allowedGuards.delete(guardIdText({ kind: 'remote-root-empty', root })),
          relistParked: !this.relisted,
          stopAtShortPage: hintedPass,
          ...(this.startPosition === null ? {} : { since: this.startPosition }),
        },
      ).finally(() => early?.catch(() => undefined));
      // The events since that earlier position are read by the live sync before the first window (syncHintsNow).
      if (this.startPosition !== null && observed.full) this.hints.hintRemote([]);
      this.startPosition = null;
      // The items the stream said changed are in the journal now, and the cursor moved past them: if this pass
      // does not finish, the next hinted pass must still look at them.
      taken.remote = [...new Set([...extraIds, ...observed.touchedIds])];
      this.relisted = true;
      for (const r of observed.refusals) refusals.push({ id: guardIdText({ kind: r.code, root: r.root }), message: r.message });
      for (const root of this.deps.roots) {
        if (observed.refusals.some((r) => r.root === root.id) || this.pausedRootIds.has(root.id)) continue;
        const rc = this.rootContext(root);
        const earlier = root === first ? await early : undefined;
        if (earlier !== undefined) refusals.push(...earlier.refusals);
        const ready = earlier !== undefined ? earlier.ready : await this.ensureLocalRoot(rc, refusals, !(hintedPass && !observed.full && this.scanned.has(root.id)));
        if (ready === false) continue;
        // A new root accepted: its local rows and merge base are gone, so the whole root is planned again.
        if (ready === 'accepted') clean.delete(root.id);
        this.tracker.setPhase('scanning');
        const hinted = this.hints.takeLocal(taken, root.id);
        let scope: SnapshotScope;
        if (hintedPass && !observed.full && this.scanned.has(root.id)) {
          // Parks whose cause may have cleared (park-recheck.ts) are planned again with the hints.
          const rechecked = await recheckParks({ journal, root, fs: rc.fs }, { mode: 'due', nowMs: clock.now() });
          scope = await this.hintedScope(rc, [...hinted, ...rechecked], observed.touchedIds, signal);
        } else {
          const limit = this.deps.options.windowEntries ?? DEFAULT_WINDOW_ENTRIES;
          const scanned = earlier !== undefined ? earlier.scanned : await this.scanLocalRoot(rc, signal);
          if (scanned === null) continue;
          const rechecked = await recheckParks({ journal, root, fs: rc.fs }, { mode: 'all', nowMs: clock.now() });
          this.scanned.add(root.id);
          scannedUnfinished.add(root.id);
          scope = { kind: 'full' };
          // A change of what is synced edits the merge base first, and is planned whole: it is never a delete.
          const rules = this.deps.scopeRulesFor?.(root) ?? configOnlyRules(root);
          const changedScope = applyScopeChange({ journal, root, rules, isIgnored: rc.isIgnored, nowMs: clock.now() });
          for (const text of changedScope.notices) this.notice(root.id, text);
          // Selective sync: a folder no longer selected frees the disk, if it holds nothing Box lacks.
          for (const d of changedScope.deselected) this.notice(root.id, freeNotice(await freeDeselected(rc.fs, d, { removeOutright: this.deps.options.freeSpace === true })));
          if (changedScope.changed) clean.delete(root.id);
          // The last run converged under the same rules: only what changed since can need work (clean-mark.ts).
          if (opts.fullRescan !== true && !observed.full && scanned.changed !== null && clean.has(root.id)) {
            const failed = journal.failures(root.id).map((f) => f.path);
            // Paths a pass deferred as settling: this process takes them up when they have settled; one that did
            // not record them (a crash came first) plans them now.
            const mine = this.hints.deferredOf(root.id);
            const settled = (settlingPaths(journal, root) ?? []).filter((p) => !mine.has(p));
            scope = { kind: 'hinted', localPaths: [...hinted, ...scanned.changed, ...failed, ...settled, ...rechecked], remoteIds: observed.touchedIds };
            logger.debug({ root: root.id, changed: scanned.changed.length, touched: observed.touchedIds.length }, 'the last run converged: planning only what changed');
          }
          // A full pass over a big root plans it window by window, in name order: what was hinted since the process
          // started and what the scan found changed (a file saved during the listing: its watcher hint, coming after
          // the scan, reads as an echo) are synced before the first window instead (syncHintsNow), not when their
          // window comes, maybe at the end of a first mirror. Their window plans them again and finds them in sync.
          const early = [...hinted, ...(scanned.changed ?? [])];
          if (scope.kind === 'full' && early.length > 0 && !fitsOneWindow(journal, root, limit)) this.hints.hintLocal(root.id, early);
        }
        await this.skipNewFolders(rc);
        const outcome = await reconcileRoot(ctx, rc, scope, tally);
        outcomes.push(outcome);
        if (outcome === 'converged') scannedUnfinished.delete(root.id);
        if (outcome === 'converged' && !tally.fatal && !signal.aborted) {
          this.allowedGuards.delete(guardIdText({ kind: 'local-root-empty', root: root.id }));
          markClean(journal, root, clock.now(), scope.kind === 'full');
          clearSelecting(journal, root.id);
          // This pass planned the deferred paths another process left (above, or a whole-root plan): only this
          // process's own are still waiting.
          const mine = [...this.hints.deferredOf(root.id)];
          if (JSON.stringify(settlingPaths(journal, root)) !== JSON.stringify(mine)) setSettlingPaths(journal, root, mine);
        }
        if (tally.fatal) break;
      }
      // Box news heard while this pass ran is read now, once its own writes are committed: the echoes of its
      // uploads, moves and creates are skipped here instead of waking another pass, and a real change is synced.
      if (this.hints.remoteNewsPending && !tally.fatal && refusals.length === 0 && outcomes.every((o) => o === 'converged')) await this.syncHintsNow(ctx, tally, signal);
    } catch (e) {
      if (signal.aborted) why = 'stopped before converging; the next run continues where this one ended';
      else {
        const err = toSyncError(e);
        if (err.disposition === 'fatal') tally.fatal = err;
        else why = err.message;
        logger.error({ code: err.code }, err.message);
      }
    }
    for (const r of refusals) this.events.onGuard?.(r);
    if (heldBefore !== null && this.tracker.heldGuard === heldBefore) this.tracker.heldGuard = null;
    if (refusals.length > 0 && !this.tracker.heldGuard) this.tracker.heldGuard = { id: refusals[0]!.id, message: refusals.map((r) => r.message).join('; ') };
    // A pass that did not finish its work keeps the hints it consumed, so the next hinted pass sees them again.
    if (why !== null || tally.fatal || refusals.length > 0 || outcomes.some((o) => o !== 'converged')) this.hints.giveBack(taken);
    for (const id of scannedUnfinished) this.scanned.delete(id);
    this.hints.endPass(clock.now());
    // Nothing written: the marks stand as they were, true of an unchanged journal.
    journal.beforeNextWrite?.(null);
    return this.finish({ tally, outcomes, refusals, why, startedAtMs, wrote });
  }

  /**
   * Between the windows of a long full pass: sync what was hinted since the pass began (a file saved here, an
   * event from Box), so a live change waits for one window, not for the whole pass. Only roots this process
   * has scanned take part (the others get their full pass next). What does not converge is hinted again.
   */
  private async syncHintsNow(ctx: ReconcileContext, tally: Tally, signal: AbortSignal, lane?: { paths: BusyPaths; held: TakenHints[] }): Promise<void> {
    if (!this.hints.hinted) return;
    const { journal, logger } = this.deps;
    const roots = this.deps.roots.filter((r) => this.scanned.has(r.id) && !this.pausedRootIds.has(r.id));
    if (roots.length === 0) return;
    const taken: TakenHints = { local: new Map(), remote: [] };
    const extraIds = this.hints.takeRemote(taken);
    for (const root of roots) this.hints.takeLocal(taken, root.id);
    // A live sync beside big transfers (live-lane.ts): hinted paths on, above or below a busy one wait for the batch.
    const busy = lane ? { paths: lane.paths, skipped: false } : undefined;
    if (lane) {
      const later: TakenHints = { local: new Map(), remote: [] };
      for (const [root, paths] of taken.local) {
        later.local.set(root, paths.filter((p) => lane.paths.covers(p)));
        taken.local.set(root, paths.filter((p) => !lane.paths.covers(p)));
      }
      lane.held.push(later);
    }
    let ok = true;
    try {
      // Without a stored position (a listing that did not complete) the events cannot be read: that would mean
      // listing everything again, which is the outer pass's job.
      if (journal.getCursor(cursorName(this.streamType)) !== undefined) {
        const observed = await observeRemote(
          { journal, remote: this.deps.remote, changes: this.deps.changes, roots, streamType: this.streamType, logger },
          { full: false, extraIds, signal, stopAtShortPage: true },
        );
        taken.remote = [...observed.touchedIds];
      }
      const remoteIds = taken.remote;
      for (const root of roots) {
        const localPaths = taken.local.get(root.id) ?? [];
        if (localPaths.length === 0 && remoteIds.length === 0) continue;
        const rc = this.rootContext(root);
        const scope = await this.hintedScope(rc, localPaths, remoteIds, signal);
        await this.skipNewFolders(rc);
        const outcome = await reconcileRoot({ ...ctx, betweenWindows: undefined, liveLane: undefined, ...(busy ? { busy } : {}) }, rc, scope, tally);
        if (outcome !== 'converged') ok = false;
        if (tally.fatal) break;
      }
    } catch (e) {
      if (signal.aborted) throw e;
      ok = false;
      const err = toSyncError(e);
      logger.warn({ code: err.code }, `syncing live changes during the full pass failed (${err.message}); the next pass takes them again`);
    }
    // What a live sync left for a busy path (an operation not run) is taken up again when the batch ended.
    if (busy?.skipped === true) lane?.held.push(taken);
    else if (!ok) this.hints.giveBack(taken);
    this.hints.keepHinted();
  }

  /**
   * The scope of a hinted pass (hinted-scope.ts). Paths found gone with no move in sight are deferred by this
   * pass and kept in the hint ledger, which wakes the engine to hint them again once the watcher has had time to
   * say where they went.
   */
  private async hintedScope(rc: RootContext, localPaths: readonly RelPath[], remoteIds: readonly RemoteId[], signal: AbortSignal): Promise<SnapshotScope> {
    const goneSince = this.hints.goneSinceOf(rc.root.id);
    const deps = { journal: this.deps.journal, root: rc.root, fs: rc.fs, isIgnored: rc.isIgnored };
    const scope = await hintedScope(deps, localPaths, remoteIds, { signal, goneSince, nowMs: this.deps.clock.now(), settleMs: this.settleMs() });
    if (scope.kind !== 'hinted') return scope;
    this.hints.recordScope(rc.root, scope.localPaths, scope.unsettled, remoteIds);
    if (scope.unsettled !== undefined) {
      this.deps.logger.debug({ root: rc.root.id, unsettled: scope.unsettled.slice(0, 20) }, 'gone with no move in sight yet: left for the pass that has the watcher\'s word on where they went');
    }
    return scope;
  }

  /** `selective.newFolders: "skip"`: new top-level Box folders are left unselected before anything is planned. */
  private async skipNewFolders(rc: RootContext): Promise<void> {
    const skip = this.deps.skipNewFolder;
    if (skip === undefined) return;
    for (const name of newTopFolders(this.deps.journal, rc.root, rc.isIgnored)) {
      const text = await skip(rc.root, name);
      // Listed by `boxsync status` under "not synced" until it is selected (scope-change.ts then downloads it).
      this.deps.journal.putUnsynced({ root: rc.root.id, path: name as RelPath, reason: 'not-selected', kind: 'folder', sinceMs: this.deps.clock.now() });
      this.notice(rc.root.id, text, 'new-folder-skipped');
    }
  }

  private notice(root: RootId | null, text: string, kind?: 'new-folder-skipped'): void {
    this.deps.logger.info({ root }, text);
    this.events.onNotice?.({ root, text, ...(kind === undefined ? {} : { kind }) });
  }

  /**
   * Whether this pass's check and whole scan of a root can run while Box's events are read (issue 29 point 7: the
   * events' round trips and the walk overlap): the pass scans it whole whatever the events say (not yet scanned by
   * this process), and the journal already knows its Box folder (not a first mirror: a root the remote side refuses
   * is then one listed again, and its scan is only an observation of the disk: rows, nothing planned). Neither
   * reads what the other writes (local rows and their parks; remote rows), and each commits in transactions of its
   * own. The root's check still runs before its scan, as in the pass (ensureLocalRoot).
   */
  private scansEarly(root: SyncRoot): boolean {
    return !this.pausedRootIds.has(root.id) && !this.scanned.has(root.id) && this.deps.journal.getRemote(root.remoteId) !== undefined;
  }

  /** ensureLocalRoot (on a full pass) then scanLocalRoot, for a root whose scan starts early (scansEarly). */
  private async scanWhole(rc: RootContext, signal: AbortSignal): Promise<{ ready: boolean | 'accepted'; refusals: { id: string; message: string }[]; scanned: ScanResult | null }> {
    const refusals: { id: string; message: string }[] = [];
    const ready = await this.ensureLocalRoot(rc, refusals, true);
    return { ready, refusals, scanned: ready === false ? null : await this.scanLocalRoot(rc, signal) };
  }

  /** The whole root scanned; null when it cannot be listed: parked (and listed), and the other roots go on. */
  private scanLocalRoot(rc: RootContext, signal: AbortSignal): Promise<ScanResult | null> {
    const { journal, clock } = this.deps;
    const limit = this.deps.options.windowEntries ?? DEFAULT_WINDOW_ENTRIES;
    const listingSalt = this.deps.listingSaltFor?.(rc.root);
    return scanLocal({ journal, root: rc.root, fs: rc.fs, isIgnored: rc.isIgnored, nowMs: () => clock.now(), ...(listingSalt === undefined ? {} : { listingSalt }) }, undefined, signal, limit).catch(async (e: unknown) => {
      if (!signal.aborted && (await parkUnreadableRoot({ journal, root: rc.root.id, fs: rc.fs, nowMs: () => clock.now() }, toSyncError(e)))) return null;
      throw e;
    });
  }

  /**
   * The local root guard (root-guard.ts): a missing root is created on a first run, and refused once anything was
   * in sync there, as is one that is not the folder that was synced or is suddenly empty (looked at on full passes).
   * A refused root gets a full scan at its next pass.
   */
  private async ensureLocalRoot(rc: RootContext, refusals: { id: string; message: string }[], fullPass: boolean): Promise<boolean | 'accepted'> {
    const root = rc.root;
    const verdict = await checkLocalRoot(
      { journal: this.deps.journal, root, fs: rc.fs, isIgnored: rc.isIgnored as (p: string, isDir: boolean) => boolean, marker: this.deps.options.rootMarker ?? null },
      {
        acceptNew: this.allowedGuards.delete(guardIdText({ kind: 'local-root-missing', root: root.id })),
        // Kept until the root converges: the deletes it lets through may meet the mass-delete guard first.
        allowEmpty: this.allowedGuards.has(guardIdText({ kind: 'local-root-empty', root: root.id })),
        checkEmpty: fullPass,
        // maxDeleteFraction 1: the user lets a pass delete all of a root (delete-guard.ts).
        emptyGuard: this.deps.options.maxDeleteFraction < 1,
        readOnly: this.deps.executor?.recordsOnly === true,
      },
    );
    if (verdict.ok) {
      if (verdict.accepted === true) {
        this.deps.logger.warn({ root: root.id }, verdict.note);
        this.scanned.delete(root.id);
        return 'accepted';
      }
      return true;
    }
    this.scanned.delete(root.id);
    refusals.push({ id: verdict.id, message: verdict.message });
    this.deps.logger.error({ root: root.id }, verdict.message);
    return false;
  }

  private finish(args: { tally: Tally; outcomes: RootOutcome[]; refusals: { message: string }[]; why: string | null; startedAtMs: number; wrote: boolean }): RunSummary {
    const { tally, outcomes, refusals, startedAtMs } = args;
    const { journal, clock, roots } = this.deps;
    const ours = new Set(roots.map((r) => r.id));
    const mine = journal.failures().filter((f) => ours.has(f.root));
    const failedItems = mine.filter((f) => f.disposition !== 'skip').length;
    const parkedRows = mine.filter((f) => f.disposition === 'skip');
    const problems = [...mine.filter((f) => f.disposition !== 'skip'), ...parkedRows]
      .slice(0, 50)
      .map((f) => ({ root: f.root, path: f.path === '' ? '(the synced folder itself)' : shownFailurePath(f.code, f.path), message: safeText(f.message), parked: f.disposition === 'skip' }));
    let why = args.why;
    let outcome: RunSummary['outcome'];
    if (tally.fatal) {
      outcome = 'fatal';
      why = tally.fatal.message;
      this.tracker.fatal = { code: tally.fatal.code, message: tally.fatal.message };
    } else if (refusals.length > 0 || outcomes.includes('guard')) {
      outcome = 'guard';
      // A guard another root's pass held does not hide the roots refused before their pass.
      const held = this.tracker.heldGuard?.message;
      const refused = refusals.map((r) => r.message).join('; ');
      why = held === undefined ? refused : refused === '' || held.includes(refused) ? held : `${held}; ${refused}`;
    } else if (why !== null || failedItems > 0 || parkedRows.length > 0 || outcomes.includes('stalled')) {
      outcome = 'failed-items';
      if (why === null && outcomes.includes('stalled')) why = 'the plan did not settle within the pass limit';
      if (why === null && failedItems === 0 && parkedRows.length > 0) why = `${parkedRows.length} item${parkedRows.length === 1 ? ' is' : 's are'} parked until they change`;
    } else {
      outcome = 'converged';
      this.tracker.markSuccess(clock.now(), args.wrote);
    }
    this.tracker.setPhase(outcome === 'fatal' ? 'error' : 'idle');
    this.tracker.emit(true);
    const base = {
      outcome,
      ops: { ...tally.ops },
      uploadedBytes: tally.uploadedBytes,
      downloadedBytes: tally.downloadedBytes,
      failedItems,
      parkedItems: parkedRows.length,
      problems,
      conflicts: tally.conflicts,
      passes: tally.passes,
      windows: tally.windows,
      durationMs: clock.now() - startedAtMs,
    };
    return { ...base, message: summaryMessage(base, { reported: tally.reported, why }), ...(args.why === null ? {} : { error: args.why }) };
  }
}
