/** Local observation over a real temp dir and a real journal: scans swept folder by folder, and batched re-stats. */
import * as nodeFs from 'node:fs';
import { spawnSync } from 'node:child_process';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { asRelPath as p, asRemoteId } from '../../src/core/model.js';
import { hintedScope } from '../../src/engine/hinted-scope.js';
import { restatLocal, scanLocal, type LocalObserverDeps } from '../../src/engine/observe-local.js';
import { localFsOn, tempLocalRoot } from './support/local-root.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function setup(): Promise<{ deps: LocalObserverDeps; dir: string }> {
  const { dir, root, journal, fs } = await tempLocalRoot('boxsync-observe-local-', cleanups);
  return { deps: { journal, root, fs, isIgnored: () => false }, dir };
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

describe('scanLocal: the sweep, folder by folder', () => {
  it('a folder replaced by a file of the same name: its row becomes the file, and the rows below it go', async () => {
    const { deps, dir } = await setup();
    await mkdir(join(dir, 'd', 'e'), { recursive: true });
    await writeFile(join(dir, 'd', 'e', 'x'), 'x');
    await writeFile(join(dir, 'd', 'y'), 'y');
    await scanLocal(deps);
    expect(rows(deps)).toEqual(['d', 'd/e', 'd/e/x', 'd/y']);
    await rm(join(dir, 'd'), { recursive: true });
    await writeFile(join(dir, 'd'), 'now a file');
    const { changed } = await scanLocal(deps, undefined, undefined, 100);
    expect(rows(deps)).toEqual(['d']);
    expect(deps.journal.getLocal(deps.root.id, p('d'))?.kind).toBe('file');
    expect([...(changed ?? [])].sort()).toEqual(['d', 'd/e', 'd/e/x', 'd/y']);
  });

  it('rows no listed folder reaches (their parent row lost) are found by the count and dropped; the rest stay', async () => {
    const { deps, dir } = await setup();
    await mkdir(join(dir, 'kept'));
    await writeFile(join(dir, 'kept', 'k'), 'k');
    await scanLocal(deps);
    // Rows below a path with no row and nothing on disk: no listing of the walk ever sees them.
    const orphan = { kind: 'file' as const, inode: 99, sizeBytes: 1, mtimeMs: 1, sha1: null };
    deps.journal.transaction(() => {
      for (const path of ['lost/a', 'lost/b/c', 'kept/k/under-a-file']) deps.journal.putLocal(deps.root.id, { ...orphan, path: p(path) });
      deps.journal.putLocal(deps.root.id, { ...orphan, path: p('lost/b'), kind: 'folder' });
    });
    await scanLocal(deps);
    expect(rows(deps)).toEqual(['kept', 'kept/k']);
    // The same below a subtree scan's base.
    deps.journal.putLocal(deps.root.id, { ...orphan, path: p('kept/gone/x') });
    await scanLocal(deps, p('kept'));
    expect(rows(deps)).toEqual(['kept', 'kept/k']);
  });

  it('a subtree scan of a folder gone from disk drops every row below it', async () => {
    const { deps, dir } = await setup();
    await mkdir(join(dir, 'a', 'b'), { recursive: true });
    await writeFile(join(dir, 'a', 'b', 'x'), 'x');
    await writeFile(join(dir, 'z'), 'z');
    await scanLocal(deps);
    await rm(join(dir, 'a'), { recursive: true });
    await scanLocal(deps, p('a'));
    // The base's own row is the caller's (restatLocal); everything below it is gone.
    expect(rows(deps)).toEqual(['a', 'z']);
  });

  it('an unreadable folder is never swept: its rows stay until it can be read', async () => {
    const { deps, dir } = await setup();
    await mkdir(join(dir, 'locked'));
    await writeFile(join(dir, 'locked', 'x'), 'x');
    await scanLocal(deps);
    const unreadable: string[] = [];
    const listed: string[] = [];
    const seen: string[] = [];
    const denied = (path: nodeFs.PathLike): void => {
      if (String(path).endsWith('/locked')) throw Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });
    };
    // Both ways the walk reads a folder: through the pool, and synchronously while its lstats are.
    const failingReaddir = {
      ...nodeFs,
      promises: { ...nodeFs.promises, readdir: async (path: nodeFs.PathLike) => (denied(path), nodeFs.promises.readdir(path)) },
      readdirSync: (path: nodeFs.PathLike) => (denied(path), nodeFs.readdirSync(path)),
    } as typeof nodeFs;
    const fs = localFsOn(dir, join(dir, '..', 'state2'), failingReaddir);
    for await (const batch of fs.scan({ isIgnored: () => false, onUnreadable: (path) => unreadable.push(path), onListed: (d) => listed.push(d) })) seen.push(...batch.map((e) => e.path));
    expect(unreadable).toEqual(['locked']);
    expect(listed).toEqual(['']);
    expect(seen).toEqual(['locked']);
    // scanLocal parks the folder (the planner plans nothing at or below it) and drops no row below it.
    await writeFile(join(dir, 'new.txt'), 'new');
    await scanLocal({ ...deps, fs });
    expect(rows(deps)).toEqual(['locked', 'locked/x', 'new.txt']);
    const park = deps.journal.getFailure(deps.root.id, p('locked'));
    expect(park).toMatchObject({ code: 'permission_denied', disposition: 'skip', parkClass: 'condition' });
    expect(park?.message).toMatch(/reading the folder locked failed \(EACCES\)/);
    // Readable again: the next scan clears the park by itself.
    await scanLocal(deps);
    expect(deps.journal.getFailure(deps.root.id, p('locked'))).toBeUndefined();
  });
});

