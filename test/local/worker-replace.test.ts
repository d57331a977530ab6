/**
 * The replace mode of the commit on the file worker thread (src/local/worker-replace.ts): a download that replaces
 * the file under its name (guard `file`) is written, given Box's mtime and renamed over the old file by the job that
 * wrote it; LocalFs.commitTemp only reports. On real files in a temp dir, with a real pool: the new bytes are in
 * place before commitTemp is called; a save by the user between download and commit (an append, an editor's
 * rename, the file removed, a folder in its place), and a folder on the way swapped for a symlink, are each refused
 * as the main thread's replace path refuses them, the user's file kept and no temp file left.
 */
import { createHash } from 'node:crypto';
import * as nodeFs from 'node:fs';
import { lstat, mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isSyncError } from '../../src/core/errors.js';
import { asRelPath, type LocalEntry } from '../../src/core/model.js';
import type { LocalGuard } from '../../src/core/operations.js';
import { FileWorkerPool, type FileJob } from '../../src/local/file-workers.js';
import { createLocalFs } from '../../src/local/local-fs.js';
import { createLocalTrash } from '../../src/local/local-trash.js';
import { silentLogger } from '../../src/logger.js';
import type { LocalFs } from '../../src/ports/local-fs.js';
import { makeTempDir } from '../support/tmp.js';
import { downloadThrough } from './worker-download.js';

const sha1 = (b: Buffer | string): string => createHash('sha1').update(b).digest('hex');
const BOX_MTIME = Date.parse('2022-03-04T05:06:07Z');

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

async function setup(beforePost?: (job: FileJob) => void): Promise<{ dir: string; root: string; fs: LocalFs; plain: LocalFs; jobs: FileJob[] }> {
  const tmp = await makeTempDir('boxsync-worker-replace-');
  const root = join(tmp.dir, 'root');
  await mkdir(root);
  const jobs: FileJob[] = [];
  const pool = new FileWorkerPool({
    size: 1,
    beforePost: (job: FileJob) => {
      jobs.push(job);
      beforePost?.(job);
    },
  });
  cleanup.push(tmp.cleanup, () => pool.close());
  const trash = createLocalTrash({ mode: 'state', stateDir: join(tmp.dir, 'state'), fs: nodeFs, logger: silentLogger });
  return {
    dir: tmp.dir,
    root,
    jobs,
    fs: createLocalFs({ rootPath: root, fs: nodeFs, trash, logger: silentLogger, fileWorkers: pool }),
    plain: createLocalFs({ rootPath: root, fs: nodeFs, trash, logger: silentLogger }),
  };
}

/** The guard a plan takes of the file at `abs` (what the journal saw of it). */
async function guardOf(abs: string): Promise<LocalGuard> {
  const st = await lstat(abs);
  return { state: 'file', sizeBytes: st.size, mtimeMs: st.mtimeMs, inode: st.ino };
}

/** The executor's download (worker-download.ts) with Box's mtime and the SHA-1 of `data`. */
const download = (fs: LocalFs, path: string, data: string, guard: LocalGuard, afterClose?: () => Promise<void>): Promise<LocalEntry> =>
  downloadThrough(fs, path, data, { guard, mtimeMs: BOX_MTIME, sha1: sha1(data) }, afterClose);

const temps = async (dir: string): Promise<string[]> => (await readdir(dir)).filter((n) => n.startsWith('.boxsync-tmp'));
const replacing = (job: FileJob, rel: string): boolean => (job.op === 'put' || job.op === 'unzip') && job.commit?.rel === rel && job.commit.replace !== undefined;
const refusal = (e: unknown): unknown => (isSyncError(e) ? [e.code, e.disposition] : String(e));

