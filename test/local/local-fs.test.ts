import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as nodeFs from 'node:fs';
import { mkdir, readFile, readdir, stat, symlink, writeFile, lstat, appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isSyncError } from '../../src/core/errors.js';
import { asRelPath as p, type LocalEntry } from '../../src/core/model.js';
import { createIgnoreMatcher } from '../../src/local/ignore.js';
import { createLocalFs } from '../../src/local/local-fs.js';
import { createLocalTrash } from '../../src/local/local-trash.js';
import type { LocalFs } from '../../src/ports/local-fs.js';
import { makeTempDir } from '../support/tmp.js';

let tmp: { dir: string; cleanup: () => Promise<void> };
let root: string;
let outside: string;
let local: LocalFs;

beforeEach(async () => {
  tmp = await makeTempDir('boxsync-localfs-');
  root = join(tmp.dir, 'root');
  outside = join(tmp.dir, 'outside');
  await mkdir(root);
  await mkdir(outside);
  await writeFile(join(outside, 'secret.txt'), 'outside the root');
  local = createLocalFs({ rootPath: root, fs: nodeFs, trash: createLocalTrash({ mode: 'state', stateDir: join(tmp.dir, 'state'), fs: nodeFs }) });
});
afterEach(async () => {
  await tmp.cleanup();
});

async function scanAll(opts: Partial<Parameters<LocalFs['scan']>[0]> = {}): Promise<LocalEntry[]> {
  const out: LocalEntry[] = [];
  for await (const b of local.scan({ isIgnored: createIgnoreMatcher([]), ...opts })) out.push(...b);
  return out;
}

const guardOf = async (abs: string) => {
  const st = await lstat(abs);
  return { state: 'file' as const, sizeBytes: st.size, mtimeMs: st.mtimeMs, inode: st.ino };
};

