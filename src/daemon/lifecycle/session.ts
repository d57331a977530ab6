/**
 * One running configuration: the composed engine and adapters, and the loops that feed it.
 *
 *   watcher (per root) ──hints──► echo filter ──► engine.hintLocal ──┐
 *   long poll (events) ──hints──► root filter ──► engine.hintRemote ─┼──► PassRunner ──► engine.runOnce
 *   schedules (node-cron), sync-now, degraded-watcher timer ──full───┘         (one at a time, coalesced)
 *
 * The daemon owns one session at a time and swaps it on SIGHUP.
 */
import { raceTimeout } from '../../core/race-timeout.js';
import type { Config } from '../../config/index.js';
import { isSyncError } from '../../core/errors.js';
import { safeText } from '../../core/escape.js';
import { parseGuardId } from '../../engine/guard-id.js';
import type { EngineEvents, RunSummary } from '../../engine/types.js';
import type { OperationKind } from '../../core/operations.js';
import type { Logger } from '../../logger.js';
import type { FailureRecord } from '../../ports/journal.js';
import { SYNC_ONCE_OPERATIONS_KEPT, type ControlRequest, type DaemonStatus, type PassOperation, type PathStatus, type SyncOnceResult, type VerbResult } from '../control/control-protocol.js';
import type { EventLoopStatus } from '../control/control-protocol.js';
import type { ComposeDaemonParts, DaemonParts } from './daemon-parts.js';
import type { DaemonSettings } from './daemon-settings.js';
import { LocalSide } from './local-side.js';
import { ConvergenceWatch } from './convergence-watch.js';
import { checkRepeat, cleanExpiredUploadSessions, maintainJournal } from './maintenance-jobs.js';
import { switchableNotifier, type SwitchableNotifier } from './notifier.js';
import { ItemCommands, type ItemResult } from '../control/items/item-commands.js';
import { ItemCommandError } from '../control/item-protocol.js';
import { OperationLog } from '../control/operation-log.js';
import { PassRunner } from './pass-runner.js';
import { IdleReclaimer, obtainGc } from './idle-reclaim.js';
import { pathStatus } from '../control/path-status.js';
import { RemoteSide } from './remote-side.js';
import { Schedules } from './schedules.js';
import { liveControls, pausePair, releasePairs, setBandwidth, setNotifications } from './live-controls.js';
import { retryParks } from '../../engine/park-recheck.js';
import { retriedText, retryHints, retryTarget } from '../control/retry-command.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/** How long the `sync-once` hand-off waits for each watcher's barrier before it scans that folder in full instead. */
const SYNC_ONCE_BARRIER_MS = 10_000;
/** The wake-up comes this long after the engine's wake time, so what was due then reads as due. */
const WAKE_SLACK_MS = 50;

/** What the daemon's web page hears from a session (src/daemon/ui/ui-server.ts). */
export interface SessionActivity {
  status(): void;
  operation(op: { root: string; path: string; kind: string; reason: string; ok: boolean; error: string | null; atMs: number }): void;
}

/**
 * What the daemon gives every session it starts: `onFatal` ends the process; `onNotice` hears the engine's notices
 * and `freeSpace` says whether a deselected folder is removed outright (the live `selective` verb, selective-command.ts);
 * `onActivity` feeds the web page's live stream.
 */
export interface DaemonSessionHooks {
  readonly onFatal?: (message: string) => void;
  readonly onNotice?: NonNullable<EngineEvents['onNotice']>;
  readonly freeSpace?: () => boolean;
  readonly onActivity?: SessionActivity;
  /** Aborted by SIGTERM while the session starts (the journal's open check): the start rejects at once. */
  readonly startSignal?: AbortSignal;
}

export class DaemonSession {
  private fatalMessage: string | null = null;
  private wakeTimer: NodeJS.Timeout | null = null;
  private closing = false;
  /** The wake-up every pass leaves behind, and the idle check for a forgotten path (convergence-watch.ts). */
  private convergence: ConvergenceWatch | null = null;

