/**
 * The real daemon's journal maintenance (issue 29 points 6 and 8): the integrity check runs in a process of its own
 * (src/journal/check-process.ts), so `status` answers and a change made on Box is synced while it runs; SIGTERM
 * during it ends the daemon with its normal exit code; a damaged journal is still found by it and handled as
 * before (the daemon stops with exit code 1, the next start sets the file aside and rebuilds the journal).
 *
 * The maintenance schedule runs every second here, and BOXSYNC_JOURNAL_CHECK_REPEAT makes one check last (the
 * pragma run again and again on a small journal): no figure here is a time.
 */
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { DaemonStatus, ScheduleStatus } from '../../src/daemon/control/control-protocol.js';
import { DAEMON_EXIT } from '../../src/daemon/control/exit-codes.js';
import type { SyncedFixture } from '../bench/journal-fixture.js';
import { waitFor } from '../support/wait.js';
import { damagePage, middleLeafPage } from '../journal/damage.js';
import { createHarness, type DaemonRun, type Harness } from './daemon-harness.js';
import { fixtureForHarness } from './fixture-harness.js';

const FILES = 3_000;
/** Rounds of the check: far more than a test waits for (it is stopped by SIGTERM). */
const LONG_CHECK = { BOXSYNC_JOURNAL_CHECK_REPEAT: '1000000' };

let h: Harness;

beforeAll(async () => {
  h = await createHarness();
}, 120_000);
afterAll(async () => h?.close());

let fixtures = 0;

/** A fresh synced mirror (journal-fixture.ts) in `name`, and the harness's config pointed at it. */
async function fixture(name: string): Promise<SyncedFixture> {
  // The fixture names its Box folder by its file count: one file more each time, so each has its own folder.
  return fixtureForHarness(h, { name, files: FILES + fixtures++, extra: { daemon: { schedules: { journalMaintenance: '* * * * * *' } } } });
}

const maintenance = (s: DaemonStatus): ScheduleStatus => s.schedules.find((x) => x.name === 'journalMaintenance')!;

/** The first status that says the journal maintenance is under way. */
async function maintaining(run: DaemonRun): Promise<DaemonStatus> {
  return waitFor(
    async () => {
      if (run.child.exitCode !== null) throw new Error(`daemon exited early (${run.child.exitCode}):\n${run.output()}`);
      const s = await h.status().catch(() => null);
      return s !== null && maintenance(s).running === true ? s : null;
    },
    { timeoutMs: 120_000, intervalMs: 10, what: 'the journal maintenance to start' },
  ).catch((e: unknown) => {
    throw new Error(`${String(e)}\n--- daemon output ---\n${run.output()}`);
  });
}

/** SIGTERM, then how the daemon ended (a bounded wait). */
async function terminated(run: DaemonRun): Promise<Awaited<DaemonRun['exited']>> {
  run.child.kill('SIGTERM');
  return waitFor(() => (run.child.exitCode !== null || run.child.signalCode !== null ? run.exited : null), {
    timeoutMs: 60_000,
    what: 'the daemon to exit after SIGTERM',
  });
}