describe('LocalFs on a real directory', () => {
  it('reports symlinks (even to folders outside the root) as symlinks, and sockets/fifos as other, never following them', async () => {
    await symlink(outside, join(root, 'out'));
    await symlink('/nonexistent/target', join(root, 'dangling'));
    execFileSync('mkfifo', [join(root, 'pipe')]);
    await writeFile(join(root, 'a.txt'), 'a');
    const entries = await scanAll({ hash: true });
    expect(entries.map((e) => [e.path, e.kind]).sort()).toEqual([
      ['a.txt', 'file'],
      ['dangling', 'symlink'],
      ['out', 'symlink'],
      ['pipe', 'other'],
    ]);
    expect(entries.some((e) => e.path.includes('secret'))).toBe(false);
  });

  it('never writes through a symlinked folder that leads out of the root', async () => {
    await symlink(outside, join(root, 'out'));
    const err = await local.writeSmallFile(p('out/secret.txt'), 'overwritten', { state: 'absent' }).catch((e: unknown) => e);
    expect(isSyncError(err) && err.code === 'symlink_in_path' && err.disposition === 'skip').toBe(true);
    const err2 = await local.mkdir(p('out/newdir')).catch((e: unknown) => e);
    expect(isSyncError(err2) && err2.code === 'symlink_in_path').toBe(true);
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('outside the root');
    expect(await readdir(outside)).toEqual(['secret.txt']);
  });

  it('never looks through a symlinked folder either: stat, hash and scan `under` stay inside the root', async () => {
    await symlink(outside, join(root, 'out'));
    expect(await local.stat(p('out/secret.txt'))).toBeUndefined();
    expect((await local.stat(p('out')))?.kind).toBe('symlink');
    const err = await local.hash(p('out/secret.txt')).catch((e: unknown) => e);
    expect(isSyncError(err) && err.code === 'symlink_in_path').toBe(true);
    expect(await scanAll({ under: p('out') })).toEqual([expect.objectContaining({ path: 'out', kind: 'symlink' })]);
    expect(await scanAll({ under: p('out/secret.txt') })).toEqual([]);
  });

  it('hashes with streaming SHA-1 and stats like lstat', async () => {
    const big = Buffer.alloc(3 * 1024 * 1024 + 7, 0x61);
    await writeFile(join(root, 'big.bin'), big);
    expect(await local.hash(p('big.bin'))).toBe(createHash('sha1').update(big).digest('hex'));
    const st = await stat(join(root, 'big.bin'));
    expect(await local.stat(p('big.bin'))).toEqual({ path: 'big.bin', kind: 'file', inode: st.ino, sizeBytes: big.length, mtimeMs: st.mtimeMs, sha1: null });
    expect(await local.stat(p('nothing'))).toBeUndefined();
  });

  it('commits a downloaded temp file atomically with the given mtime, and the scanner never sees the temp file', async () => {
    await mkdir(join(root, 'd'));
    const temp = local.tempPathFor(p('d/report.pdf'));
    await writeFile(temp, 'pdf bytes');
    expect((await scanAll()).map((e) => e.path)).toEqual(['d']);
    const entry = await local.commitTemp(temp, p('d/report.pdf'), { state: 'absent' }, 1_650_000_000_000);
    const st = await stat(join(root, 'd', 'report.pdf'));
    expect(entry).toEqual({ path: 'd/report.pdf', kind: 'file', inode: st.ino, sizeBytes: 9, mtimeMs: 1_650_000_000_000, sha1: null });
    expect(st.nlink).toBe(1);
    expect(await readdir(join(root, 'd'))).toEqual(['report.pdf']);
  });

  it('leaves a file the user changed after planning alone (guard mismatch), and the temp file is cleaned up', async () => {
    await writeFile(join(root, 'notes.md'), 'v1');
    const g = await guardOf(join(root, 'notes.md'));
    await appendFile(join(root, 'notes.md'), ' + user edit');
    const temp = local.tempPathFor(p('notes.md'));
    await writeFile(temp, 'remote v2');
    const err = await local.commitTemp(temp, p('notes.md'), g).catch((e: unknown) => e);
    expect(isSyncError(err) && err.code === 'local_changed' && err.disposition === 'replan').toBe(true);
    expect((err as Error).message).toMatch(/changed on disk since it was planned.*planned again/);
    expect(await readFile(join(root, 'notes.md'), 'utf8')).toBe('v1 + user edit');
    expect(await readdir(root)).toEqual(['notes.md']);
    const err2 = await local.trash(p('notes.md'), g).catch((e: unknown) => e);
    expect(isSyncError(err2) && err2.code === 'local_changed').toBe(true);
    expect(await readFile(join(root, 'notes.md'), 'utf8')).toBe('v1 + user edit');
  });

  it('replaces a file in place when its guard holds', async () => {
    await writeFile(join(root, 'notes.md'), 'v1');
    const g = await guardOf(join(root, 'notes.md'));
    const temp = local.tempPathFor(p('notes.md'));
    await writeFile(temp, 'remote v2');
    await local.commitTemp(temp, p('notes.md'), g);
    expect(await readFile(join(root, 'notes.md'), 'utf8')).toBe('remote v2');
    expect(await readdir(root)).toEqual(['notes.md']);
  });

  it('moves a folder and a file, keeping inodes, refusing an occupied target', async () => {
    await mkdir(join(root, 'a', 'b'), { recursive: true });
    await writeFile(join(root, 'a', 'b', 'f'), 'f');
    await writeFile(join(root, 'taken'), 't');
    const a = await lstat(join(root, 'a'));
    const occupied = await local.move(p('a'), p('taken'), { state: 'folder', inode: a.ino }).catch((e: unknown) => e);
    expect(isSyncError(occupied) && occupied.code === 'local_changed').toBe(true);
    const moved = await local.move(p('a'), p('z'), { state: 'folder', inode: a.ino });
    expect(moved).toMatchObject({ path: 'z', kind: 'folder', inode: a.ino });
    const f = await lstat(join(root, 'z', 'b', 'f'));
    const movedFile = await local.move(p('z/b/f'), p('f2'), { state: 'file', sizeBytes: 1, mtimeMs: f.mtimeMs, inode: f.ino });
    expect(movedFile.inode).toBe(f.ino);
    expect((await lstat(join(root, 'f2'))).nlink).toBe(1);
    expect((await readdir(root)).sort()).toEqual(['f2', 'taken', 'z']);
  });

  it('copies a file into an existing one in place (same inode), refusing when the target changed since it was looked at', async () => {
    await writeFile(join(root, 'copy.txt'), 'the user version');
    await writeFile(join(root, 'doc.txt'), 'the box version');
    const guard = await guardOf(join(root, 'doc.txt'));
    await appendFile(join(root, 'doc.txt'), ' edited since');
    const refused = await local.copyInto(p('copy.txt'), p('doc.txt'), guard).catch((e: unknown) => e);
    expect(isSyncError(refused) && refused.code === 'local_changed').toBe(true);
    expect(await readFile(join(root, 'doc.txt'), 'utf8')).toBe('the box version edited since');
    const fresh = await guardOf(join(root, 'doc.txt'));
    const e = await local.copyInto(p('copy.txt'), p('doc.txt'), fresh);
    expect(e).toMatchObject({ path: 'doc.txt', kind: 'file', inode: fresh.inode, sizeBytes: 'the user version'.length });
    expect(await readFile(join(root, 'doc.txt'), 'utf8')).toBe('the user version');
    expect(await readFile(join(root, 'copy.txt'), 'utf8')).toBe('the user version');
  });

  it('writes a small file atomically (web link files)', async () => {
    const e = await local.writeSmallFile(p('site.url'), '[InternetShortcut]\nURL=https://example.com\n', { state: 'absent' }, 1_600_000_000_000);
    expect(e.mtimeMs).toBe(1_600_000_000_000);
    expect(await readFile(join(root, 'site.url'), 'utf8')).toContain('URL=https://example.com');
  });

  it('trashes into the state trash and returns where it went', async () => {
    await mkdir(join(root, 'dir'));
    await writeFile(join(root, 'dir', 'x.txt'), 'x');
    const d = await lstat(join(root, 'dir'));
    const dest = await local.trash(p('dir'), { state: 'folder', inode: d.ino });
    expect(dest.startsWith(join(tmp.dir, 'state', 'trash'))).toBe(true);
    expect(await readFile(join(dest, 'x.txt'), 'utf8')).toBe('x');
    expect(await readdir(root)).toEqual([]);
  });

  it('refuses to scan a root that is gone instead of reporting everything deleted', async () => {
    const gone = createLocalFs({ rootPath: join(tmp.dir, 'unmounted'), fs: nodeFs, trash: createLocalTrash({ mode: 'state', stateDir: tmp.dir, fs: nodeFs }) });
    const it = gone.scan({ isIgnored: () => false })[Symbol.asyncIterator]();
    const err = await it.next().catch((e: unknown) => e);
    expect(isSyncError(err) && err.code === 'local_root_missing').toBe(true);
  });
});