  private constructor(
    readonly config: Config,
    readonly parts: DaemonParts,
    readonly passes: PassRunner,
    private readonly local: LocalSide,
    private readonly remote: RemoteSide,
    private readonly schedules: Schedules,
    private readonly ops: OperationLog,
    private readonly log: Logger,
    private readonly fatalHook: (message: string) => void,
    private readonly reclaimer: IdleReclaimer,
    private readonly notifier: SwitchableNotifier,
  ) {}

  /** `rootLogger` has no component yet: compose and each loop add their own, this session logs as 'daemon'. */
  /** `onFatal`: the daemon ends the process (exit code 1) once syncing stopped on a fatal error. */
  static async start(
    config: Config,
    settings: DaemonSettings,
    compose: ComposeDaemonParts,
    rootLogger: Logger,
    hooks: DaemonSessionHooks = {},
  ): Promise<DaemonSession> {
    const log = rootLogger.child({ component: 'daemon' });
    const notifier = switchableNotifier({ enabled: config.daemon.notifications, log: rootLogger.child({ component: 'notify' }) });
    const ops = new OperationLog();
    let guardNotified: string | null = null;
    const events: EngineEvents = {
      // The web page's live stream (src/daemon/ui/): what changed, pushed, never polled.
      onStatus: () => hooks.onActivity?.status(),
      onOperation: (o) => {
        session?.keepOperation(o);
        ops.record(o.root, o.path, { kind: o.kind, reason: o.reason, ok: o.ok, error: o.error ?? null, atMs: Date.now() });
        hooks.onActivity?.operation({ root: o.root, path: o.path, kind: o.kind, reason: o.reason, ok: o.ok, error: o.error ?? null, atMs: Date.now() });
        if (o.kind === 'conflict-copy' && o.ok) {
          notifier.notify('conflict', 'boxsync: a conflict copy was made', `"${safeText(o.path)}" changed on both sides; your version is kept beside it as a conflict copy`);
        }
      },
      // selective.newFolders "skip": told once (the engine says it once per folder).
      onNotice: (n) => {
        hooks.onNotice?.(n);
        if (n.kind === 'new-folder-skipped') notifier.notify('new-folder', 'boxsync: a new Box folder is not synced here', n.text);
      },
    };
    let session: DaemonSession | null = null;
    // One way to stop on a fatal error, whoever meets it first (a pass, the long poll, a scheduled job): said
    // once, and the daemon exits with it (daemon.ts), idle or not.
    const fatal = (message: string): void => {
      if (session === null || session.fatalMessage !== null) return;
      notifier.notify('fatal', 'boxsync stopped syncing', message);
      session.onFatal(message);
    };
    const fatalIfSo = (e: unknown): void => {
      if (isSyncError(e) && e.disposition === 'fatal') fatal(e.message);
    };
    // The engine reads the stream the long poll settles on: remote-side's prepare() tells it, before the first pass.
    const parts = await compose(config, rootLogger, events, settings.streamType, hooks.freeSpace, hooks.startSignal);
    const reclaimer = new IdleReclaimer({
      gc: obtainGc(),
      // The idle journal check allocates as it reads: collect once it is over (its end calls idle() again).
      busy: () => passes.busy || session?.convergence?.status().running === true,
      onCollected: (before, after) =>
        log.debug({ heapBeforeBytes: before.totalBytes, heapAfterBytes: after.totalBytes, liveBytes: after.usedBytes }, 'idle: unused heap returned'),
    });
    const passes: PassRunner = new PassRunner(parts.engine, log, {
      onBusy: () => reclaimer.busy(),
      onIdle: () => {
        reclaimer.idle();
        session?.convergence?.idle();
      },
      onFatal: fatal,
      onSummary: (s) => {
        session?.keepSummary(s);
        // Once per held guard, not once per pass while it stays held.
        if (s.outcome !== 'guard') guardNotified = null;
        else if (s.message !== guardNotified) {
          guardNotified = s.message;
          notifier.notify('guard', 'boxsync: a safety guard holds syncing', `${s.message}\n\`boxsync status\` shows it; \`boxsync confirm ID\` releases it`);
        }
        if (s.outcome !== 'converged' || s.passes > 1 || s.durationMs > 1000) log.info({ summary: s }, `pass ${s.outcome}: ${s.message}`);
        session?.scheduleWake();
        session?.convergence?.afterPass(s);
        hooks.onActivity?.status();
      },
    });
    const local = new LocalSide({
      roots: parts.roots,
      engine: parts.engine,
      journal: parts.journal,
      localFsFor: parts.localFsFor,
      passes,
      log: rootLogger.child({ component: 'watcher' }),
      isIgnoredFor: parts.isIgnoredFor,
      watcherKind: settings.watcher,
      fallbackScanMs: settings.fallbackScanMs,
      maxSettleMs: settings.uploadGrowingEveryMs,
      maxWatches: settings.maxWatches,
      tempName: parts.tempName,
    });
    const remote = new RemoteSide({
      roots: parts.roots,
      engine: parts.engine,
      journal: parts.journal,
      remote: parts.remote,
      changes: parts.changes,
      passes,
      log: rootLogger.child({ component: 'events' }),
      streamType: settings.streamType,
      syncCheckMs: settings.syncCheckMs,
      onFatal: fatal,
    });
    const schedules = new Schedules(
      settings.schedules,
      {
        fullRescan: async () => {
          passes.request('full');
          return 'full rescan and listing requested';
        },
        journalMaintenance: async (signal) => {
          try {
            // The check runs beside passes (in its own process); the checkpoint waits for the running pass. Stopping
            // the schedules (the session closing) ends the check's process.
            return await maintainJournal(parts.journal, { signal, beforeUpkeep: () => passes.idle(), repeat: checkRepeat() });
          } catch (e) {
            // A journal that fails its check: stop as a fatal pass would (systemd restarts the daemon, and the
            // next open sets the file aside and rebuilds it).
            fatalIfSo(e);
            throw e;
          }
        },
        tokenRefresh: async () => {
          // Any authenticated call refreshes an access token that expired or is about to (single-use refresh
          // tokens are rotated and persisted by the adapter); a revoked grant surfaces here, not mid-transfer.
          const me = await parts.remote.account().catch((e: unknown) => {
            fatalIfSo(e);
            throw e;
          });
          return `token valid for ${me.login}`;
        },
        uploadSessionCleanup: async () => cleanExpiredUploadSessions(parts.journal),
        localTrashPurge: async () => {
          const removed = await parts.purgeLocalTrash(config.localTrash.retentionDays * DAY_MS);
          return `removed ${removed} local-trash entr${removed === 1 ? 'y' : 'ies'} older than ${config.localTrash.retentionDays} days`;
        },
      },
      rootLogger.child({ component: 'schedules' }),
    );
    session = new DaemonSession(config, parts, passes, local, remote, schedules, ops, log, hooks.onFatal ?? (() => undefined), reclaimer, notifier);
    session.convergence = new ConvergenceWatch({ engine: parts.engine, journal: parts.journal, roots: parts.roots, isIgnoredFor: parts.isIgnoredFor, request: () => passes.request('hint'), busy: () => passes.busy, log, sliceMs: settings.idleCheckSliceMs, onChecked: (c) => {
      if (c.done && c.stats.slices > 1 && !passes.busy) reclaimer.idle();
    } });
    try {
      await remote.prepare();
    } catch (e) {
      // A refused login cannot pass: stop now (the daemon exits 1 with the reason) instead of starting loops.
      if (isSyncError(e) && e.disposition === 'fatal') {
        fatal(e.message);
        return session;
      }
      // The loop takes a fresh position once Box answers again; the first pass lists everything anyway.
      log.warn({ err: e }, `could not reach the Box event stream yet (${e instanceof Error ? e.message : String(e)}); will keep trying`);
    }
    await local.start();
    // The engine's first run in a process scans every root in full anyway; the remote side catches up from the
    // stored event cursor (or lists everything when there is none), so a restart does not relist 100k items.
    // ...except for a root this journal has never listed (new in the configuration): a catch-up from the cursor
    // sees only events after the stored position, and its content predates it. List everything once.
    const unlisted = parts.roots.filter((r) => parts.journal.getRemote(r.remoteId) === undefined);
    if (unlisted.length > 0) log.info({ roots: unlisted.map((r) => r.localPath) }, 'new root(s): the first pass lists everything');
    passes.request(unlisted.length > 0 ? 'full' : 'hint');
    void passes.idle().then(() => local.startMissing());
    remote.start();
    schedules.start();
    return session;
  }

