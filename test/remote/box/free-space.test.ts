/**
 * The free-space readings before a download (src/remote/box/free-space.ts): one set per adapter, aged by the
 * adapter's clock. The readings come from the real statfs on a real temp folder; the test only counts them.
 */
import { statfs } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../../src/ports/clock.js';
import { FreeSpace, type ReadFreeBytes } from '../../../src/remote/box/free-space.js';
import { makeTempDir } from '../../support/tmp.js';

/** The real statfs, counted. */
function countedStatfs(): { read: ReadFreeBytes; readonly dirs: string[] } {
  const dirs: string[] = [];
  return {
    dirs,
    read: async (dir) => {
      dirs.push(dir);
      const s = await statfs(dir);
      return s.bavail * s.bsize;
    },
  };
}

/** A clock that moves only when told to. */
function manualClock(): Clock & { advance(ms: number): void } {
  let now = 1_700_000_000_000;
  return {
    now: () => now,
    sleep: async (ms) => void (now += ms),
    advance: (ms) => void (now += ms),
  };
}

describe('FreeSpace', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  beforeAll(async () => {
    tmp = await makeTempDir('boxsync-free-');
  });
  afterAll(async () => {
    await tmp.cleanup();
  });

  it('reads a folder once, then again only when the injected clock says more than a second passed', async () => {
    const clock = manualClock();
    const statfsCalls = countedStatfs();
    const free = new FreeSpace(clock, statfsCalls.read);
    for (let i = 0; i < 5; i++) await free.admit('1', join(tmp.dir, `small-${i}`), 7);
    expect(statfsCalls.dirs).toEqual([tmp.dir]);
    clock.advance(1000);
    await free.admit('1', join(tmp.dir, 'at-the-second'), 7);
    expect(statfsCalls.dirs).toHaveLength(1);
    clock.advance(1);
    await free.admit('1', join(tmp.dir, 'after-the-second'), 7);
    expect(statfsCalls.dirs).toEqual([tmp.dir, tmp.dir]);
  });

  it('two instances (createBoxAdapter makes one per adapter) keep their own readings; each refuses what does not fit', async () => {
    const clock = manualClock();
    const first = countedStatfs();
    const second = countedStatfs();
    const a = new FreeSpace(clock, first.read);
    const b = new FreeSpace(clock, second.read);
    await a.admit('1', join(tmp.dir, 'a'), 7);
    await b.admit('1', join(tmp.dir, 'b'), 7);
    await b.admit('1', join(tmp.dir, 'b2'), 7);
    expect(first.dirs).toHaveLength(1);
    expect(second.dirs).toHaveLength(1);
    await expect(b.admit('9', join(tmp.dir, 'huge'), 2 ** 52)).rejects.toMatchObject({ code: 'disk_full', disposition: 'retry' });
    // The refusal read the disk again (the estimate was near the reserve); the first adapter did not.
    expect(second.dirs).toHaveLength(2);
    expect(first.dirs).toHaveLength(1);
  });
});