describe('a root that is itself a symlink', () => {
  it('is followed (the user chose it), while symlinks inside stay unfollowed', async () => {
    await writeFile(join(root, 'in-root.txt'), 'x');
    await symlink(outside, join(root, 'out'));
    const linkRoot = join(tmp.dir, 'root-link');
    await symlink(root, linkRoot);
    const viaLink = createLocalFs({ rootPath: linkRoot, fs: nodeFs, trash: createLocalTrash({ mode: 'state', stateDir: tmp.dir, fs: nodeFs }) });
    const out: LocalEntry[] = [];
    for await (const b of viaLink.scan({ isIgnored: () => false })) out.push(...b);
    expect(out.map((e) => [e.path, e.kind]).sort()).toEqual([
      ['in-root.txt', 'file'],
      ['out', 'symlink'],
    ]);
  });
});

describe('names Box would take for one (issue 10: never make a case clash)', () => {
  const absent = { state: 'absent' as const };
  async function writeNew(path: string, content: string): Promise<unknown> {
    return local.writeSmallFile(p(path), content, absent).then(() => null, (e: unknown) => e);
  }

  it('refuses to write a new file beside a sibling that differs only in case, and touches nothing', async () => {
    await mkdir(join(root, 'B.txt'));
    const err = await writeNew('b.txt', 'from Box');
    expect(isSyncError(err) && err.code === 'local_changed' && err.disposition === 'replan').toBe(true);
    expect((err as Error).message).toMatch(/"B\.txt" appeared beside it .* Box treats both names as one/);
    expect((await readdir(root)).sort()).toEqual(['B.txt']);
  });

  it('sees a twin created after its cached listing of the folder, and one that differs in Unicode normalization', async () => {
    expect(await writeNew('first.txt', '1')).toBeNull();
    await writeFile(join(root, 'SECOND.txt'), 'made by the user meanwhile');
    const err = await writeNew('second.txt', '2');
    expect(isSyncError(err) && err.code === 'local_changed').toBe(true);
    await writeFile(join(root, 'caf\u0065\u0301.txt'), 'decomposed');
    expect(isSyncError(await writeNew('caf\u00e9.txt', 'composed'))).toBe(true);
    expect((await readdir(root)).sort()).toEqual(['SECOND.txt', 'caf\u0065\u0301.txt', 'first.txt']);
  });

  it('refuses a new folder beside a twin file, but allows a case-only rename of the item itself', async () => {
    await writeFile(join(root, 'Docs'), 'a file');
    expect(isSyncError(await local.mkdir(p('docs')).catch((e: unknown) => e))).toBe(true);
    await writeFile(join(root, 'report.txt'), 'r');
    const moved = await local.move(p('report.txt'), p('Report.txt'), await guardOf(join(root, 'report.txt')));
    expect(moved.path).toBe('Report.txt');
    expect((await readdir(root)).sort()).toEqual(['Docs', 'Report.txt']);
  });

  it('a name freed by its own trash or move can be written again in another case', async () => {
    await writeFile(join(root, 'a.md'), 'old');
    expect(await writeNew('other.txt', 'x')).toBeNull();
    await local.trash(p('a.md'), await guardOf(join(root, 'a.md')));
    expect(await writeNew('A.md', 'new')).toBeNull();
    await local.move(p('A.md'), p('sub.md'), await guardOf(join(root, 'A.md')));
    expect(await writeNew('a.MD', 'again')).toBeNull();
    expect((await readdir(root)).sort()).toEqual(['a.MD', 'other.txt', 'sub.md']);
  });
});