  /** What each waiting `sync-once` hears: every operation and pass summary until its answer. */
  private keepOperation(o: PassOperation): void {
    for (const w of this.waits) {
      if (w.operations.length < SYNC_ONCE_OPERATIONS_KEPT) w.operations.push(o);
      else w.leftOut += 1;
    }
  }

  private keepSummary(s: RunSummary): void {
    for (const w of this.waits) w.summaries.push(s);
  }

  /** Before status(): its in-sync counts made in slices (the event loop stays free), not in one call. */
  statusReady(): Promise<void> {
    return this.parts.engine.statusReady?.() ?? Promise.resolve();
  }

  status(base: { pid: number; startedAtMs: number; stopping: boolean; eventLoop: EventLoopStatus }): DaemonStatus {
    const engine = this.parts.engine.status();
    const watchers = this.local.status();
    const remoteStream = this.remote.status();
    const notices: string[] = [];
    if (this.fatalMessage) notices.push(`syncing stopped: ${this.fatalMessage}`);
    for (const w of watchers) if (w.health.state === 'degraded') notices.push(`${w.localPath}: ${w.health.reason}`);
    if (remoteStream.effective !== remoteStream.configured && remoteStream.note) notices.push(remoteStream.note);
    if (remoteStream.state === 'reconnecting' && remoteStream.note) notices.push(`remote events: ${remoteStream.note}`);
    if (this.passes.lastError) {
      const retry = this.passes.nextRetryAtMs ? `; retrying at ${new Date(this.passes.nextRetryAtMs).toISOString()}` : '';
      notices.push(`last pass failed: ${this.passes.lastError}${retry}`);
    }
    const controls = liveControls(this.notifier, this.parts.bandwidth, this.parts.engine, this.parts.roots);
    return { ...base, configFile: this.config.file, engine, passes: this.passes.passCount, watchers, remoteStream, schedules: this.schedules.status(), notices, controls, ...(this.convergence ? { idleCheck: this.convergence.status() } : {}) };
  }

