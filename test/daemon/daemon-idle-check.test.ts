/**
 * The real daemon's idle journal check on a large mirror (issue 29 points 6 and 8): it reads the journal in
 * slices, so `status` answers while it runs (and sees it move on), a change made on Box meanwhile is synced while
 * the check waits, and SIGTERM ends the daemon without waiting for the check to finish.
 *
 * The mirror is journal-fixture.ts's (a synced tree built without a first mirror). The daemon runs the check with a
 * slice per pause point (BOXSYNC_IDLE_CHECK_SLICE_MS=0: 64 rows a slice), so that it takes hundreds of slices, and
 * is still running when the change on Box arrives, however fast the machine; no figure here is a time.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { DaemonStatus } from '../../src/daemon/control/control-protocol.js';
import { firstPassDone } from '../bench/daemon-ready.js';
import type { SyncedFixture } from '../bench/journal-fixture.js';
import { waitFor } from '../support/wait.js';
import { createHarness, type DaemonRun, type Harness } from './daemon-harness.js';
import { fixtureForHarness } from './fixture-harness.js';

const FILES = 40_000;
/** A slice per pause point of the check (daemon-settings.ts): FILES / 64 slices on any machine. */
const SLICE_ENV = { BOXSYNC_IDLE_CHECK_SLICE_MS: '0' };

let h: Harness;
let fx: SyncedFixture;

beforeAll(async () => {
  h = await createHarness();
  fx = await fixtureForHarness(h, { name: 'fx', files: FILES });
}, 600_000);
afterAll(async () => h?.close());

/** The daemon started, and the first status that says its idle check is under way (after its first pass). */
async function checking(): Promise<{ run: DaemonRun; first: DaemonStatus }> {
  const run = h.launch(SLICE_ENV);
  const first = await waitFor(
    async () => {
      if (run.child.exitCode !== null) throw new Error(`daemon exited early (${run.child.exitCode}):\n${run.output()}`);
      const s = await h.status().catch(() => null);
      return s !== null && firstPassDone(s) && s.idleCheck?.running === true ? s : null;
    },
    { timeoutMs: 300_000, intervalMs: 10, what: 'the idle check to start after the first pass' },
  ).catch((e: unknown) => {
    throw new Error(`${String(e)}\n--- daemon output ---\n${run.output()}`);
  });
  return { run, first };
}

/** The daemon's log line that ends a finished check (convergence-watch.ts), parsed. */
function finishedChecks(out: string): { slices: number; pauses: number; workMs: number; longestSliceMs: number }[] {
  return out
    .split('\n')
    .filter((l) => l.includes('idle check of the journal:'))
    .map((l) => JSON.parse(l) as { slices: number; pauses: number; workMs: number; longestSliceMs: number });
}

describe('the idle check on a large mirror', () => {
  it('status answers while it runs, and a change made on Box meanwhile is synced while the check waits', async () => {
    const { run, first } = await checking();
    onTestFinished(async () => void (await h.stop(run)));
    expect(first.idleCheck!.done).toBe(0);
    // Made while the check runs: the long poll tells the daemon, and its pass goes before the rest of the check.
    h.web.uploadFile(fx.boxFolderId, 'made-during-the-check.txt', 'live');
    const local = join(fx.mirror, 'made-during-the-check.txt');
    const during: DaemonStatus[] = [];
    let arrivedWhileChecking = false;
    const last = await waitFor(
      async () => {
        const there = existsSync(local);
        const s = await h.status();
        if (s.idleCheck?.running === true) {
          during.push(s);
          if (there) arrivedWhileChecking = true;
        }
        return s.idleCheck!.done >= 1 && there ? s : null;
      },
      { timeoutMs: 300_000, intervalMs: 10, what: 'the check to finish and the new file to be here' },
    );
    expect(readFileSync(local, 'utf8')).toBe('live');
    // The event loop was free during the check: status answered again and again while it ran, each time further on.
    expect(during.length).toBeGreaterThanOrEqual(2);
    expect(Math.max(...during.map((s) => s.idleCheck!.slices))).toBeGreaterThan(first.idleCheck!.slices);
    // The file came while the check was still under way: its pass ran first, the check waited for it.
    expect(arrivedWhileChecking).toBe(true);
    expect(Math.max(...during.map((s) => s.idleCheck!.pauses))).toBeGreaterThanOrEqual(1);
    expect(last.engine.roots[0]!.inSync.files).toBe(FILES + 1);
    // (Its log line is read once the daemon has exited: pino may not have written it yet when status says done.)
    expect(await h.stop(run)).toEqual({ code: 0, signal: null });
    const [check] = finishedChecks(run.output());
    // A slice per pause point (SLICE_ENV reached the check): at least one per 64 rows of the files' tree alone.
    expect(check!.slices).toBeGreaterThanOrEqual(FILES / 64);
    expect(check!.pauses).toBeGreaterThanOrEqual(1);
    // Nothing out of sync was left for the check to hint (the pass during it did not make it report stale rows).
    expect(run.output()).not.toContain('out of sync with no pass planned');
  }, 600_000);

  it('SIGTERM during the check ends the daemon without waiting for the check', async () => {
    const { run, first } = await checking();
    onTestFinished(async () => void (await h.stop(run)));
    run.child.kill('SIGTERM');
    expect(await run.exited).toEqual({ code: 0, signal: null });
    expect(first.idleCheck!.running).toBe(true);
    // The check never finished: the daemon closed at its next slice.
    expect(finishedChecks(run.output())).toEqual([]);
  }, 600_000);
});
