/**
 * The daemon's node-cron schedules. Each job is named, configurable by a cron expression, never overlaps
 * itself, and records its last run and last error for status. A failing job is logged and tried again at its
 * next time; it never stops the daemon.
 *
 *   fullRescan            full local rescan + full remote listing, healing missed hints      (default 03:00)
 *   journalMaintenance    integrity check (own process), then WAL checkpoint + PRAGMA optimize (default 04:45)
 *                         between passes
 *   tokenRefresh          an authenticated call: refreshes an expiring token while idle      (default every 30 min)
 *   uploadSessionCleanup  drop upload sessions past their expiry from the journal            (default hourly at :17)
 *   localTrashPurge       remove local-trash entries older than localTrash.retentionDays     (default 04:30)
 */
import { schedule, type ScheduledTask } from 'node-cron';
import { DEFAULT_DAEMON_ONLY_SCHEDULES, DEFAULT_SCHEDULES } from '../../config/index.js';
import type { Logger } from '../../logger.js';
import type { ScheduleStatus } from '../control/control-protocol.js';

export type ScheduleName = 'fullRescan' | 'journalMaintenance' | 'tokenRefresh' | 'uploadSessionCleanup' | 'localTrashPurge';

/** The config's defaults (config keys `schedules.*` and `daemon.schedules.*`), in one record. */
export const DEFAULT_DAEMON_SCHEDULES: Readonly<Record<ScheduleName, string>> = {
  ...DEFAULT_SCHEDULES,
  ...DEFAULT_DAEMON_ONLY_SCHEDULES,
};

/** A job gets a signal aborted when the schedules stop (the session closes): work it runs elsewhere ends then. */
export type ScheduleJobs = Readonly<Record<ScheduleName, (signal: AbortSignal) => Promise<string>>>;

interface Entry {
  readonly name: ScheduleName;
  readonly cron: string;
  readonly task: ScheduledTask;
  lastRunAtMs: number | null;
  lastError: string | null;
  running: boolean;
}

export class Schedules {
  private readonly entries: Entry[] = [];
  private readonly stopping = new AbortController();

  constructor(
    private readonly crons: Readonly<Record<ScheduleName, string>>,
    private readonly jobs: ScheduleJobs,
    private readonly log: Logger,
  ) {}

  start(): void {
    for (const name of Object.keys(this.jobs) as ScheduleName[]) {
      const cron = this.crons[name];
      const entry: Entry = {
        name,
        cron,
        lastRunAtMs: null,
        lastError: null,
        running: false,
        task: schedule(cron, () => this.run(name), { name: `boxsync-${name}`, noOverlap: true, unref: true }),
      };
      this.entries.push(entry);
    }
  }

  /** Run one job now (the `sync-now` verb runs fullRescan through here, so status shows it). */
  async run(name: ScheduleName): Promise<void> {
    const entry = this.entries.find((e) => e.name === name);
    if (entry) entry.running = true;
    try {
      const result = await this.jobs[name](this.stopping.signal);
      if (entry) {
        entry.lastRunAtMs = Date.now();
        entry.lastError = null;
      }
      this.log.info({ schedule: name }, `${name}: ${result}`);
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      if (entry) {
        entry.lastRunAtMs = Date.now();
        entry.lastError = message;
      }
      if (this.stopping.signal.aborted) this.log.info({ schedule: name }, `${name} stopped: ${message}`);
      else this.log.warn({ schedule: name, err: e }, `${name} failed: ${message}; it runs again at its next scheduled time`);
    } finally {
      if (entry) entry.running = false;
    }
  }

  status(): ScheduleStatus[] {
    return this.entries.map((e) => ({ name: e.name, cron: e.cron, lastRunAtMs: e.lastRunAtMs, lastError: e.lastError, running: e.running }));
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    for (const e of this.entries) await e.task.destroy();
    this.entries.length = 0;
  }
}