  private items: ItemCommands | null = null;
  /** `sync-once` requests waiting for their pass: what the passes did meanwhile. */
  private readonly waits = new Set<{ operations: PassOperation[]; leftOut: number; summaries: RunSummary[] }>();

  async handle(req: Exclude<ControlRequest, { verb: 'status' | 'selective' | 'ui-login' }>): Promise<PathStatus | VerbResult | ItemResult | SyncOnceResult> {
    switch (req.verb) {
      case 'item':
        return this.itemCommands().run(req.request);
      case 'status-path': {
        const st = await pathStatus(req.path, { roots: this.parts.roots, journal: this.parts.journal, ops: this.ops, isIgnoredFor: this.parts.isIgnoredFor, localFsFor: this.parts.localFsFor });
        if (st.relPath === null || st.state === 'outside' || !this.parts.boxActions) return st;
        // The lock lives on Box only: ask, but never let a slow Box hold up status.
        const asked = await raceTimeout(
          this.itemCommands()
            .lockAt(req.path)
            .then((lock) => ({ lock }), () => null),
          5_000,
        );
        // No answer (in time): leave the field out rather than claim "no lock".
        return asked === null ? st : { ...st, lock: asked.lock };
      }
      case 'pause':
        if (req.path !== undefined) return pausePair(this.parts.engine, this.parts.roots, req.path, true, () => undefined, this.log);
        this.parts.engine.pause();
        this.log.info('paused by the user');
        return { message: 'paused: transfers in flight finish, nothing new starts; `boxsync resume` to continue' };
      case 'resume':
        if (req.path !== undefined) return pausePair(this.parts.engine, this.parts.roots, req.path, false, () => this.passes.request('full'), this.log);
        this.parts.engine.resume();
        // Resuming all releases the pairs paused on their own too; what they missed needs a full pass.
        this.passes.request(releasePairs(this.parts.engine) > 0 ? 'full' : 'hint');
        this.log.info('resumed by the user');
        return { message: 'resumed' };
      case 'sync-now':
        await this.schedules.run('fullRescan');
        return { message: 'full rescan and listing started; `boxsync status` shows progress' };
      case 'sync-once':
        return this.syncOnce(req.fullRescan === true, req.confirm ?? []);
      case 'confirm-guard': {
        await this.confirmHeld([req.id]);
        this.passes.request('hint');
        return { message: `guard ${req.id} confirmed; the held operations run now` };
      }
      case 'retry':
        return this.retry(req.path);
      case 'bwlimit':
        return setBandwidth(this.parts.bandwidth, req.rate, this.log);
      case 'notifications':
        return setNotifications(this.notifier, req.on, this.log);
      default: {
        const never: never = req;
        throw new Error(`unknown verb ${JSON.stringify(never)}`);
      }
    }
  }

