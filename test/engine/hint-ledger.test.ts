/** The hint ledger (engine/scope/hint-ledger.ts) over a real SQLite journal: hints, settling paths and wake times. */
import { afterEach, describe, expect, it } from 'vitest';
import { asRelPath as p, asRemoteId, asRootId, type SyncRoot } from '../../src/core/model.js';
import { settlingPaths } from '../../src/engine/clean-mark.js';
import { HintLedger, type TakenHints } from '../../src/engine/scope/hint-ledger.js';
import type { Journal } from '../../src/ports/journal.js';
import { tempJournal } from './support/journal.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

const root: SyncRoot = { id: asRootId('r1'), remoteId: asRemoteId('1'), localPath: '/nowhere', direction: 'two-way', exclude: [] };
const SETTLE_MS = 1_500;

async function ledger(): Promise<{ journal: Journal; hints: HintLedger }> {
  const j = await tempJournal();
  cleanups.push(j.cleanup);
  return { journal: j.journal, hints: new HintLedger(j.journal, [root], SETTLE_MS) };
}

const taken = (): TakenHints => ({ local: new Map(), remote: [] });

describe('HintLedger', () => {
  it('hands hints to one pass, and takes them back when the pass did not finish', async () => {
    const { hints } = await ledger();
    expect(hints.hasHints()).toBe(false);
    expect(hints.beginPass()).toBe(false);
    hints.hintLocal(root.id, [p('a.txt'), p('a.txt'), p('b.txt')]);
    hints.hintRemote([asRemoteId('7')]);
    expect(hints.hasHints()).toBe(true);
    expect(hints.beginPass()).toBe(true);
    expect(hints.beginPass()).toBe(false);
    const t = taken();
    expect(hints.takeRemote(t)).toEqual(['7']);
    expect(hints.takeLocal(t, root.id)).toEqual(['a.txt', 'b.txt']);
    expect(hints.hasHints()).toBe(false);
    hints.giveBack(t);
    expect(hints.hasHints()).toBe(true);
    expect(hints.beginPass()).toBe(true);
    const again = taken();
    expect(hints.takeRemote(again)).toEqual(['7']);
    expect(hints.takeLocal(again, root.id)).toEqual(['a.txt', 'b.txt']);
  });

  it('wakes for a deferred path once it has settled after its pass ended, with the Box ids that pass consumed', async () => {
    const { journal, hints } = await ledger();
    hints.recordScope(root, [p('dir'), p('gone.txt')], [p('gone.txt')], [asRemoteId('9')]);
    expect(settlingPaths(journal, root)).toEqual(['gone.txt']);
    expect([...hints.deferredOf(root.id)]).toEqual(['gone.txt']);
    // Still in its pass: no wake time yet.
    expect(hints.nextWakeAtMs()).toBeNull();
    hints.endPass(10_000);
    const at = hints.nextWakeAtMs()!;
    expect(at).toBeGreaterThan(10_000 + SETTLE_MS);
    hints.wake(at - 1);
    expect(hints.hasHints()).toBe(false);
    hints.wake(at);
    const t = taken();
    expect(hints.takeLocal(t, root.id)).toEqual(['gone.txt']);
    expect(hints.takeRemote(t)).toEqual(['9']);
    expect(hints.nextWakeAtMs()).toBeNull();
    // The pass that takes it up (its scope holds it, not deferred again) clears it from the journal too.
    hints.recordScope(root, [p('gone.txt')], undefined, []);
    expect(settlingPaths(journal, root)).toEqual([]);
  });

  it('a caller that takes the deferred paths itself (takeUnsettled) gets them once, and the ledger no longer wakes for them', async () => {
    const { hints } = await ledger();
    hints.recordScope(root, [p('x')], [p('x')], []);
    hints.endPass(0);
    expect(hints.takeUnsettled()).toEqual({ local: [{ root: root.id, paths: ['x'] }], remoteIds: [] });
    expect(hints.takeUnsettled()).toEqual({ local: [], remoteIds: [] });
    expect(hints.nextWakeAtMs()).toBeNull();
    hints.wake(Number.MAX_SAFE_INTEGER);
    expect(hints.hasHints()).toBe(false);
  });

  it('wakes when a failed item\'s backoff elapses: retries and condition parks, never a park waiting for the item, nor the root itself', async () => {
    const { journal, hints } = await ledger();
    const base = { root: root.id, message: 'm', attempts: 1 } as const;
    journal.recordFailure({ ...base, path: p('later.txt'), code: 'server_error', nextRetryAtMs: 9_000, disposition: 'retry' });
    journal.recordFailure({ ...base, path: p('soon.txt'), code: 'server_error', nextRetryAtMs: 5_000, disposition: 'replan' });
    journal.recordFailure({ ...base, path: p('parked.txt'), code: 'server_error', nextRetryAtMs: 1_000, disposition: 'skip', parkClass: 'item' });
    journal.recordFailure({ ...base, path: p(''), code: 'server_error', nextRetryAtMs: 7_000, disposition: 'retry' });
    journal.recordFailure({ ...asOtherRoot(base), path: p('theirs.txt'), code: 'server_error', nextRetryAtMs: 100, disposition: 'retry' });
    expect(hints.nextWakeAtMs()).toBe(5_000);
    hints.wake(4_999);
    expect(hints.hasHints()).toBe(false);
    hints.wake(8_000);
    expect(hints.takeLocal(taken(), root.id)).toEqual(['soon.txt']);
    journal.recordFailure({ ...base, path: p('cond.txt'), code: 'server_error', nextRetryAtMs: 3_000, disposition: 'skip', parkClass: 'condition' });
    expect(hints.nextWakeAtMs()).toBe(3_000);
    hints.wake(9_000);
    expect(hints.takeLocal(taken(), root.id).sort()).toEqual(['cond.txt', 'later.txt', 'soon.txt']);
  });

  it('a held pair (paused on its own) keeps its hints, but they and its failed items neither count nor wake a pass', async () => {
    const { journal, hints } = await ledger();
    hints.held.add(root.id);
    hints.hintLocal(root.id, [p('waits.txt')]);
    expect(hints.hasHints()).toBe(false);
    journal.recordFailure({ root: root.id, message: 'm', attempts: 1, path: p('failed.txt'), code: 'server_error', nextRetryAtMs: 1_000, disposition: 'retry' });
    expect(hints.nextWakeAtMs()).toBeNull();
    hints.held.delete(root.id);
    expect(hints.hasHints()).toBe(true);
    expect(hints.nextWakeAtMs()).toBe(1_000);
    const t = taken();
    expect(hints.takeLocal(t, root.id)).toEqual(['waits.txt']);
  });
});

function asOtherRoot<T extends { root: unknown }>(x: T): T {
  return { ...x, root: asRootId('r2') };
}
