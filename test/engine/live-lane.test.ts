/**
 * The live lane's rules (engine/live-lane.ts): which paths a big transfer holds, when the lane opens, and that it
 * ends with its batch. The lane beside a real big upload is tested with the daemon (test/daemon/daemon-live-lane.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { asRelPath as p } from '../../src/core/model.js';
import type { Operation } from '../../src/core/operations.js';
import { BusyPaths, InFlight, withLiveLane } from '../../src/engine/live-lane.js';
import { waitFor } from '../support/wait.js';

const op = (kind: 'upload' | 'remote-move', path: string, from?: string): Operation =>
  (kind === 'remote-move' ? { kind, to: p(path), from: p(from ?? path) } : { kind, path: p(path) }) as unknown as Operation;

describe('live lane', () => {
  it('a busy path holds itself, its ancestors and its descendants, and nothing beside them', () => {
    const busy = new BusyPaths([p('a/big.bin'), p('dir')]);
    for (const q of ['a/big.bin', 'a', '', 'dir', 'dir/x/y.txt']) expect(busy.covers(p(q))).toBe(true);
    for (const q of ['a/big.bin2', 'a/small.txt', 'b', 'dirx', 'directory/f']) expect(busy.covers(p(q))).toBe(false);
    // Both ends of a move count.
    expect(busy.coversOp(op('remote-move', 'elsewhere.txt', 'a/big.bin'))).toBe(true);
    expect(busy.coversOp(op('upload', 'a/small.txt'))).toBe(false);
  });

  it('opens only while every operation in flight is a big transfer', () => {
    const inFlight = new InFlight();
    expect(inFlight.bigOnly()).toBeNull();
    const big = op('upload', 'big.bin');
    const small = op('upload', 'small.txt');
    inFlight.add(big, { direction: 'up', totalBytes: 500 * 1024 * 1024 });
    inFlight.add(small, { direction: 'up', totalBytes: 10 });
    expect(inFlight.bigOnly()).toBeNull();
    inFlight.delete(small);
    expect(inFlight.bigOnly()?.covers(p('big.bin'))).toBe(true);
    inFlight.add(small, { direction: null, totalBytes: 0 });
    expect(inFlight.bigOnly()).toBeNull();
  });

  it('runs a live sync when hints come while only big transfers run, and ends with its batch', async () => {
    const inFlight = new InFlight();
    inFlight.add(op('upload', 'big.bin'), { direction: 'up', totalBytes: 2 * 1024 * 1024 });
    let finish!: () => void;
    const batch = new Promise<void>((r) => (finish = r));
    let hints = 0;
    let wake!: () => void;
    const synced: boolean[] = [];
    const lane = withLiveLane(batch, {
      inFlight,
      hasHints: () => hints > 0,
      nextHint: () => new Promise<void>((r) => (wake = r)),
      liveSync: async (busy) => {
        synced.push(busy.covers(p('big.bin')));
        hints = 0;
      },
    });
    await new Promise((r) => setImmediate(r));
    hints = 1;
    wake();
    await waitFor(() => synced.length > 0, { timeoutMs: 10_000, what: 'the live sync' });
    expect(synced).toEqual([true]);
    finish();
    await lane;
  });
});