  /**
   * Release held safety guards the user confirmed (`boxsync confirm ID`, `sync --once --confirm ID`). Every id is
   * checked before any is released: one that is not a guard id, or names no guard held, throws and nothing changes.
   */
  private async confirmHeld(ids: readonly string[]): Promise<void> {
    const guards = ids.map((id) => {
      const guard = parseGuardId(id);
      if (guard === null) {
        throw new Error(`"${safeText(id)}" is not a safety guard id (they look like mass-delete:ROOT:COUNT or remote-root-empty:ROOT); nothing was changed, \`boxsync status\` shows the one held`);
      }
      if (this.parts.engine.status().heldGuard?.id !== id) {
        throw new Error(`no safety guard with id ${id} is held; nothing was changed (\`boxsync status\` shows the current one)`);
      }
      return { id, guard };
    });
    for (const { id, guard } of guards) {
      if (!this.parts.engine.confirmGuard(id)) throw new Error(`no safety guard with id ${id} is held; nothing was changed (\`boxsync status\` shows the current one)`);
      this.log.warn({ guard: id }, 'safety guard confirmed by the user');
      // A new local folder accepted as the root: watch it, not the one it replaced.
      if (guard.kind === 'local-root-missing') await this.local.restartRoot(guard.root);
    }
  }

