/**
 * The bandwidth cap lets a small file's bytes go first (remote/box/bandwidth.ts): a big transfer sharing the cap
 * takes nothing while a small one waits, so it no longer waits for the big one's bytes. On a manual clock.
 */
import { describe, expect, it } from 'vitest';
import { Bandwidth } from '../../../src/remote/box/bandwidth.js';
import { ManualClock } from '../../engine/support/manual-clock.js';

/** Lets pending promise callbacks run (the bucket's waits are on the manual clock, not on timers). */
const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('Bandwidth: small transfers first', () => {
  it('a small file waiting for bytes gets them before a big transfer that asked earlier', async () => {
    const clock = new ManualClock();
    const bw = new Bandwidth(16 * 1024, clock); // 16 KiB/s; the bucket holds 16 KiB (its floor)
    const order: string[] = [];
    await bw.take(16 * 1024, undefined, 500 * 1024 * 1024); // the big upload empties the bucket
    // The big one's next 8 KiB would come at 500 ms; the small file's 16 KiB, asked at 100 ms, at 1 s.
    const big = bw.take(8 * 1024, undefined, 500 * 1024 * 1024).then(() => order.push('big'));
    await turn();
    clock.advance(100);
    const small = bw.take(16 * 1024, undefined, 16 * 1024).then(() => order.push('small'));
    for (let i = 0; i < 100 && order.length < 2; i++) {
      await turn();
      clock.advance(100);
      await turn();
    }
    await Promise.all([big, small]);
    expect(order).toEqual(['small', 'big']);
  });

  it('without a small one waiting, a big transfer takes the whole cap (nothing is held back)', async () => {
    const clock = new ManualClock();
    const bw = new Bandwidth(16 * 1024, clock);
    const startMs = clock.now();
    await bw.take(16 * 1024, undefined, 500 * 1024 * 1024);
    const big = bw.take(16 * 1024, undefined, 500 * 1024 * 1024);
    let done = false;
    void big.then(() => (done = true));
    for (let i = 0; i < 100 && !done; i++) {
      await turn();
      clock.advance(100);
      await turn();
    }
    expect(done).toBe(true);
    expect(clock.now() - startMs).toBeLessThanOrEqual(1100);
  });
});
