/**
 * PassRunner.next (the `sync-once` hand-off waits on it: lifecycle/session.ts): it answers with the first pass that
 * starts after it was asked, never the one running then; a pass that throws rejects it; stopping rejects it with the
 * shutdown reason; a fatal pass rejects those still waiting for the next. The engine here is a stand-in whose passes
 * the test releases one by one.
 */
import { describe, expect, it } from 'vitest';
import { PassRunner } from '../../src/daemon/lifecycle/pass-runner.js';
import { passesTogether } from '../../src/daemon/lifecycle/session.js';
import type { Engine, RunSummary } from '../../src/engine/types.js';
import { silentLogger } from '../../src/logger.js';
import { waitFor } from '../support/wait.js';

const summary = (message: string, outcome: RunSummary['outcome'] = 'converged'): RunSummary => ({
  outcome, ops: {}, uploadedBytes: 0, downloadedBytes: 0, failedItems: 0, parkedItems: 0, problems: [], conflicts: 0, passes: 1, windows: 0, durationMs: 1, message,
});

/** An engine whose pass N waits until `release(N, result)`; `started` lists the passes begun, with their fullRescan. */
function heldEngine() {
  const started: { n: number; full: boolean }[] = [];
  const releases = new Map<number, (r: RunSummary | Error) => void>();
  const engine = {
    runOnce: (opts: { fullRescan?: boolean }) => {
      const n = started.length + 1;
      started.push({ n, full: opts.fullRescan === true });
      return new Promise<RunSummary>((resolve, reject) => releases.set(n, (r) => (r instanceof Error ? reject(r) : resolve(r))));
    },
  } as unknown as Engine;
  return {
    engine,
    started,
    release: async (n: number, r: RunSummary | Error) => {
      await waitFor(() => releases.has(n), { timeoutMs: 5_000, what: `pass ${n} to start` });
      releases.get(n)!(r);
    },
  };
}

describe('PassRunner.next', () => {
  it('answers with the first pass that starts after the call, not the one running then, and keeps its kind', async () => {
    const e = heldEngine();
    const passes = new PassRunner(e.engine, silentLogger, { gatherMs: 1 });
    passes.request('hint');
    await waitFor(() => e.started.length === 1, { timeoutMs: 5_000, what: 'pass 1' });
    const asked = passes.next('full');
    let answered: string | null = null;
    void asked.then((o) => (answered = o.summary.message));
    await e.release(1, summary('pass 1'));
    await waitFor(() => e.started.length === 2, { timeoutMs: 5_000, what: 'pass 2' });
    expect(answered).toBeNull();
    expect(e.started[1]).toEqual({ n: 2, full: true });
    await e.release(2, summary('pass 2'));
    await expect(asked).resolves.toEqual({ summary: summary('pass 2'), pass: 2 });
    await passes.stop();
  });

  it('a pass that throws rejects it with its error (the runner retries on its own)', async () => {
    const e = heldEngine();
    const passes = new PassRunner(e.engine, silentLogger, { gatherMs: 1, minBackoffMs: 60_000 });
    const asked = passes.next('hint');
    await e.release(1, new Error('Box is down'));
    await expect(asked).rejects.toThrow('Box is down');
    expect(passes.lastError).toBe('Box is down');
    await passes.stop();
  });

  it('stopping rejects the one waiting for a pass and the one in a pass, with the shutdown reason; asking after that rejects at once', async () => {
    const e = heldEngine();
    const passes = new PassRunner(e.engine, silentLogger, { gatherMs: 1 });
    const inPass = passes.next('hint');
    await waitFor(() => e.started.length === 1, { timeoutMs: 5_000, what: 'pass 1' });
    const waiting = passes.next('hint');
    const stopped = passes.stop();
    await expect(waiting).rejects.toThrow(/the daemon is stopping/);
    await e.release(1, summary('cut short'));
    await stopped;
    // The pass ended after the stop: its outcome still answers the one that was in it.
    await expect(inPass).resolves.toMatchObject({ pass: 1 });
    await expect(passes.next('hint')).rejects.toThrow(/the daemon is stopping/);
  });

  it('a fatal pass answers the one in it and rejects the one waiting for the next, saying syncing stopped', async () => {
    const e = heldEngine();
    const passes = new PassRunner(e.engine, silentLogger, { gatherMs: 1 });
    const inPass = passes.next('hint');
    await waitFor(() => e.started.length === 1, { timeoutMs: 5_000, what: 'pass 1' });
    const waiting = passes.next('hint');
    await e.release(1, summary('the login was revoked', 'fatal'));
    await expect(inPass).resolves.toMatchObject({ summary: { outcome: 'fatal' } });
    await expect(waiting).rejects.toThrow('syncing stopped: the login was revoked');
    await expect(passes.next('hint')).rejects.toThrow(/syncing has stopped/);
  });
});

describe('passesTogether (the sync-once answer)', () => {
  it('adds up what the passes moved; the outcome, failures and parks are the last pass\'s; the duration is the wait\'s', () => {
    const under = { ...summary('the pass under way'), ops: { download: 100, upload: 3 }, downloadedBytes: 1000, uploadedBytes: 30, conflicts: 1, passes: 2, windows: 1 };
    const last = { ...summary('the pass asked for', 'failed-items'), ops: { upload: 97, 'create-remote-folder': 1 }, uploadedBytes: 970, failedItems: 2, parkedItems: 1, problems: [{ root: 'r' as never, path: 'x', message: 'm', parked: true }] };
    const both = passesTogether([under, last], last, 1234);
    expect(both).toEqual({ ...last, ops: { download: 100, upload: 100, 'create-remote-folder': 1 }, downloadedBytes: 1000, uploadedBytes: 1000, conflicts: 1, passes: 3, windows: 1, durationMs: 1234 });
    // The last pass alone (nothing else ended meanwhile), also when the list did not get it.
    expect(passesTogether([], last, 5)).toEqual({ ...last, durationMs: 5 });
    expect(passesTogether([last], last, 5)).toEqual({ ...last, durationMs: 5 });
  });
});