  /**
   * `sync --once` while this daemon runs (sync.ts hands the run over instead of refusing it): a pass that looks
   * at every change made before the request, and its summary. Local changes: each root's watcher barrier
   * (LocalSide.barrier) hands every change it saw before the request to the engine, so a hinted pass covers them; a
   * root whose watcher cannot confirm that gets a full scan, and the answer says why. Box's changes: the pass reads
   * the event stream from the cursor, whatever the long poll has heard yet. Bounded: the barrier by
   * SYNC_ONCE_BARRIER_MS, the pass as any pass (the client's wait has its own bound).
   */
  private async syncOnce(fullRescan: boolean, confirm: readonly string[]): Promise<SyncOnceResult> {
    if (this.fatalMessage !== null) throw new Error(`syncing stopped: ${this.fatalMessage}; nothing was run`);
    if (this.parts.engine.status().phase === 'paused') {
      throw new Error('the daemon is paused, so no transfer would start; nothing was run. `boxsync resume` resumes it (then run again)');
    }
    if (confirm.length > 0) await this.confirmHeld(confirm);
    const startedAtMs = Date.now();
    // From here on, what the daemon does is this request's work too: the pass under way goes in its answer.
    const wait = { operations: [] as PassOperation[], leftOut: 0, summaries: [] as RunSummary[] };
    this.waits.add(wait);
    try {
      const notes: string[] = [];
      let kind: 'hint' | 'full' = fullRescan ? 'full' : 'hint';
      if (!fullRescan) {
        const unsure = await this.local.barrier(SYNC_ONCE_BARRIER_MS);
        for (const u of unsure) notes.push(`${u.root.localPath} was scanned in full: ${u.reason}`);
        if (unsure.length > 0) kind = 'full';
      }
      this.parts.engine.hintRemote([]);
      this.log.info({ kind, notes }, '`sync --once` handed over: a pass with every change made before it');
      const { summary, pass } = await this.passes.next(kind);
      this.log.info({ pass, outcome: summary.outcome }, `\`sync --once\` handed over: answered with pass ${pass} (${summary.outcome})`);
      return { summary: passesTogether(wait.summaries, summary, Date.now() - startedAtMs), operations: wait.operations, operationsLeftOut: wait.leftOut, notes };
    } finally {
      this.waits.delete(wait);
    }
  }

  /** `boxsync retry [PATH]`: clear the rows (retry-command.ts) and run a pass for those paths now. */
  private retry(path: string | undefined): VerbResult {
    const target = path === undefined ? undefined : retryTarget(this.parts.roots, path);
    if (target === null) throw new Error(`${safeText(path)} is not inside any configured sync folder; nothing was changed`);
    const rows = retryParks(this.parts.journal, this.parts.roots, target);
    const hints = retryHints(rows);
    for (const root of this.parts.roots) {
      const paths = hints.flatMap((h) => (h.root === root.id && h.path !== '' ? [h.path] : []));
      if (paths.length > 0) this.parts.engine.hintLocal(root.id, paths);
    }
    if (rows.length > 0) this.passes.request(hints.some((h) => h.path === '') ? 'full' : 'hint');
    this.log.info({ items: rows.length }, 'retry requested by the user');
    return { message: retriedText(rows, 'now (`boxsync status` shows how it goes)', path) };
  }

  private itemCommands(): ItemCommands {
    const boxActions = this.parts.boxActions;
    const apiUrl = this.parts.apiUrl;
    if (!boxActions || apiUrl === undefined) throw new ItemCommandError('fatal', 'this daemon was built without Box actions; item commands are not available');
    this.items ??= new ItemCommands({
      roots: this.parts.roots,
      journal: this.parts.journal,
      remote: this.parts.remote,
      actions: boxActions,
      apiUrl,
      isIgnoredFor: this.parts.isIgnoredFor,
      localFsFor: this.parts.localFsFor,
      trashPlaces: this.parts.trashPlaces,
      hintRemote: (ids) => {
        this.parts.engine.hintRemote(ids);
        this.passes.request('hint');
      },
    });
    return this.items;
  }