describe('abs: a path inside the root', () => {
  it('gives what join() gives for a valid path, for a root given with extra slashes too, and refuses every path that is not one', () => {
    const roots = [root, `${root}/`, `${root}//`, root.replace(/\//g, '//'), '/'];
    const good = ['a', 'a/b', '.hidden', '...', 'a..b', 'a/.b/..c', 'x y/z', 'é/履歴'];
    for (const r of roots) {
      const fs = createLocalFs({ rootPath: r, fs: nodeFs, trash: createLocalTrash({ mode: 'state', stateDir: join(tmp.dir, 'state'), fs: nodeFs }) });
      for (const g of good) expect(fs.abs(p(g)), `${r} + ${g}`).toBe(join(r, g));
      for (const g of good) expect(fs.tempPathFor(p(g)).startsWith(join(r, g, '..') === '/' ? '/' : `${join(r, g, '..')}/`)).toBe(true);
    }
    for (const bad of ['', '/a', 'a/', 'a//b', '.', '..', './a', 'a/.', 'a/./b', '../a', 'a/..', 'a/../b', 'a\0b']) {
      let err: unknown;
      try {
        local.abs(bad as ReturnType<typeof p>);
      } catch (e) {
        err = e;
      }
      expect(isSyncError(err) && err.code === 'invalid_path', JSON.stringify(bad)).toBe(true);
    }
  });
});
