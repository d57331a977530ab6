import { describe, expect, it } from 'vitest';
import { asRelPath, asRootId } from '../../src/core/model.js';
import { remoteError } from '../../src/remote/box/error-codes.js';
import type { Outcome } from '../../src/engine/executor.js';
import { SMALL_FILE_BYTES, TransferQueue, priorityOf, type QueueTask } from '../../src/engine/transfer-queue.js';
import { waitFor } from '../support/wait.js';
import { ManualClock } from './support/manual-clock.js';

const root = asRootId('r1');
const done: Outcome = { status: 'done', result: { bytes: 0 } };

function task(path: string, direction: QueueTask['direction'], totalBytes: number, run: QueueTask['run']): QueueTask {
  return { root, path: asRelPath(path), direction, totalBytes, run };
}

describe('TransferQueue', () => {
  it('runs metadata first, then files from small to big (small downloads in a lane of their own)', async () => {
    const q = new TransferQueue({ concurrency: 1, smallConcurrency: 1, clock: new ManualClock() });
    const order: string[] = [];
    q.pause();
    const runs = [
      q.add(task('big.bin', 'up', 900_000, async () => (order.push('big'), done))),
      q.add(task('small.txt', 'up', 10, async () => (order.push('small'), done))),
      q.add(task('mid.bin', 'up', 30_000, async () => (order.push('mid'), done))),
      q.add(task('folder', null, 0, async () => (order.push('meta'), done))),
      q.add(task('mid-down.bin', 'down', 30_000, async () => (order.push('mid-down'), done))),
      q.add(task('small-down.txt', 'down', 10, async () => (order.push('small-down'), done))),
    ];
    expect(q.queued(root).ops).toBe(6);
    q.resume();
    await Promise.all(runs);
    expect(order.filter((o) => !o.endsWith('-down'))).toEqual(['meta', 'small', 'mid', 'big']);
    expect(order.filter((o) => o.endsWith('-down'))).toEqual(['small-down', 'mid-down']);
    expect(q.queued(root)).toEqual({ ops: 0, bytes: 0 });
    expect(priorityOf({ direction: null, totalBytes: 0 })).toBeGreaterThan(priorityOf({ direction: 'up', totalBytes: 0 }));
  });

  it('small files do not wait behind big ones: they travel in their own, wider lane', async () => {
    const q = new TransferQueue({ concurrency: 1, clock: new ManualClock() });
    let releaseBig!: () => void;
    const bigGate = new Promise<void>((r) => (releaseBig = r));
    const big = q.add(task('huge.iso', 'down', 5 * SMALL_FILE_BYTES, async () => (await bigGate, done)));
    await waitFor(() => q.inFlight(root).length === 1, { what: 'the big transfer to start' });
    const smalls = await Promise.all([1, 2, 3].map((i) => q.add(task(`s${i}.txt`, 'up', 100, async () => done))));
    expect(smalls.every((o) => o.status === 'done')).toBe(true);
    expect(q.inFlight(root).map((t) => t.path)).toEqual(['huge.iso']);
    releaseBig();
    await big;
  });

  it('holds queued work while paused and releases it on resume', async () => {
    const q = new TransferQueue({ concurrency: 2, clock: new ManualClock() });
    q.pause();
    let started = false;
    const run = q.add(task('a', 'up', 1, async () => ((started = true), done)));
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    expect(started).toBe(false);
    expect(q.paused).toBe(true);
    q.resume();
    await expect(run).resolves.toEqual(done);
    expect(started).toBe(true);
  });

  it('reports in-flight transfers with progress and a rate', async () => {
    const clock = new ManualClock();
    const q = new TransferQueue({ concurrency: 1, clock });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const run = q.add(
      task('x.bin', 'down', 1000, async (onProgress) => {
        onProgress({ doneBytes: 0, totalBytes: 1000 });
        clock.advance(1000);
        onProgress({ doneBytes: 400, totalBytes: 1000 });
        await gate;
        return done;
      }),
    );
    const live = await waitFor(() => (q.inFlight(root)[0]?.doneBytes === 400 ? q.inFlight(root) : null), { what: 'progress' });
    expect(live[0]).toMatchObject({ path: 'x.bin', direction: 'down', totalBytes: 1000 });
    expect(q.queued(root)).toEqual({ ops: 1, bytes: 600 });
    expect(q.rateBytesPerSec()).toBeGreaterThan(0);
    release();
    await run;
    expect(q.inFlight(root)).toEqual([]);
  });

  /** One download of `total` bytes held open: its progress reported by `step`, its end by `release`. */
  async function heldTransfer(total: number): Promise<{ clock: ManualClock; q: TransferQueue; step: (n: number) => void; release: () => Promise<void> }> {
    const clock = new ManualClock();
    const q = new TransferQueue({ concurrency: 1, clock });
    let step: ((n: number) => void) | undefined;
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const run = q.add(
      task('y.bin', 'down', total, async (onProgress) => {
        step = (n) => onProgress({ doneBytes: n, totalBytes: total });
        await gate;
        return done;
      }),
    );
    await waitFor(() => (step === undefined ? null : true), { what: 'the transfer to start' });
    return { clock, q, step: (n) => step!(n), release: async () => (open(), void (await run)) };
  }

  it('rates the bytes of the last 10 s: samples leave the rate as they age out', async () => {
    const { clock, q, step, release } = await heldTransfer(1000);
    step(0);
    clock.advance(1000);
    step(400);
    expect(q.rateBytesPerSec()).toBe(400); // 400 bytes over the 1 s floor
    clock.advance(2000);
    step(1000);
    expect(q.rateBytesPerSec()).toBe(500); // 1,000 bytes over the 2 s since the first sample
    clock.advance(9500);
    expect(q.rateBytesPerSec()).toBeCloseTo(600_000 / 9500, 6); // the first sample aged out
    clock.advance(1000);
    expect(q.rateBytesPerSec()).toBe(0);
    await release();
  });

  it('keeps progress within 100 ms of the latest sample in that sample: it ages out with it (the window holds at most 100 samples)', async () => {
    const { clock, q, step, release } = await heldTransfer(10_000);
    for (let i = 1; i <= 99; i++) {
      step(i * 10);
      clock.advance(1);
    }
    step(1000); // 99 ms after the first report: the same sample
    clock.advance(1);
    step(2000); // 100 ms after it: a new sample
    expect(q.rateBytesPerSec()).toBe(2000); // 2,000 bytes over the 1 s floor
    clock.advance(9901); // 10,001 ms after the first sample, 9,901 after the second
    expect(q.rateBytesPerSec()).toBeCloseTo(1_000_000 / 9901, 6); // the first 1,000 bytes aged out together
    await release();
  });

  it('returns a 429 as the item failure it is: the pacer in the Box adapter owns retries of rate limits', async () => {
    const clock = new ManualClock();
    const q = new TransferQueue({ concurrency: 1, clock });
    let attempts = 0;
    const outcome = await q.add(task('a', 'up', 1, async () => (attempts++, { status: 'failed', error: remoteError('rate_limited', 'slow down', { retryAfterMs: 10 }) })));
    expect(outcome.status).toBe('failed');
    expect(attempts).toBe(1);
    expect(clock.sleeping).toBe(0);
  });
});
