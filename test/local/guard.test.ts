import { Volume, createFsFromVolume } from 'memfs';
import { describe, expect, it } from 'vitest';
import { isSyncError } from '../../src/core/errors.js';
import { asRelPath as p } from '../../src/core/model.js';
import type { LocalGuard } from '../../src/core/operations.js';
import type { FsModule } from '../../src/local/fs-module.js';
import { guardHolds } from '../../src/local/guard.js';
import { createLocalFs } from '../../src/local/local-fs.js';
import { createLocalTrash } from '../../src/local/local-trash.js';
import { withFaults, type FaultRule } from './faulty-fs.js';

function setup(files: Record<string, string | null>, rule?: FaultRule) {
  const mem = createFsFromVolume(Volume.fromJSON({ '/state/.keep': '', ...files })) as unknown as FsModule;
  const fs = rule ? withFaults(mem, rule) : mem;
  const local = createLocalFs({ rootPath: '/r', fs, trash: createLocalTrash({ mode: 'state', stateDir: '/state', fs, now: () => Date.UTC(2026, 0, 2) }) });
  return { mem, fs, local };
}

async function fileGuard(fs: FsModule, abs: string): Promise<Extract<LocalGuard, { state: 'file' }>> {
  const st = await fs.promises.lstat(abs);
  return { state: 'file', sizeBytes: st.size, mtimeMs: st.mtimeMs, inode: st.ino };
}

async function codeOf(pr: Promise<unknown>): Promise<string> {
  const e = await pr.then(() => undefined, (x: unknown) => x);
  if (!isSyncError(e)) throw new Error(`expected a SyncError, got ${String(e)}`);
  return `${e.code}/${e.disposition}`;
}

const read = (fs: FsModule, path: string) => fs.promises.readFile(path, 'utf8');
const exists = (fs: FsModule, path: string) => fs.promises.lstat(path).then(() => true, () => false);

describe('guardHolds', () => {
  it('compares kind, size, mtime and inode', async () => {
    const { mem } = setup({ '/r/f': 'abc', '/r/d/x': '' });
    const f = await mem.promises.lstat('/r/f');
    const d = await mem.promises.lstat('/r/d');
    const g: LocalGuard = { state: 'file', sizeBytes: 3, mtimeMs: f.mtimeMs, inode: f.ino };
    expect(guardHolds(g, f)).toBe(true);
    expect(guardHolds({ ...g, sizeBytes: 4 }, f)).toBe(false);
    expect(guardHolds({ ...g, mtimeMs: f.mtimeMs + 1 }, f)).toBe(false);
    expect(guardHolds({ ...g, inode: f.ino + 1 }, f)).toBe(false);
    expect(guardHolds(g, d)).toBe(false);
    expect(guardHolds(g, undefined)).toBe(false);
    expect(guardHolds({ state: 'folder', inode: d.ino }, d)).toBe(true);
    expect(guardHolds({ state: 'folder', inode: d.ino }, f)).toBe(false);
    expect(guardHolds({ state: 'absent' }, undefined)).toBe(true);
    expect(guardHolds({ state: 'absent' }, f)).toBe(false);
  });
});

