/**
 * One running configuration: the composed engine and adapters, and the loops that feed it.
 *
 *   watcher (per root) ──hints──► echo filter ──► engine.hintLocal ──┐
 *   long poll (events) ──hints──► root filter ──► engine.hintRemote ─┼──► PassRunner ──► engine.runOnce
 *   schedules (node-cron), sync-now, degraded-watcher timer ──full───┘         (one at a time, coalesced)
 *
 * The daemon owns one session at a time and swaps it on SIGHUP.
 */
import type { Config } from '../config.js';
import type { EngineEvents } from '../engine/types.js';
import type { Logger } from '../logger.js';
import type { ControlRequest, DaemonStatus, PathStatus, VerbResult } from './control-protocol.js';
import type { ComposeDaemonParts, DaemonParts } from './daemon-parts.js';
import type { DaemonSettings } from './daemon-settings.js';
import { LocalSide } from './local-side.js';
import { cleanExpiredUploadSessions, maintainJournal } from './maintenance-jobs.js';
import { OperationLog } from './operation-log.js';
import { PassRunner } from './pass-runner.js';
import { pathStatus } from './path-status.js';
import { RemoteSide } from './remote-side.js';
import { Schedules } from './schedules.js';

const DAY_MS = 24 * 60 * 60 * 1000;

export class DaemonSession {
  private fatalMessage: string | null = null;

  private constructor(
    readonly config: Config,
    private readonly parts: DaemonParts,
    private readonly passes: PassRunner,
    private readonly local: LocalSide,
    private readonly remote: RemoteSide,
    private readonly schedules: Schedules,
    private readonly ops: OperationLog,
    private readonly log: Logger,
  ) {}

  static async start(config: Config, settings: DaemonSettings, compose: ComposeDaemonParts, log: Logger): Promise<DaemonSession> {
    const ops = new OperationLog();
    const events: EngineEvents = {
      onOperation: (o) => {
        ops.record(o.root, o.path, { kind: o.kind, reason: o.reason, ok: o.ok, error: o.error ?? null, atMs: Date.now() });
        const line = { root: o.root, op: o.kind, path: o.path, reason: o.reason, ...(o.error ? { error: o.error } : {}) };
        if (o.ok) log.info(line, `${o.kind} ${o.path}`);
        else log.warn(line, `${o.kind} ${o.path} failed: ${o.error ?? 'unknown error'}`);
      },
    };
    const parts = await compose(config, log, events);
    let session: DaemonSession | null = null;
    const passes = new PassRunner(parts.engine, log, {
      onFatal: (message) => session?.onFatal(message),
      onSummary: (s) => {
        if (s.outcome !== 'converged' || s.passes > 1 || s.durationMs > 1000) log.info({ summary: s }, `pass ${s.outcome}: ${s.message}`);
      },
    });
    const local = new LocalSide({
      roots: parts.roots,
      engine: parts.engine,
      journal: parts.journal,
      passes,
      log: log.child({ component: 'watcher' }),
      isIgnoredFor: parts.isIgnoredFor,
      watcherKind: settings.watcher,
      fallbackScanMs: settings.fallbackScanMs,
      maxWatches: settings.maxWatches,
    });
    const remote = new RemoteSide({
      roots: parts.roots,
      engine: parts.engine,
      journal: parts.journal,
      remote: parts.remote,
      changes: parts.changes,
      passes,
      log: log.child({ component: 'events' }),
      streamType: settings.streamType,
      syncCheckMs: settings.syncCheckMs,
    });
    const schedules = new Schedules(
      settings.schedules,
      {
        fullRescan: async () => {
          passes.request('full');
          return 'full rescan and listing requested';
        },
        journalMaintenance: async () => {
          await passes.idle();
          return maintainJournal(parts.journal);
        },
        tokenRefresh: async () => {
          // Any authenticated call refreshes an access token that expired or is about to (single-use refresh
          // tokens are rotated and persisted by the adapter); a revoked grant surfaces here, not mid-transfer.
          const me = await parts.remote.account();
          return `token valid for ${me.login}`;
        },
        uploadSessionCleanup: async () => cleanExpiredUploadSessions(parts.journal),
        localTrashPurge: async () => {
          const removed = await parts.purgeLocalTrash(config.localTrash.retentionDays * DAY_MS);
          return `removed ${removed} local-trash entr${removed === 1 ? 'y' : 'ies'} older than ${config.localTrash.retentionDays} days`;
        },
      },
      log.child({ component: 'schedules' }),
    );
    session = new DaemonSession(config, parts, passes, local, remote, schedules, ops, log);
    try {
      await remote.prepare();
    } catch (e) {
      // The loop takes a fresh position once Box answers again; the first pass lists everything anyway.
      log.warn({ err: e }, `could not reach the Box event stream yet (${e instanceof Error ? e.message : String(e)}); will keep trying`);
    }
    await local.start();
    passes.request('full');
    remote.start();
    schedules.start();
    return session;
  }

