/** Parks that clear themselves (engine/park-recheck.ts) over a real temp dir and a real journal. */
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { asRelPath as p, type SyncRoot } from '../../src/core/model.js';
import { SyncError } from '../../src/core/errors.js';
import { isClean, markClean } from '../../src/engine/clean-mark.js';
import { recordOpFailure } from '../../src/engine/failures.js';
import { recheckParks, retryParks } from '../../src/engine/park-recheck.js';
import { REJECTED_CODE } from '../../src/engine/remote-listing.js';
import type { Journal } from '../../src/ports/journal.js';
import type { LocalFs } from '../../src/ports/local-fs.js';
import { tempLocalRoot } from './support/local-root.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function setup(): Promise<{ journal: Journal; root: SyncRoot; fs: LocalFs; dir: string }> {
  const { dir, root, journal, fs } = await tempLocalRoot('boxsync-park-recheck-', cleanups);
  await mkdir(join(dir, 'docs'));
  return { journal, root, fs, dir };
}

const denied = new SyncError({ code: 'permission_denied', disposition: 'skip', message: 'creating the temp file for docs/c.txt failed (EACCES)' });

describe('recheckParks', () => {
  it('a sync --once clears a local condition park once its folder changed (chmod), and keeps it while nothing changed', async () => {
    const { journal, root, fs, dir } = await setup();
    await chmod(join(dir, 'docs'), 0o555);
    const rec = recordOpFailure(journal, { root: root.id, path: p('docs/c.txt'), error: denied, nowMs: 1_000, random: 0.5, probe: await fs.probe!(p('docs/c.txt')) });
    expect(rec).toMatchObject({ disposition: 'skip', parkClass: 'condition' });
    // Backoff, for the daemon: not the hundred years an item park waits.
    expect(rec.nextRetryAtMs).toBeLessThan(1_000 + 3_600_000);
    expect(await recheckParks({ journal, root, fs }, { mode: 'all', nowMs: 2_000 })).toEqual([]);
    expect(journal.getFailure(root.id, p('docs/c.txt'))).toBeDefined();
    await chmod(join(dir, 'docs'), 0o755);
    expect(await recheckParks({ journal, root, fs }, { mode: 'all', nowMs: 3_000 })).toEqual([p('docs/c.txt')]);
    expect(journal.getFailure(root.id, p('docs/c.txt'))).toBeUndefined();
  });

  it('a park on a condition with nothing local to look at is tried by every sync --once; an item park is left alone', async () => {
    const { journal, root, fs } = await setup();
    const locked = new SyncError({ code: 'locked', disposition: 'skip', message: 'locked on Box' });
    const refused = new SyncError({ code: 'name-invalid', disposition: 'skip', message: 'Box refuses the name' });
    recordOpFailure(journal, { root: root.id, path: p('l.txt'), error: locked, nowMs: 0, random: 0.5 });
    recordOpFailure(journal, { root: root.id, path: p('bad '), error: refused, nowMs: 0, random: 0.5 });
    expect(journal.getFailure(root.id, p('bad '))?.parkClass).toBe('item');
    expect(await recheckParks({ journal, root, fs }, { mode: 'all', nowMs: 1 })).toEqual([p('l.txt')]);
    expect(journal.failures(root.id).map((f) => f.path)).toEqual([p('bad ')]);
  });

  it('the daemon retries a condition park whose backoff elapsed even when its probe is the same', async () => {
    const { journal, root, fs } = await setup();
    await writeFile(join(root.localPath, 'docs', 'c.txt'), 'c');
    const rec = recordOpFailure(journal, { root: root.id, path: p('docs/c.txt'), error: denied, nowMs: 0, random: 0.5, probe: await fs.probe!(p('docs/c.txt')) });
    expect(await recheckParks({ journal, root, fs }, { mode: 'due', nowMs: rec.nextRetryAtMs - 1 })).toEqual([]);
    expect(await recheckParks({ journal, root, fs }, { mode: 'due', nowMs: rec.nextRetryAtMs })).toEqual([p('docs/c.txt')]);
  });
});

describe('retryParks', () => {
  it('clears the rows at or below a path (or all), never what a Box listing refused, and makes the next run plan the whole root', async () => {
    const { journal, root } = await setup();
    for (const path of ['docs/a', 'docs/sub/b', 'other']) recordOpFailure(journal, { root: root.id, path: p(path), error: denied, nowMs: 0, random: 0.5 });
    journal.recordFailure({ root: root.id, path: p('docs/refused'), code: REJECTED_CODE, message: 'Box sent garbage', attempts: 1, nextRetryAtMs: 0, disposition: 'skip' });
    markClean(journal, root, 0, true);
    expect(isClean(journal, root, 1)).toBe(true);
    expect(retryParks(journal, [root], { root: root.id, path: p('docs') }).map((f) => f.path)).toEqual([p('docs/a'), p('docs/sub/b')]);
    expect(isClean(journal, root, 1)).toBe(false);
    expect(journal.failures(root.id).map((f) => f.path)).toEqual([p('docs/refused'), p('other')]);
    expect(retryParks(journal, [root]).map((f) => f.path)).toEqual([p('other')]);
  });
});