describe('a replacing download committed on the file worker thread', () => {
  it('is renamed over the old file by its job, with Box mtime, before commitTemp; commitTemp reports the stat; the same as the main thread gives', async () => {
    const { root, fs, plain, jobs } = await setup();
    await mkdir(join(root, 'd'));
    await writeFile(join(root, 'd/a.txt'), 'old content');
    const old = await lstat(join(root, 'd/a.txt'));
    let seenBeforeCommit: string | null = null;
    const entry = await download(fs, 'd/a.txt', 'new from box', await guardOf(join(root, 'd/a.txt')), async () => void (seenBeforeCommit = await readFile(join(root, 'd/a.txt'), 'utf8')));
    expect(jobs.some((j) => replacing(j, 'd/a.txt'))).toBe(true);
    expect(seenBeforeCommit).toBe('new from box');
    const st = await lstat(join(root, 'd/a.txt'));
    expect(st.ino).not.toBe(old.ino);
    expect(st.mtimeMs).toBe(BOX_MTIME);
    expect(entry).toEqual({ path: 'd/a.txt', kind: 'file', inode: st.ino, sizeBytes: 12, mtimeMs: BOX_MTIME, sha1: null });
    // The main thread's replace path gives the same bytes, mtime and mode.
    await writeFile(join(root, 'd/m.txt'), 'old content');
    const g = await guardOf(join(root, 'd/m.txt'));
    const file = await plain.openTemp(asRelPath('d/m.txt'));
    await file.write(Buffer.from('new from box'));
    await file.syncAndClose();
    await plain.commitTemp(file.path, asRelPath('d/m.txt'), g, BOX_MTIME, { synced: true });
    const m = await stat(join(root, 'd/m.txt'));
    expect([st.mtimeMs, st.mode, st.size]).toEqual([m.mtimeMs, m.mode, m.size]);
    expect(await temps(join(root, 'd'))).toEqual([]);
  });

  it('a save by the user between download and commit is kept (append, editor rename, removed, a folder there): local_changed, as on the main thread', async () => {
    let root = '';
    const saves: Record<string, (abs: string) => void> = {
      'appended.txt': (abs) => nodeFs.appendFileSync(abs, ' and the user typed more'),
      // An editor's save: a new file renamed over the name (another inode, same size).
      'renamed.txt': (abs) => {
        nodeFs.writeFileSync(`${abs}.swp`, 'OLD CONTENT');
        nodeFs.renameSync(`${abs}.swp`, abs);
      },
      'removed.txt': (abs) => nodeFs.unlinkSync(abs),
      'folder.txt': (abs) => {
        nodeFs.unlinkSync(abs);
        nodeFs.mkdirSync(abs);
      },
    };
    const { fs, plain, ...rest } = await setup((job) => {
      for (const [name, save] of Object.entries(saves)) if (replacing(job, name)) save(join(root, name));
    });
    root = rest.root;
    for (const name of Object.keys(saves)) {
      await writeFile(join(root, name), 'old content');
      const err = await download(fs, name, 'from box', await guardOf(join(root, name))).catch((e: unknown) => e);
      expect(refusal(err), name).toEqual(['local_changed', 'replan']);
    }
    expect(await readFile(join(root, 'appended.txt'), 'utf8')).toBe('old content and the user typed more');
    expect(await readFile(join(root, 'renamed.txt'), 'utf8')).toBe('OLD CONTENT');
    expect(nodeFs.existsSync(join(root, 'removed.txt'))).toBe(false);
    expect((await lstat(join(root, 'folder.txt'))).isDirectory()).toBe(true);
    expect(await temps(root)).toEqual([]);
    // The main thread's path, the user's save made before its commit: the same refusal.
    await writeFile(join(root, 'main.txt'), 'old content');
    const g = await guardOf(join(root, 'main.txt'));
    nodeFs.appendFileSync(join(root, 'main.txt'), ' and more');
    const file = await plain.openTemp(asRelPath('main.txt'));
    await file.write(Buffer.from('from box'));
    await file.syncAndClose();
    const mainErr = await plain.commitTemp(file.path, asRelPath('main.txt'), g, BOX_MTIME, { synced: true }).catch((e: unknown) => e);
    expect(refusal(mainErr)).toEqual(['local_changed', 'replan']);
    expect(await readFile(join(root, 'main.txt'), 'utf8')).toBe('old content and more');
  });

  it('a folder on the way swapped for a symlink to it meanwhile: nothing is replaced through it (symlink_in_path)', async () => {
    let root = '';
    const { fs, ...rest } = await setup((job) => {
      if (!replacing(job, 'd/x.txt')) return;
      // The same file is reachable through the symlink, with the stat the plan saw: only the folder check stops it.
      nodeFs.renameSync(join(root, 'd'), join(root, 'd-real'));
      nodeFs.symlinkSync(join(root, 'd-real'), join(root, 'd'));
    });
    root = rest.root;
    await mkdir(join(root, 'd'));
    await writeFile(join(root, 'd/x.txt'), 'old content');
    const err = await download(fs, 'd/x.txt', 'from box', await guardOf(join(root, 'd/x.txt'))).catch((e: unknown) => e);
    expect(isSyncError(err) && err.code, String(err)).toBe('symlink_in_path');
    expect(await readFile(join(root, 'd-real/x.txt'), 'utf8')).toBe('old content');
    expect(await temps(join(root, 'd-real'))).toEqual([]);
  });

  it('after a replace in a folder the thread listed, a name twin made there is still refused and other names still go in', async () => {
    let root = '';
    const { fs, ...rest } = await setup((job) => {
      if ((job.op === 'put' || job.op === 'unzip') && job.commit?.rel === 'd/readme.txt') nodeFs.writeFileSync(join(root, 'd', 'README.TXT'), 'user');
    });
    root = rest.root;
    await mkdir(join(root, 'd'));
    const absent = { state: 'absent' } as const;
    // The thread lists d here, then replaces a file in it (the folder's stamp moves).
    await download(fs, 'd/first.txt', 'first', absent);
    await download(fs, 'd/first.txt', 'first, version 2', await guardOf(join(root, 'd/first.txt')));
    expect(await readFile(join(root, 'd/first.txt'), 'utf8')).toBe('first, version 2');
    const err = await download(fs, 'd/readme.txt', 'from box', absent).catch((e: unknown) => e);
    expect(refusal(err)).toEqual(['local_changed', 'replan']);
    expect((err as Error).message).toContain('README.TXT');
    await download(fs, 'd/other.txt', 'other', absent);
    expect((await readdir(join(root, 'd'))).sort()).toEqual(['README.TXT', 'first.txt', 'other.txt']);
  });
});