  status(base: { pid: number; startedAtMs: number; stopping: boolean }): DaemonStatus {
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
    return { ...base, configFile: this.config.file, engine, passes: this.passes.passCount, watchers, remoteStream, schedules: this.schedules.status(), notices };
  }

  async handle(req: Exclude<ControlRequest, { verb: 'status' }>): Promise<PathStatus | VerbResult> {
    switch (req.verb) {
      case 'status-path':
        return pathStatus(req.path, { roots: this.parts.roots, journal: this.parts.journal, ops: this.ops, isIgnoredFor: this.parts.isIgnoredFor });
      case 'pause':
        this.parts.engine.pause();
        this.log.info('paused by the user');
        return { message: 'paused: transfers in flight finish, nothing new starts; `boxsync resume` to continue' };
      case 'resume':
        this.parts.engine.resume();
        this.passes.request('hint');
        this.log.info('resumed by the user');
        return { message: 'resumed' };
      case 'sync-now':
        await this.schedules.run('fullRescan');
        return { message: 'full rescan and listing started; `boxsync status` shows progress' };
      case 'confirm-guard': {
        if (!this.parts.engine.confirmGuard(req.id)) {
          throw new Error(`no safety guard with id ${req.id} is held; nothing was changed (\`boxsync status\` shows the current one)`);
        }
        this.log.warn({ guard: req.id }, 'safety guard confirmed by the user');
        this.passes.request('hint');
        return { message: `guard ${req.id} confirmed; the held operations run now` };
      }
      default: {
        const never: never = req;
        throw new Error(`unknown verb ${JSON.stringify(never)}`);
      }
    }
  }

  /**
   * Stop within `timeoutMs`: no new passes, watchers and the long poll off, then engine.close() finishes or
   * checkpoints in-flight transfers (upload sessions keep their confirmed parts in the journal, so a restart
   * resumes them). Whatever is still running at the bound is aborted.
   */
  async close(timeoutMs: number): Promise<'clean' | 'timed-out'> {
    const deadline = Date.now() + timeoutMs;
    await this.schedules.stop();
    await this.local.close();
    await this.remote.close();
    const closed = await raceTimeout(this.parts.engine.close().then(() => 'clean' as const), Math.max(0, deadline - Date.now() - 500));
    await raceTimeout(this.passes.stop().then(() => 'clean' as const), Math.max(100, deadline - Date.now()));
    await this.parts.close().catch((e: unknown) => this.log.warn({ err: e }, 'closing the journal or HTTP client failed'));
    return closed ?? 'timed-out';
  }

  private onFatal(message: string): void {
    this.fatalMessage = message;
    this.log.error(`syncing stopped: ${message}. The daemon stays up so \`boxsync status\` can say why; fix the cause and restart it.`);
    void this.remote.close();
    void this.local.close();
  }
}

async function raceTimeout<T>(p: Promise<T>, ms: number): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), ms)));
  try {
    return await Promise.race([p, t]);
  } finally {
    clearTimeout(timer);
  }
}
