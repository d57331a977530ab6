/**
 * Two folder pairs in one engine and one journal: each root syncs its own Box folder, rows of one never leak
 * into the other, overlapping runOnce calls are serialized, and a root refused by a guard does not stop the other.
 */
import * as nodeFs from 'node:fs';
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { asRemoteId, asRootId, type SyncRoot } from '../../src/core/model.js';
import { createEngine } from '../../src/engine/index.js';
import { openJournal } from '../../src/journal/index.js';
import { createLocalFs } from '../../src/local/local-fs.js';
import { createLocalTrash } from '../../src/local/local-trash.js';
import { silentLogger } from '../../src/logger.js';
import { systemClock } from '../../src/ports/clock.js';
import type { LocalFs } from '../../src/ports/local-fs.js';
import { FakeRemoteStore } from '../support/fake-remote-store.js';
import { makeTempDir } from '../support/tmp.js';
import { FakeChanges } from './support/fake-changes.js';
import { ignoreFor } from './support/engine-workspace.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

/** Two roots (Work with a file on each side, Home with one on Box) in one engine over one journal. */
async function twoRoots() {
  const tmp = await makeTempDir('boxsync-engine-roots-');
  const store = new FakeRemoteStore();
  const work = store.seedFolder(asRemoteId('0'), 'Work');
  const home = store.seedFolder(asRemoteId('0'), 'Home');
  store.seedFile(work.id, 'w.txt', 'work file');
  store.seedFile(home.id, 'h.txt', 'home file');
  const roots: SyncRoot[] = [
    { id: asRootId('work'), remoteId: work.id, localPath: join(tmp.dir, 'Work'), direction: 'two-way', exclude: [] },
    { id: asRootId('home'), remoteId: home.id, localPath: join(tmp.dir, 'Home'), direction: 'two-way', exclude: [] },
  ];
  await mkdir(roots[0]!.localPath);
  await writeFile(join(roots[0]!.localPath, 'local-work.txt'), 'from disk');
  const stateDir = join(tmp.dir, 'state');
  const { journal } = openJournal(join(stateDir, 'journal.db'));
  const fsByRoot = new Map<string, LocalFs>(
    roots.map((r) => [r.id, createLocalFs({ rootPath: r.localPath, fs: nodeFs, trash: createLocalTrash({ mode: 'state', stateDir, fs: nodeFs }) })]),
  );
  const engine = createEngine({
    journal,
    remote: store,
    changes: new FakeChanges(store),
    roots,
    localFsFor: (r) => fsByRoot.get(r.id)!,
    logger: silentLogger,
    clock: systemClock,
    options: { streamType: 'changes', transferConcurrency: 2, maxDeletes: 100, maxDeleteFraction: 0.5 },
    isIgnoredFor: ignoreFor,
  });
  cleanups.push(async () => {
    await engine.close();
    journal.close();
    await tmp.cleanup();
  });
  return { tmp, store, work, home, roots, journal, engine };
}

describe('engine: several roots', () => {
  it('syncs each root with its own Box folder, and serializes overlapping runs', async () => {
    const { store, work, home, roots, journal, engine } = await twoRoots();
    const [first, second] = await Promise.all([engine.runOnce(), engine.runOnce()]);
    expect(first.outcome).toBe('converged');
    expect(first.ops.download).toBe(2);
    expect(second.outcome).toBe('converged');
    expect(second.ops).toEqual({});
    expect((await readdir(roots[0]!.localPath)).sort()).toEqual(['local-work.txt', 'w.txt']);
    expect(await readdir(roots[1]!.localPath)).toEqual(['h.txt']);
    expect(await readFile(join(roots[1]!.localPath, 'h.txt'), 'utf8')).toBe('home file');
    expect(store.childByName(work.id, 'local-work.txt')).toBeDefined();
    expect(store.childByName(home.id, 'local-work.txt')).toBeUndefined();
    expect(journal.countSynced(asRootId('work')).files).toBe(2);
    expect(journal.countSynced(asRootId('home')).files).toBe(1);
    expect(engine.status().roots.map((r) => r.root)).toEqual(['work', 'home']);
  });

  it('a root replaced by another folder is refused and left alone on both sides; the other root syncs on', async () => {
    const { tmp, store, work, home, roots, engine } = await twoRoots();
    expect((await engine.runOnce()).outcome).toBe('converged');
    await rename(roots[0]!.localPath, join(tmp.dir, 'Work.old'));
    await mkdir(roots[0]!.localPath);
    store.seedFile(home.id, 'h2.txt', 'news for home');
    const s = await engine.runOnce();
    expect(s.outcome).toBe('guard');
    expect(s.message).toMatch(/Work is not the folder that was synced/);
    expect(engine.status().heldGuard?.id).toBe('local-root-missing:work');
    expect(await readFile(join(roots[1]!.localPath, 'h2.txt'), 'utf8')).toBe('news for home');
    expect(store.calls.filter((c) => c.method === 'trash')).toEqual([]);
    expect(store.childByName(work.id, 'w.txt')).toBeDefined();
    expect(store.childByName(work.id, 'local-work.txt')).toBeDefined();
    expect(await readdir(roots[0]!.localPath)).toEqual([]);
  });
});
