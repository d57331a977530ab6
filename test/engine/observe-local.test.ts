/** Local observation over a real temp dir and a real journal: mark-and-sweep scans and batched re-stats. */
import * as nodeFs from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { asRelPath as p, asRemoteId, asRootId, type SyncRoot } from '../../src/core/model.js';
import { restatLocal, scanLocal, type LocalObserverDeps } from '../../src/engine/observe-local.js';
import { createLocalFs } from '../../src/local/local-fs.js';
import { createLocalTrash } from '../../src/local/local-trash.js';
import { silentLogger } from '../../src/logger.js';
import { makeTempDir } from '../support/tmp.js';
import { tempJournal } from './support/journal.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function setup(): Promise<{ deps: LocalObserverDeps; dir: string }> {
  const tmp = await makeTempDir('boxsync-observe-local-');
  cleanups.push(tmp.cleanup);
  const j = await tempJournal();
  cleanups.push(j.cleanup);
  const dir = join(tmp.dir, 'Box');
  await mkdir(dir);
  const root: SyncRoot = { id: asRootId('r1'), remoteId: asRemoteId('1'), localPath: dir, direction: 'two-way', exclude: [] };
  const fs = createLocalFs({
    rootPath: dir,
    fs: nodeFs,
    trash: createLocalTrash({ mode: 'state', stateDir: join(tmp.dir, 'state'), fs: nodeFs, logger: silentLogger }),
    logger: silentLogger,
  });
  return { deps: { journal: j.journal, root, fs, isIgnored: () => false }, dir };
}

const rows = (deps: LocalObserverDeps, under: string = ''): string[] =>
  [...deps.journal.localUnder(deps.root.id, under === '' ? '' : p(under))].map((e) => e.path);

describe('scanLocal', () => {
  it('drops the rows of everything gone from disk, more of them than one sweep chunk, and keeps the rest', async () => {
    const { deps, dir } = await setup();
    await mkdir(join(dir, 'gone'));
    await mkdir(join(dir, 'kept'));
    for (let i = 0; i < 1200; i++) await writeFile(join(dir, 'gone', `f${i}`), `${i}`);
    await writeFile(join(dir, 'kept', 'k.txt'), 'k');
    await scanLocal(deps);
    expect(rows(deps)).toHaveLength(1203);
    await rm(join(dir, 'gone'), { recursive: true });
    await scanLocal(deps);
    expect(rows(deps)).toEqual(['kept', 'kept/k.txt']);
    expect(deps.journal.getLocal(deps.root.id, p('kept/k.txt'))?.sha1).toBe('13fbd79c3d390e5d6585a21e11ff5ec1970cff0c');
  });

  it('a subtree scan sweeps only that subtree', async () => {
    const { deps, dir } = await setup();
    for (const d of ['a', 'b']) {
      await mkdir(join(dir, d));
      await writeFile(join(dir, d, 'x'), d);
    }
    await scanLocal(deps);
    await rm(join(dir, 'a', 'x'));
    await rm(join(dir, 'b', 'x'));
    await scanLocal(deps, p('a'));
    expect(rows(deps)).toEqual(['a', 'b', 'b/x']);
  });
});

describe('restatLocal', () => {
  it('applies many hints in order: new, edited, gone, and a folder whose rescan supersedes a file hint inside it', async () => {
    const { deps, dir } = await setup();
    await mkdir(join(dir, 'd'));
    for (let i = 0; i < 40; i++) await writeFile(join(dir, `f${i}`), `v1 ${i}`);
    await writeFile(join(dir, 'd', 'in.txt'), 'in');
    await scanLocal(deps);
    await writeFile(join(dir, 'f3'), 'v2 3, longer');
    await rm(join(dir, 'f7'));
    await writeFile(join(dir, 'new.txt'), 'new');
    await writeFile(join(dir, 'd', 'in2.txt'), 'in2');
    const hints = [p('d/in.txt'), p('d'), p('f3'), p('f7'), p('new.txt'), ...Array.from({ length: 30 }, (_, i) => p(`f${i + 10}`))];
    await restatLocal(deps, hints);
    const all = rows(deps);
    expect(all).toContain('new.txt');
    expect(all).toContain('d/in2.txt');
    expect(all).not.toContain('f7');
    expect(all).toHaveLength(1 + 2 + 40 - 1 + 1);
    expect(deps.journal.getLocal(deps.root.id, p('f3'))?.sizeBytes).toBe('v2 3, longer'.length);
    expect(deps.journal.getLocal(deps.root.id, p('f3'))?.sha1).toMatch(/^[0-9a-f]{40}$/);
  });

  it('a gone path brings along a new name beside it; any hinted path brings its case twins, known or not (world 1002)', async () => {
    const { deps, dir } = await setup();
    await writeFile(join(dir, 'b.txt'), 'synced');
    await writeFile(join(dir, 'Report.md'), 'r');
    await writeFile(join(dir, 'other.txt'), 'o');
    await scanLocal(deps);
    // b.txt is replaced by a folder B.txt/ (already known to the journal by an earlier hint); report.md is new
    // beside Report.md; nothing happens to other.txt.
    await rm(join(dir, 'b.txt'));
    await mkdir(join(dir, 'B.txt'));
    await writeFile(join(dir, 'B.txt', 'inner.txt'), 'made here');
    await restatLocal(deps, [p('B.txt')]);
    expect((await restatLocal(deps, [p('b.txt')])).sort()).toEqual(['B.txt']);
    await writeFile(join(dir, 'report.md'), 'twin');
    expect((await restatLocal(deps, [p('report.md')])).sort()).toEqual(['Report.md']);
    expect(rows(deps)).toEqual(expect.arrayContaining(['B.txt', 'B.txt/inner.txt', 'Report.md', 'report.md', 'other.txt']));
    expect(rows(deps)).not.toContain('b.txt');
  });
});