  /**
   * Stop within `timeoutMs`, for an exit or a reload alike. New work stops first (schedules, watchers, long poll,
   * and the transfer queue is paused so nothing new starts); transfers in flight get until the bound (less a
   * second for closing) to finish. Then the running pass is aborted and the engine closed, both with the
   * shutdown reason: transfers still running are checkpointed, not cancelled (an upload session keeps its
   * server-side session and its confirmed parts in the journal, so the next start or the reloaded session
   * resumes it), and the journal and HTTP client close cleanly. 'checkpointed' when transfers were still
   * running at the bound, 'clean' otherwise.
   */
  async close(timeoutMs: number): Promise<'clean' | 'checkpointed'> {
    const deadline = Date.now() + timeoutMs;
    const left = (reserveMs = 0): number => Math.max(100, deadline - Date.now() - reserveMs);
    this.closing = true;
    this.reclaimer.stop();
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.convergence?.close();
    this.parts.engine.pause();
    await raceTimeout(Promise.all([this.schedules.stop(), this.local.close(), this.remote.close()]), left(1_000));
    const drained = await raceTimeout(
      waitUntil(() => this.parts.engine.status().roots.every((r) => r.inFlight.length === 0), 100),
      left(1_000),
    );
    if (drained === null) {
      const running = this.parts.engine.status().roots.flatMap((r) => r.inFlight.map((t) => `${t.direction === 'up' ? 'upload' : 'download'} of ${t.path} (${t.doneBytes}/${t.totalBytes} bytes)`));
      this.log.warn({ running }, `shutdown bound reached with ${running.length} transfer(s) in flight; they resume from their last confirmed part on the next start`);
    }
    // Both at once: a pass waiting on the paused queue ends only when engine.close() lets the queue run its
    // remaining tasks against the aborted signal.
    const released = await raceTimeout(
      Promise.all([this.passes.stop(), this.parts.close()]).catch((e: unknown) => this.log.warn({ err: e }, 'closing the journal or HTTP client failed')),
      left(),
    );
    if (released === null) this.log.warn('the engine, journal and HTTP client did not close within the shutdown bound; SQLite keeps what was committed');
    return drained === null ? 'checkpointed' : 'clean';
  }

  /**
   * The engine says when it next wants a pass with no new hint (settling paths due again, a failed item's
   * backoff elapsing: engine/scope/hint-ledger.ts); after each pass the daemon sleeps until then, lets the engine
   * turn what is due into hints, and asks for a pass. Nothing due by then: the pass this asks for sets the timer again.
   */
  private scheduleWake(): void {
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeTimer = null;
    // The last pass of a closing session ends while the journal closes: nothing is left to wake.
    if (this.closing) return;
    const atMs = this.parts.engine.nextWakeAtMs();
    if (atMs === null) return;
    this.wakeTimer = setTimeout(() => {
      this.wakeTimer = null;
      if (this.closing) return;
      this.parts.engine.wake();
      this.passes.request('hint');
    }, Math.max(0, atMs - Date.now()) + WAKE_SLACK_MS);
    this.wakeTimer.unref();
  }

  private onFatal(message: string): void {
    this.fatalMessage = message;
    void this.remote.close();
    void this.local.close();
    this.fatalHook(message);
  }
}

async function waitUntil(probe: () => boolean, intervalMs: number): Promise<void> {
  while (!probe()) await new Promise((r) => setTimeout(r, intervalMs));
}

/**
 * The answer's summary: the passes that ended while a `sync-once` waited, the last being the one it waited for. What
 * they moved adds up; the outcome, failures and parks are the last pass's (the state now); the duration is the wait's.
 */
export function passesTogether(ended: readonly RunSummary[], last: RunSummary, durationMs: number): RunSummary {
  const all = ended.includes(last) ? ended : [...ended, last];
  const ops: Partial<Record<OperationKind, number>> = {};
  for (const s of all) for (const [k, n] of Object.entries(s.ops) as [OperationKind, number][]) ops[k] = (ops[k] ?? 0) + n;
  const sum = (f: (s: RunSummary) => number): number => all.reduce((a, s) => a + f(s), 0);
  return {
    ...last,
    ops,
    uploadedBytes: sum((s) => s.uploadedBytes),
    downloadedBytes: sum((s) => s.downloadedBytes),
    conflicts: sum((s) => s.conflicts),
    passes: sum((s) => s.passes),
    windows: sum((s) => s.windows),
    durationMs,
  };
}
