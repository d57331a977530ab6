import { truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RUN_CACHE_MAX_KIB, RUN_CACHE_MIN_KIB, runJournalCacheKiB } from '../../src/journal/cache-size.js';
import { makeTempDir } from '../support/tmp.js';

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0)) await c();
});

describe('a run\'s journal page cache (journal/cache-size.ts)', () => {
  it('is the least for a first run (no journal), the file\'s size between the bounds, and the most for a big journal', async () => {
    const tmp = await makeTempDir('boxsync-cache-size-');
    cleanup.push(tmp.cleanup);
    const path = join(tmp.dir, 'journal.db');
    expect(runJournalCacheKiB(path)).toBe(RUN_CACHE_MIN_KIB);
    await writeFile(path, Buffer.alloc(100 * 1024));
    expect(runJournalCacheKiB(path)).toBe(RUN_CACHE_MIN_KIB);
    await truncate(path, 9_000 * 1024);
    expect(runJournalCacheKiB(path)).toBe(9_000);
    await truncate(path, 64 * 1024 * 1024);
    expect(runJournalCacheKiB(path)).toBe(RUN_CACHE_MAX_KIB);
  });
});
