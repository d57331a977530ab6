import { describe, expect, it } from 'vitest';
import { HintBatcher } from '../../src/local/watcher-hint-batcher.js';
import type { WatchHint } from '../../src/ports/local-watcher.js';
import { waitFor } from '../support/wait.js';

describe('HintBatcher', () => {
  it('collapses repeated events on one path into one hint', async () => {
    const out: (readonly WatchHint[])[] = [];
    const b = new HintBatcher((h) => out.push(h), { settleMs: 50, deleteHoldMs: 100 });
    for (let i = 0; i < 20; i++) b.touch('x.txt');
    await waitFor(() => out.length > 0);
    expect(out.flat()).toEqual([{ path: 'x.txt', type: 'change' }]);
    b.close();
  });

  it('re-arms the settle timer while events keep coming', async () => {
    const out: { atMs: number; hints: readonly WatchHint[] }[] = [];
    const b = new HintBatcher((hints) => out.push({ atMs: Date.now(), hints }), { settleMs: 120 });
    const t0 = Date.now();
    for (let i = 0; i < 5; i++) {
      b.touch('w.bin');
      await new Promise((r) => setTimeout(r, 60));
    }
    const lastTouch = Date.now() - 60;
    await waitFor(() => out.length > 0);
    expect(out[0]!.atMs - lastTouch).toBeGreaterThanOrEqual(100);
    expect(out[0]!.atMs - t0).toBeGreaterThanOrEqual(300);
    b.close();
  });

  it('holds a delete longer than a write, and releases it with the next write (a move)', async () => {
    const out: (readonly WatchHint[])[] = [];
    const b = new HintBatcher((h) => out.push(h), { settleMs: 50, deleteHoldMs: 1_000 });
    b.remove('old.txt');
    await new Promise((r) => setTimeout(r, 20));
    b.touch('new.txt');
    await waitFor(() => out.length > 0);
    expect(out[0]!.map((h) => h.path).sort()).toEqual(['new.txt', 'old.txt']);
    b.close();
  });

  it('emits a lone delete after its hold', async () => {
    const out: (readonly WatchHint[])[] = [];
    const b = new HintBatcher((h) => out.push(h), { settleMs: 20, deleteHoldMs: 150 });
    const t0 = Date.now();
    b.remove('gone.txt');
    await waitFor(() => out.length > 0);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
    expect(out[0]).toEqual([{ path: 'gone.txt', type: 'change' }]);
    b.close();
  });

  it('emits rescans and flushAll drops nothing', () => {
    const out: (readonly WatchHint[])[] = [];
    const b = new HintBatcher((h) => out.push(h), { settleMs: 10_000 });
    b.touch('a');
    b.remove('b');
    b.rescan('');
    expect(b.size).toBe(3);
    b.flushAll();
    expect(out.flat()).toEqual([
      { path: 'a', type: 'change' },
      { path: 'b', type: 'change' },
      { path: '', type: 'rescan' },
    ]);
    b.close();
  });
});