describe('journal maintenance beside a running daemon', () => {
  it('status answers and a change made on Box is synced while the integrity check runs in its own process', async () => {
    const fx = await fixture('fx-live');
    const run = await h.start(LONG_CHECK);
    onTestFinished(async () => void (await h.stop(run)));
    const first = await maintaining(run);
    // The first run of the schedule: it has never ended.
    expect(maintenance(first).lastRunAtMs).toBeNull();
    h.web.uploadFile(fx.boxFolderId, 'made-during-maintenance.txt', 'live');
    const local = join(fx.mirror, 'made-during-maintenance.txt');
    let answeredWhileRunning = 0;
    const arrived = await waitFor(
      async () => {
        const s = await h.status();
        const m = maintenance(s);
        if (m.running === true && m.lastRunAtMs === null) answeredWhileRunning += 1;
        return existsSync(local) ? s : null;
      },
      { timeoutMs: 120_000, intervalMs: 10, what: 'the file made on Box to be here' },
    );
    expect(readFileSync(local, 'utf8')).toBe('live');
    // Still the same run of the check: the file came while it ran, and status answered again and again meanwhile.
    expect(maintenance(arrived)).toMatchObject({ running: true, lastRunAtMs: null });
    expect(answeredWhileRunning).toBeGreaterThanOrEqual(2);
    expect(await h.stop(run)).toEqual({ code: DAEMON_EXIT.stopped, signal: null });
    expect(run.output()).not.toContain('integrity check passed');
  }, 600_000);

  it('SIGTERM during the integrity check ends the daemon with its normal exit code', async () => {
    await fixture('fx-term');
    const run = await h.start(LONG_CHECK);
    onTestFinished(async () => void (await h.stop(run)));
    await maintaining(run);
    const exit = await terminated(run);
    expect(exit).toEqual({ code: DAEMON_EXIT.stopped, signal: null });
    expect(run.output()).toContain('journalMaintenance stopped');
    expect(run.output()).not.toContain('integrity check passed');
  }, 600_000);

  it('SIGTERM during the integrity check at start-up (before the daemon answers) ends it with its normal exit code, the journal untouched', async () => {
    const fx = await fixture('fx-term-open');
    // No clean mark: the start's open checks the journal (in its own process, made long here).
    rmSync(`${fx.journalFile}.clean`);
    const run = h.launch(LONG_CHECK);
    onTestFinished(async () => void (await h.stop(run)));
    await waitFor(
      () => {
        if (run.child.exitCode !== null) throw new Error(`daemon exited early (${run.child.exitCode}):\n${run.output()}`);
        return run.output().includes('in a process of its own');
      },
      { timeoutMs: 120_000, intervalMs: 10, what: 'the start-up check to begin' },
    );
    const exit = await terminated(run);
    expect(exit).toEqual({ code: DAEMON_EXIT.stopped, signal: null });
    expect(run.output()).toContain('SIGTERM while starting: stopping');
    expect(run.output()).toContain('boxsync daemon stopped (while starting)');
    // The check was stopped, not failed: nothing set aside, and the next start checks it again (no clean mark).
    expect(readdirSync(fx.stateDir).some((n) => n.includes('.corrupt-'))).toBe(false);
    expect(existsSync(`${fx.journalFile}.clean`)).toBe(false);
  }, 600_000);

  it('a journal damaged after its clean close is found by the check in its own process: exit 1, and the next start sets it aside', async () => {
    const fx = await fixture('fx-damaged');
    // A page in the middle of the operation history: no pass reads it, only the check does.
    damagePage(fx.journalFile, middleLeafPage(fx.journalFile, 'operations'), true);
    const run = h.launch();
    onTestFinished(async () => void (await h.stop(run)));
    const exit = await waitFor(() => (run.child.exitCode !== null || run.child.signalCode !== null ? run.exited : null), {
      timeoutMs: 300_000,
      what: 'the daemon to stop on the damaged journal',
    });
    expect(exit).toEqual({ code: DAEMON_EXIT.fatal, signal: null });
    expect(run.output()).toMatch(/journal .*(failed its integrity check|is damaged)/);
    // The open did not check it (its clean mark matched): the maintenance did.
    expect(run.output()).not.toContain('journal unusable');
    const again = h.launch();
    onTestFinished(async () => void (await h.stop(again)));
    await waitFor(() => readdirSync(fx.stateDir).some((n) => n.startsWith('journal.db.corrupt-')), {
      timeoutMs: 300_000,
      what: 'the next start to set the damaged journal aside',
    });
    await waitFor(() => again.output().includes('journal unusable; moved aside'), { timeoutMs: 60_000, what: 'the log line that says so' });
    // The fresh journal's first pass (a full scan and listing) finds the mirror in sync again.
    const synced = await waitFor(
      async () => {
        const s = await h.status().catch(() => null);
        return s !== null && s.engine.lastSuccessfulSyncAtMs !== null && s.engine.phase === 'idle' ? s : null;
      },
      { timeoutMs: 300_000, intervalMs: 100, what: 'the first pass on the rebuilt journal' },
    );
    expect(synced.engine.roots[0]!.inSync.files).toBe(FILES + fixtures - 1);
    expect(await h.stop(again)).toEqual({ code: DAEMON_EXIT.stopped, signal: null });
  }, 900_000);
});
