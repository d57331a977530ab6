import { describe, expect, it, vi } from 'vitest';
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

  it('hints a path written without pause at least every maxSettleMs (a growing file), not only once it stops', async () => {
    const out: { atMs: number; hints: readonly WatchHint[] }[] = [];
    const b = new HintBatcher((hints) => out.push({ atMs: Date.now(), hints }), { settleMs: 10_000, maxSettleMs: 200 });
    // The quiet time (10 s) never elapses while the touches go on: only the bound can hint the path.
    for (let i = 0; i < 50; i++) {
      b.touch('grow.log');
      await new Promise((r) => setTimeout(r, 20));
    }
    const whileWriting = out.filter((o) => o.hints.some((h) => h.path === 'grow.log')).length;
    b.close();
    expect(whileWriting).toBeGreaterThanOrEqual(2);
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

  it('does not let a delete ride with an unrelated write while its own create half is still settling', () => {
    vi.useFakeTimers({ now: 1_000_000 });
    try {
      const out: (readonly WatchHint[])[] = [];
      const b = new HintBatcher((h) => out.push(h), { settleMs: 150, deleteHoldMs: 600, minBatchIntervalMs: 0 });
      b.touch('dir/saved.txt'); // an unrelated save
      vi.advanceTimersByTime(50);
      b.remove('dir'); // the folder is moved...
      b.touch('other/dir'); // ...and its new name settles 50 ms after the save does
      vi.advanceTimersByTime(100);
      // The save settled: it goes alone, the delete waits for its create half.
      expect(out.map((h) => h.map((x) => x.path).sort())).toEqual([['dir/saved.txt']]);
      vi.advanceTimersByTime(60);
      expect(out.map((h) => h.map((x) => x.path).sort())).toEqual([['dir/saved.txt'], ['dir', 'other/dir']]);
      // A delete with no create half still goes at the end of its hold while a file written since before it
      // keeps being written (no candidate for its other half).
      for (let i = 0; i < 3; i++) {
        b.touch('busy.log');
        vi.advanceTimersByTime(100);
      }
      b.remove('gone.txt');
      for (let i = 0; i < 7; i++) {
        b.touch('busy.log');
        vi.advanceTimersByTime(100);
      }
      expect(out.flat().map((x) => x.path)).toContain('gone.txt');
      expect(out.flat().map((x) => x.path)).not.toContain('busy.log');
      // A create that appears with a delete holds it past its hold while it settles, within a bound.
      b.remove('moved-away');
      b.touch('arrived');
      for (let i = 0; i < 10; i++) {
        b.touch('arrived'); // still being written
        vi.advanceTimersByTime(100);
      }
      expect(out.flat().map((x) => x.path)).not.toContain('moved-away');
      vi.advanceTimersByTime(5_000);
      expect(out.flat().map((x) => x.path)).toContain('moved-away');
      b.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('holds deletes while a rename event is not yet known to be a create or a delete (a probe), within a bound', () => {
    vi.useFakeTimers({ now: 2_000_000 });
    try {
      const out: (readonly WatchHint[])[] = [];
      const b = new HintBatcher((h) => out.push(h), { settleMs: 150, deleteHoldMs: 600, minBatchIntervalMs: 0 });
      b.remove('dir');
      b.probe('other/dir'); // its lstat has not answered yet
      vi.advanceTimersByTime(1_000);
      expect(out).toEqual([]); // the delete's hold is over, but its create half may be the probe
      b.touch('other/dir'); // the lstat answered: it exists
      vi.advanceTimersByTime(200);
      expect(out.map((h) => h.map((x) => x.path).sort())).toEqual([['dir', 'other/dir']]);
      // A probe whose lstat turns out to be an ignored folder is dropped; one never answered is hinted at its bound.
      b.probe('ignored-dir');
      b.drop('ignored-dir');
      b.probe('never-answered');
      vi.advanceTimersByTime(4_900);
      expect(out.flat().map((x) => x.path)).not.toContain('never-answered');
      vi.advanceTimersByTime(200);
      expect(out.flat().map((x) => x.path)).toContain('never-answered');
      expect(out.flat().map((x) => x.path)).not.toContain('ignored-dir');
      b.close();
    } finally {
      vi.useRealTimers();
    }
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

  it('does work linear in the events: 50,000 creates, deletes and re-creates of a package manager (manual clock)', () => {
    vi.useFakeTimers({ now: 2_000_000 });
    try {
      const hinted = new Set<string>();
      let batches = 0;
      const b = new HintBatcher((h) => {
        batches += 1;
        for (const x of h) hinted.add(x.path);
      });
      // Events arrive in bursts of 500 a millisecond apart, as a watcher reads them.
      const burst = (paths: readonly string[], act: (p: string) => void): void => {
        for (let i = 0; i < paths.length; i++) {
          act(paths[i]!);
          if (i % 500 === 499) vi.advanceTimersByTime(1);
        }
      };
      const created = Array.from({ length: 20_000 }, (_, i) => `node_modules/p${i % 400}/f${i}.js`);
      burst(created, (p) => b.touch(p));
      vi.advanceTimersByTime(2_000);
      burst(created, (p) => b.remove(p));
      burst(created.slice(0, 10_000), (p) => b.touch(p));
      vi.advanceTimersByTime(10_000);
      // Every path was hinted, nothing is left pending, and the batcher looked at a bounded number of entries
      // per event (a scan per event made this 50,000 x 30,000 looks).
      expect(hinted.size).toBe(20_000);
      expect(b.size).toBe(0);
      expect(batches).toBeLessThan(200);
      expect(b.examined).toBeLessThan(50_000 * 20);
      b.close();
    } finally {
      vi.useRealTimers();
    }
  });
});
