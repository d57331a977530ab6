/**
 * The local root guard (engine/root-guard.ts) on a real journal and a real folder: the merge base is read only
 * once the root lists empty, so a pass over a root with anything in it never walks the merge base (behind a huge
 * ignored first folder that walk read every row of it); a root that lists empty is still refused while a synced
 * entry at the top is in scope, and let through when every one is ignored.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { asRelPath as p, asRemoteId, type SyncedEntry, type SyncRoot } from '../../src/core/model.js';
import { checkLocalRoot, type RootGuardOptions } from '../../src/engine/root-guard.js';
import type { Journal } from '../../src/ports/journal.js';
import { tempLocalRoot } from './support/local-root.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

const pass: RootGuardOptions = { acceptNew: false, allowEmpty: false, checkEmpty: true, emptyGuard: true };
const ignoredBig = (path: string): boolean => path === 'big' || path.startsWith('big/');

function row(path: string, n: number, kind: 'file' | 'folder' = 'file'): SyncedEntry {
  return { path: p(path), remoteId: asRemoteId(String(n)), kind, etag: '1', sha1: kind === 'file' ? 'a'.repeat(40) : null, versionId: null, sizeBytes: 1, inode: n, mtimeMs: 1000, url: null };
}

/** A synced root whose first top-level folder, `big`, is ignored and holds `bigRows` rows; `z.txt` after it. */
async function setup(bigRows: number, topInScope: boolean): Promise<{ dir: string; root: SyncRoot; journal: Journal; walks: () => number; check: () => ReturnType<typeof checkLocalRoot> }> {
  const { dir, root, journal: base, fs } = await tempLocalRoot('boxsync-root-guard-', cleanups, '0');
  const isIgnored = topInScope ? ignoredBig : () => true;
  // The first check records the root's identity (nothing synced yet: a first sync).
  expect(await checkLocalRoot({ journal: base, root, fs, isIgnored, marker: null }, pass)).toEqual({ ok: true });
  base.transaction(() => {
    base.putSynced(root.id, row('big', 1, 'folder'));
    for (let i = 0; i < bigRows; i++) base.putSynced(root.id, row(`big/f${String(i).padStart(6, '0')}`, 10 + i));
    base.putSynced(root.id, row('z.txt', 2));
  });
  // The same journal, counting the walks of the merge base.
  let walks = 0;
  const journal = new Proxy(base, {
    get(target, key) {
      if (key === 'syncedUnder') walks++;
      const v = Reflect.get(target, key) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { dir, root, journal, walks: () => walks, check: () => checkLocalRoot({ journal, root, fs, isIgnored, marker: null }, pass) };
}

describe('the local root guard reads the merge base only when the root lists empty', () => {
  it('a root with a file in it passes without a walk of the merge base, however big its ignored first folder', async () => {
    const s = await setup(5000, true);
    await writeFile(join(s.dir, 'z.txt'), 'z');
    expect(await s.check()).toEqual({ ok: true });
    expect(s.walks()).toBe(0);
  });

  it('a root that lists empty (only the ignored folder in it) is refused as suddenly empty while z.txt is in scope', async () => {
    const s = await setup(200, true);
    await mkdir(join(s.dir, 'big'));
    const v = await s.check();
    expect(v.ok).toBe(false);
    expect(v.ok === false && v.id).toBe('local-root-empty:r1');
    expect(s.walks()).toBe(1);
  });

  it('a root that lists empty passes when every synced entry at the top is now ignored (out of scope)', async () => {
    const s = await setup(200, false);
    expect(await s.check()).toEqual({ ok: true });
    expect(s.walks()).toBe(1);
  });
});
