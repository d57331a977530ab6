/**
 * The commit into place on the file worker thread (src/local/worker-commit.ts): a new file's job writes its temp
 * file, sets Box's mtime, checks the guards and links it under its final name; LocalFs.commitTemp only reports.
 * On real files in a temp dir, with a real pool: the file is in place before commitTemp is called, with Box's mtime;
 * a file the user made at the destination meanwhile, a name twin, a folder on the way replaced by a symlink, and
 * bytes that are not the listed ones are each refused as the main thread's path refuses them, touching nothing.
 */
import { createHash } from 'node:crypto';
import * as nodeFs from 'node:fs';
import { lstat, mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { isSyncError } from '../../src/core/errors.js';
import { asRelPath } from '../../src/core/model.js';
import { FileWorkerPool, type FileJob } from '../../src/local/file-workers.js';
import { createLocalFs } from '../../src/local/local-fs.js';
import { createLocalTrash } from '../../src/local/local-trash.js';
import { silentLogger } from '../../src/logger.js';
import type { LocalFs } from '../../src/ports/local-fs.js';
import { makeTempDir } from '../support/tmp.js';
import { downloadThrough } from './worker-download.js';

const sha1 = (b: Buffer | string): string => createHash('sha1').update(b).digest('hex');
const BOX_MTIME = Date.parse('2021-05-06T07:08:09Z');
const ABSENT = { state: 'absent' } as const;

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

async function setup(beforePost?: (job: FileJob) => void, workerCode?: string): Promise<{ dir: string; root: string; fs: LocalFs; plain: LocalFs }> {
  const tmp = await makeTempDir('boxsync-worker-commit-');
  const root = join(tmp.dir, 'root');
  await mkdir(root);
  const pool = new FileWorkerPool({ size: 1, ...(beforePost ? { beforePost: (job: FileJob) => beforePost(job) } : {}), ...(workerCode ? { workerCode } : {}) });
  cleanup.push(tmp.cleanup, () => pool.close());
  const trash = createLocalTrash({ mode: 'state', stateDir: join(tmp.dir, 'state'), fs: nodeFs, logger: silentLogger });
  return {
    dir: tmp.dir,
    root,
    fs: createLocalFs({ rootPath: root, fs: nodeFs, trash, logger: silentLogger, fileWorkers: pool }),
    plain: createLocalFs({ rootPath: root, fs: nodeFs, trash, logger: silentLogger }),
  };
}

/** The executor's download of new bytes (engine/executor.ts): openTemp with its commit, write, syncAndClose, commitTemp. */
async function download(fs: LocalFs, path: string, data: string, opts: { listedSha1?: string; afterClose?: () => Promise<void> } = {}): Promise<ReturnType<LocalFs['commitTemp']>> {
  return downloadThrough(fs, path, data, { guard: ABSENT, mtimeMs: BOX_MTIME, sha1: opts.listedSha1 ?? sha1(data) }, opts.afterClose);
}

const temps = async (dir: string): Promise<string[]> => (await readdir(dir)).filter((n) => n.startsWith('.boxsync-tmp'));
const isCommit = (job: FileJob, rel: string): boolean => (job.op === 'put' || job.op === 'unzip') && job.commit?.rel === rel;

/** A root with folder d, whose job for d/x.txt swaps d for a symlink to a folder outside the root (made empty). */
async function symlinkSwap(workerCode?: string): Promise<Awaited<ReturnType<typeof setup>> & { outside: string }> {
  let root = '';
  let outside = '';
  const s = await setup((job) => {
    if (!isCommit(job, 'd/x.txt')) return;
    nodeFs.renameSync(join(root, 'd'), join(root, 'd-old'));
    nodeFs.symlinkSync(outside, join(root, 'd'));
  }, workerCode);
  root = s.root;
  outside = join(s.dir, 'outside');
  await mkdir(outside);
  await mkdir(join(root, 'd'));
  return { ...s, outside };
}

describe('the commit into place on the file worker thread', () => {
  it('a new file is in place with Box mtime before commitTemp is called; commitTemp reports the stat it has', async () => {
    const { root, fs, plain } = await setup();
    let seenBeforeCommit: string | null = null;
    const entry = await download(fs, 'a.txt', 'hello\n', { afterClose: async () => void (seenBeforeCommit = await readFile(join(root, 'a.txt'), 'utf8')) });
    expect(seenBeforeCommit).toBe('hello\n');
    const st = await lstat(join(root, 'a.txt'));
    expect(st.mtimeMs).toBe(BOX_MTIME);
    expect(entry).toEqual({ path: 'a.txt', kind: 'file', inode: st.ino, sizeBytes: 6, mtimeMs: st.mtimeMs, sha1: null });
    // The main thread's path gives the file the same mtime and mode.
    const file = await plain.openTemp(asRelPath('m.txt'));
    await file.write(Buffer.from('hello\n'));
    await file.syncAndClose();
    await plain.commitTemp(file.path, asRelPath('m.txt'), ABSENT, BOX_MTIME, { synced: true });
    const m = await stat(join(root, 'm.txt'));
    expect([st.mtimeMs, st.mode]).toEqual([m.mtimeMs, m.mode]);
    expect(await temps(root)).toEqual([]);
  });

  it('a file of a zip archive is committed by the job that reads it, with Box mtime', async () => {
    const { dir, root, fs } = await setup();
    await mkdir(join(root, 'd'));
    const data = Buffer.from('zip entry bytes\n'.repeat(100));
    const body = deflateRawSync(data);
    const header = Buffer.alloc(30);
    header.writeUInt32LE(0x04034b50, 0);
    header.writeUInt16LE(8, 8);
    header.writeUInt16LE(1, 26);
    await writeFile(join(dir, 'a.zip'), Buffer.concat([header, Buffer.from('x'), body]));
    const rel = asRelPath('d/x.txt');
    const file = await fs.openTemp(rel, { expectedBytes: data.length, commit: { guard: ABSENT, mtimeMs: BOX_MTIME, sha1: sha1(data) } });
    const got = await file.fillFromArchive!({ archivePath: join(dir, 'a.zip'), localHeaderOffset: 0, compressedSize: body.length, method: 8, sizeBytes: data.length, sha1: sha1(data) });
    expect(got).toEqual({ sha1: sha1(data), sizeBytes: data.length });
    expect((await readFile(join(root, 'd/x.txt'))).equals(data)).toBe(true);
    const entry = await fs.commitTemp(file.path, rel, ABSENT, BOX_MTIME, { synced: true });
    expect(entry.mtimeMs).toBe(BOX_MTIME);
    expect((await stat(join(root, 'd/x.txt'))).mtimeMs).toBe(BOX_MTIME);
    expect(await temps(join(root, 'd'))).toEqual([]);
  });

  it('a file the user made at the destination meanwhile is kept: local_changed (replan), as on the main thread', async () => {
    let root = '';
    const { fs, plain, ...rest } = await setup((job) => {
      // Between the download and the commit: the user saves a file under the same name.
      if (isCommit(job, 'race.txt')) nodeFs.writeFileSync(join(root, 'race.txt'), 'mine');
    });
    root = rest.root;
    const err = await download(fs, 'race.txt', 'from box').then(
      () => null,
      (e: unknown) => e,
    );
    expect(isSyncError(err) && err.code === 'local_changed' && err.disposition === 'replan', String(err)).toBe(true);
    expect(await readFile(join(root, 'race.txt'), 'utf8')).toBe('mine');
    expect(await temps(root)).toEqual([]);
    // The main thread's path, the user's file made before its commit: the same refusal.
    await writeFile(join(root, 'race2.txt'), 'mine too');
    const file = await plain.openTemp(asRelPath('race2.txt'));
    await file.write(Buffer.from('from box'));
    await file.syncAndClose();
    const mainErr = await plain.commitTemp(file.path, asRelPath('race2.txt'), ABSENT, BOX_MTIME, { synced: true }).catch((e: unknown) => e);
    expect(isSyncError(mainErr) && [mainErr.code, mainErr.disposition]).toEqual(['local_changed', 'replan']);
    expect(await readFile(join(root, 'race2.txt'), 'utf8')).toBe('mine too');
  });

  it('a name twin made beside it meanwhile (case, Unicode) refuses the commit, also in a folder the thread listed before', async () => {
    let root = '';
    const twins: Record<string, string> = { 'd/readme.txt': 'README.TXT', 'd/café.txt': 'CAFE\u0301.txt' };
    const { fs, ...rest } = await setup((job) => {
      for (const [rel, twin] of Object.entries(twins)) if (isCommit(job, rel)) nodeFs.writeFileSync(join(root, 'd', twin), 'user');
    });
    root = rest.root;
    await mkdir(join(root, 'd'));
    // The thread lists d here (and keeps the listing with the folder's stamp).
    await download(fs, 'd/first.txt', 'first');
    for (const [rel, twin] of Object.entries(twins)) {
      const err = await download(fs, rel, 'from box').catch((e: unknown) => e);
      expect(isSyncError(err) && [err.code, err.disposition], rel).toEqual(['local_changed', 'replan']);
      expect((err as Error).message).toContain(twin);
    }
    expect((await readdir(join(root, 'd'))).sort()).toEqual(['CAFE\u0301.txt', 'README.TXT', 'first.txt'].sort());
    // A name that is no twin still goes in.
    await download(fs, 'd/other.txt', 'other');
    expect(await readFile(join(root, 'd/other.txt'), 'utf8')).toBe('other');
  });

  it('a folder on the way replaced by a symlink meanwhile: nothing is made through it (symlink_in_path)', async () => {
    const { fs, root, outside } = await symlinkSwap();
    const err = await download(fs, 'd/x.txt', 'from box').catch((e: unknown) => e);
    expect(isSyncError(err) && err.code, String(err)).toBe('symlink_in_path');
    expect(await readdir(outside)).toEqual([]);
    expect(await readdir(join(root, 'd-old'))).toEqual([]);
  });

  it('with no thread to run it (one that cannot start), the main thread checks the folders before the temp file and commits', async () => {
    const { fs, root, outside } = await symlinkSwap('throw new Error("this thread cannot start")');
    // The first job goes to a thread that never starts, and runs here: no temp file is made through the symlink.
    let outsideAfterWrite: string[] | null = null;
    const err = await download(fs, 'd/x.txt', 'from box', { afterClose: async () => void (outsideAfterWrite = await readdir(outside)) }).catch((e: unknown) => e);
    expect(outsideAfterWrite).toEqual([]);
    expect(isSyncError(err) && err.code, String(err)).toBe('symlink_in_path');
    expect(await readdir(outside)).toEqual([]);
    expect(await readdir(join(root, 'd-old'))).toEqual([]);
    // From now on the main thread writes and commits.
    await download(fs, 'ok.txt', 'fine');
    expect(await readFile(join(root, 'ok.txt'), 'utf8')).toBe('fine');
    expect((await stat(join(root, 'ok.txt'))).mtimeMs).toBe(BOX_MTIME);
  });

  it('bytes that are not the ones Box listed are never put under the final name', async () => {
    const { root, fs } = await setup();
    const rel = asRelPath('bad.txt');
    const file = await fs.openTemp(rel, { expectedBytes: 5, commit: { guard: ABSENT, mtimeMs: BOX_MTIME, sha1: sha1('other') } });
    await file.write(Buffer.from('wrong'));
    await file.syncAndClose();
    expect(await readdir(root)).toEqual([file.path.slice(root.length + 1)]);
    await fs.discardTemp(file.path);
    expect(await readdir(root)).toEqual([]);
  });
});