describe('scanLocal: one bad entry never stops the scan', () => {
  it('an entry that cannot be looked at (EACCES on lstat) is parked and its rows kept; its siblings sync', async () => {
    const { deps, dir } = await setup();
    await mkdir(join(dir, 'shut'));
    await writeFile(join(dir, 'shut', 'x'), 'x');
    await scanLocal(deps);
    const deny = (path: nodeFs.PathLike): boolean => String(path).endsWith('/shut');
    const eacces = (): Error => Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });
    const faulty = {
      ...nodeFs,
      lstat: ((path: nodeFs.PathLike, cb: (e: Error | null, st?: nodeFs.Stats) => void) => (deny(path) ? cb(eacces()) : nodeFs.lstat(path, cb))) as typeof nodeFs.lstat,
      lstatSync: ((path: nodeFs.PathLike, o?: nodeFs.StatSyncOptions) => {
        if (deny(path)) throw eacces();
        return nodeFs.lstatSync(path, o);
      }) as typeof nodeFs.lstatSync,
      promises: { ...nodeFs.promises, lstat: (async (path: nodeFs.PathLike) => (deny(path) ? Promise.reject(eacces()) : nodeFs.promises.lstat(path))) as typeof nodeFs.promises.lstat },
    } as typeof nodeFs;
    const fs = localFsOn(dir, join(dir, '..', 'state2'), faulty);
    await writeFile(join(dir, 'sibling.txt'), 's');
    await scanLocal({ ...deps, fs });
    expect(rows(deps)).toEqual(['shut', 'shut/x', 'sibling.txt']);
    expect(deps.journal.getFailure(deps.root.id, p('shut'))).toMatchObject({ code: 'permission_denied', disposition: 'skip', parkClass: 'condition' });
  });

  it('a path past PATH_MAX is parked as too long here, not an unclassified error', async () => {
    const { deps, dir } = await setup();
    const seg = 'n'.repeat(250);
    const build = `const fs = require('node:fs'); for (let i = 0; i < 18; i++) { fs.mkdirSync(${JSON.stringify(seg)}); process.chdir(${JSON.stringify(seg)}); }`;
    cleanups.unshift(async () => void spawnSync('rm', ['-rf', join(dir, seg)]));
    expect(spawnSync(process.execPath, ['-e', build], { cwd: dir }).status).toBe(0);
    await scanLocal(deps);
    const parks = deps.journal.failures(deps.root.id);
    expect(parks).toHaveLength(1);
    expect(parks[0]).toMatchObject({ code: 'name_too_long', disposition: 'skip', parkClass: 'condition' });
    expect(parks[0]!.message).toMatch(/\(ENAMETOOLONG\); the name is too long for this file system/);
  });

  it('a name that is not UTF-8 is parked under its escaped name, and the park goes when it is renamed', async () => {
    const { deps, dir } = await setup();
    const bad = Buffer.concat([Buffer.from(`${dir}/`), Buffer.from([0xff, 0x41, 0xc3])]);
    await writeFile(bad, 'x');
    await scanLocal(deps);
    expect(rows(deps)).toEqual([]);
    expect(deps.journal.failures(deps.root.id)).toMatchObject([{ path: '\\xffA\\xc3', code: 'local_name_not_utf8', parkClass: 'item' }]);
    await rename(bad, join(dir, 'fixed'));
    await scanLocal(deps);
    expect(rows(deps)).toEqual(['fixed']);
    expect(deps.journal.failures(deps.root.id)).toEqual([]);
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

describe('hintedScope over a burst', () => {
  it('offers the event loop a turn per base in every walk, and finds the same scope as without turns', async () => {
    const { deps, dir } = await setup();
    await mkdir(join(dir, 'd'));
    const names = Array.from({ length: 300 }, (_, i) => `d/f${i}`);
    for (const n of names) await writeFile(join(dir, n), n);
    await scanLocal(deps);
    // Synced as they are, then a burst: half deleted, half rewritten.
    deps.journal.transaction(() => {
      for (const e of deps.journal.localUnder(deps.root.id, '')) {
        deps.journal.putSynced(deps.root.id, { path: e.path, remoteId: asRemoteId(`id-${e.path}`), kind: e.kind === 'folder' ? 'folder' : 'file', etag: '0', sha1: e.sha1, versionId: null, sizeBytes: e.sizeBytes, inode: e.inode, mtimeMs: e.mtimeMs, url: null });
      }
    });
    for (const [i, n] of names.entries()) await (i % 2 === 0 ? rm(join(dir, n)) : writeFile(join(dir, n), `${n} again`));
    const hints = names.map((n) => p(n));
    let turns = 0;
    const counted = await hintedScope(deps, hints, [], { goneSince: new Map(), nowMs: 0, slice: async () => void (turns += 1) });
    // The move-end walk, the vanished-ancestor check, goneBelow and the settle check each take a turn per base
    // or candidate.
    expect(turns).toBeGreaterThanOrEqual(4 * names.length);
    const plain = await hintedScope(deps, hints, [], { goneSince: new Map(), nowMs: 0 });
    expect(counted.kind === 'hinted' && [...counted.localPaths].sort()).toEqual(plain.kind === 'hinted' && [...plain.localPaths].sort());
    expect(counted.kind === 'hinted' && counted.unsettled?.length).toBe(names.length / 2);
  });
});