describe('guarded writes (memfs)', () => {
  it('replaces a file whose guard holds, setting mtime and removing the temp name', async () => {
    const { fs, local } = setup({ '/r/f.txt': 'old' });
    const g = await fileGuard(fs, '/r/f.txt');
    const tmp = local.tempPathFor(p('f.txt'));
    expect(tmp).toMatch(/^\/r\/\.boxsync-tmp-[0-9a-z]{13,}$/);
    await fs.promises.writeFile(tmp, 'new!');
    const e = await local.commitTemp(tmp, p('f.txt'), g, 1_600_000_000_000);
    expect(await read(fs, '/r/f.txt')).toBe('new!');
    expect(e).toMatchObject({ path: 'f.txt', kind: 'file', sizeBytes: 4, mtimeMs: 1_600_000_000_000 });
    expect(await exists(fs, tmp)).toBe(false);
  });

  it('fsyncs the folders of its renames at durable(), each once, and nothing more at the next call', async () => {
    const { fs, local } = setup({ '/r/d/x': '', '/r/e/y': '' }, () => undefined);
    const calls = (fs as unknown as { calls: { method: string; args: readonly unknown[] }[] }).calls;
    const dirOpens = () => calls.filter((c) => c.method === 'open' && ['/r/d', '/r/e', '/r'].includes(String(c.args[0]))).map((c) => String(c.args[0]));
    for (const name of ['d/a', 'd/b', 'd/c']) {
      const tmp = local.tempPathFor(p(name));
      await fs.promises.writeFile(tmp, name);
      await local.commitTemp(tmp, p(name), { state: 'absent' });
    }
    const g = await fileGuard(fs, '/r/e/y');
    await local.move(p('e/y'), p('z'), g);
    expect(dirOpens()).toEqual([]);
    await local.durable();
    expect(dirOpens().sort()).toEqual(['/r', '/r/d', '/r/e']);
    await local.durable();
    expect(dirOpens()).toHaveLength(3);
  });

  it('fsyncs the temp file before its rename, unless its writer says it did (a download fsyncs before closing)', async () => {
    const { fs, local } = setup({ '/r/x': '' }, () => undefined);
    const calls = (fs as unknown as { calls: { method: string; args: readonly unknown[] }[] }).calls;
    const opensOf = (abs: string) => calls.filter((c) => c.method === 'open' && String(c.args[0]) === abs).length;
    const plain = local.tempPathFor(p('a'));
    await fs.promises.writeFile(plain, 'a');
    await local.commitTemp(plain, p('a'), { state: 'absent' }, 1_600_000_000_000);
    expect(opensOf(plain)).toBe(1);
    const synced = local.tempPathFor(p('b'));
    await fs.promises.writeFile(synced, 'b');
    const e = await local.commitTemp(synced, p('b'), { state: 'absent' }, 1_600_000_000_000, { synced: true });
    expect(opensOf(synced)).toBe(0);
    expect(e).toMatchObject({ path: 'b', sizeBytes: 1, mtimeMs: 1_600_000_000_000 });
    expect(await read(fs, '/r/b')).toBe('b');
  });

  it('does not replace a file edited since planning: local_changed, target untouched, temp removed', async () => {
    const { fs, local } = setup({ '/r/f.txt': 'old' });
    const g = await fileGuard(fs, '/r/f.txt');
    await fs.promises.writeFile('/r/f.txt', 'user edit');
    const tmp = local.tempPathFor(p('f.txt'));
    await fs.promises.writeFile(tmp, 'download');
    expect(await codeOf(local.commitTemp(tmp, p('f.txt'), g))).toBe('local_changed/replan');
    expect(await read(fs, '/r/f.txt')).toBe('user edit');
    expect(await exists(fs, tmp)).toBe(false);
  });

  it('never clobbers a file that appeared where the plan expected nothing', async () => {
    const { fs, local } = setup({ '/r/d/new.txt': 'created by the user meanwhile' });
    const tmp = local.tempPathFor(p('d/new.txt'));
    await fs.promises.writeFile(tmp, 'download');
    expect(await codeOf(local.commitTemp(tmp, p('d/new.txt'), { state: 'absent' }))).toBe('local_changed/replan');
    expect(await read(fs, '/r/d/new.txt')).toBe('created by the user meanwhile');
  });

  it('falls back to check + rename where the file system has no hard links', async () => {
    const { fs, local } = setup({ '/r/x': '' }, (m) => (m === 'link' ? 'EPERM' : undefined));
    const tmp = local.tempPathFor(p('n.txt'));
    await fs.promises.writeFile(tmp, 'data');
    await local.commitTemp(tmp, p('n.txt'), { state: 'absent' });
    expect(await read(fs, '/r/n.txt')).toBe('data');
    expect(await exists(fs, tmp)).toBe(false);
  });

  it('refuses to replace a folder with a file', async () => {
    const { fs, local } = setup({ '/r/d/inside': 'keep' });
    const d = await fs.promises.lstat('/r/d');
    const tmp = local.tempPathFor(p('d'));
    await fs.promises.writeFile(tmp, 'file');
    expect(await codeOf(local.commitTemp(tmp, p('d'), { state: 'folder', inode: d.ino }))).toBe('folder_in_the_way/skip');
    expect(await read(fs, '/r/d/inside')).toBe('keep');
  });

  it('moves only when the source matches and the target is absent', async () => {
    const { fs, local } = setup({ '/r/a.txt': 'A', '/r/b.txt': 'B', '/r/sub/.keep': '' });
    const g = await fileGuard(fs, '/r/a.txt');
    expect(await codeOf(local.move(p('a.txt'), p('b.txt'), g))).toBe('local_changed/replan');
    expect(await read(fs, '/r/b.txt')).toBe('B');
    expect(await codeOf(local.move(p('a.txt'), p('sub/a.txt'), { ...g, sizeBytes: 2 }))).toBe('local_changed/replan');
    expect(await exists(fs, '/r/sub/a.txt')).toBe(false);
    const moved = await local.move(p('a.txt'), p('sub/a.txt'), g);
    expect(moved).toMatchObject({ path: 'sub/a.txt', inode: g.inode });
    expect(await exists(fs, '/r/a.txt')).toBe(false);
    expect(await read(fs, '/r/sub/a.txt')).toBe('A');
  });

  it('moves a folder with its contents in one rename', async () => {
    const { fs, local } = setup({ '/r/d/x': '1', '/r/d/y/z': '2' });
    const d = await fs.promises.lstat('/r/d');
    await local.move(p('d'), p('e'), { state: 'folder', inode: d.ino });
    expect(await read(fs, '/r/e/y/z')).toBe('2');
    expect(await exists(fs, '/r/d')).toBe(false);
  });

  it('trashes only what the guard describes, and never unlinks', async () => {
    const { fs, local } = setup({ '/r/doc.txt': 'precious' });
    const g = await fileGuard(fs, '/r/doc.txt');
    await fs.promises.appendFile('/r/doc.txt', ' and more');
    expect(await codeOf(local.trash(p('doc.txt'), g))).toBe('local_changed/replan');
    expect(await read(fs, '/r/doc.txt')).toBe('precious and more');
    const dest = await local.trash(p('doc.txt'), await fileGuard(fs, '/r/doc.txt'));
    expect(dest).toMatch(/^\/state\/trash\/2026-01-02\/\d+-[0-9a-f]+\/doc\.txt$/);
    expect(await read(fs, dest)).toBe('precious and more');
    expect(await exists(fs, '/r/doc.txt')).toBe(false);
  });

  it('turns a full disk while writing the temp file into disk_full (fatal): temp removed, target untouched', async () => {
    const { fs, local } = setup({ '/r/link.url': 'old link' }, (m, args) =>
      m === 'writeFile' && String(args[0]).includes('.boxsync-tmp-') ? 'ENOSPC' : undefined,
    );
    const g = await fileGuard(fs, '/r/link.url');
    const e = await local.writeSmallFile(p('link.url'), 'new link', g).catch((x: unknown) => x);
    expect(isSyncError(e) && e.code === 'disk_full' && e.disposition === 'fatal').toBe(true);
    expect((e as Error).message).toMatch(/disk is full.*free some space/);
    expect(await read(fs, '/r/link.url')).toBe('old link');
    expect((await fs.promises.readdir('/r')).map(String)).toEqual(['link.url']);
  });

  it('turns a full disk at fsync into disk_full too, removing the temp file', async () => {
    const { fs, local } = setup({ '/r/a': '' }, (m, args) => (m === 'open' && String(args[0]).includes('.boxsync-tmp-') ? 'ENOSPC' : undefined));
    const tmp = local.tempPathFor(p('b'));
    await fs.promises.writeFile(tmp, 'x');
    expect(await codeOf(local.commitTemp(tmp, p('b'), { state: 'absent' }))).toBe('disk_full/fatal');
    expect(await exists(fs, tmp)).toBe(false);
    expect(await exists(fs, '/r/b')).toBe(false);
  });

  it('turns permission denied into skip', async () => {
    const { fs, local } = setup({ '/r/a.txt': 'A' }, (m) => (m === 'link' || m === 'rename' ? 'EACCES' : undefined));
    const g = await fileGuard(fs, '/r/a.txt');
    expect(await codeOf(local.move(p('a.txt'), p('b.txt'), g))).toBe('permission_denied/skip');
    expect(await read(fs, '/r/a.txt')).toBe('A');
  });

  it('rejects paths that could leave the root', async () => {
    const { local } = setup({ '/r/a': '' });
    for (const bad of ['../etc/passwd', 'a/../../x', '/abs', 'a//b', 'a/', '.']) {
      expect(() => local.abs(p(bad))).toThrow(/not a valid path/);
    }
    expect(await codeOf(local.mkdir(p('../escape')))).toBe('invalid_path/skip');
  });

  it('creates folders idempotently, but not over a file', async () => {
    const { local } = setup({ '/r/f': 'file' });
    expect((await local.mkdir(p('d'))).kind).toBe('folder');
    expect((await local.mkdir(p('d'))).kind).toBe('folder');
    expect(await codeOf(local.mkdir(p('f')))).toBe('local_changed/replan');
    expect(await codeOf(local.mkdir(p('missing/child')))).toBe('local_changed/replan');
  });
});
