/**
 * LocalFs.openForUpload (src/local/upload-reader.ts): the one way an upload reads local bytes. The reader is a fixed
 * snapshot of the file it opened: its size and fstat at the open, exact positional reads, and `local_changed`
 * (replan) at the read that finds the file shorter or longer than that; a file that no longer matches the planned
 * stat is refused at the open; nothing outside the root is opened.
 */
import { createHash } from 'node:crypto';
import * as nodeFs from 'node:fs';
import { appendFile, mkdir, rename, stat, symlink, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isSyncError, type SyncError } from '../../src/core/errors.js';
import { asRelPath as p } from '../../src/core/model.js';
import { createLocalFs } from '../../src/local/local-fs.js';
import { createLocalTrash } from '../../src/local/local-trash.js';
import type { LocalFs, UploadReader } from '../../src/ports/local-fs.js';
import { makeTempDir } from '../support/tmp.js';

let tmp: { dir: string; cleanup: () => Promise<void> };
let root: string;
let local: LocalFs;
const open: UploadReader[] = [];

beforeEach(async () => {
  tmp = await makeTempDir('boxsync-upload-reader-');
  root = join(tmp.dir, 'root');
  await mkdir(root);
  local = createLocalFs({ rootPath: root, fs: nodeFs, trash: createLocalTrash({ mode: 'state', stateDir: join(tmp.dir, 'state'), fs: nodeFs }) });
});
afterEach(async () => {
  for (const r of open.splice(0)) await r.close();
  await tmp.cleanup();
});

async function reader(name: string, expect?: Parameters<LocalFs['openForUpload']>[1]): Promise<UploadReader> {
  const r = await local.openForUpload(p(name), expect);
  open.push(r);
  return r;
}

async function failure(promise: Promise<unknown>): Promise<SyncError> {
  const e = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!isSyncError(e)) throw new Error(`expected a SyncError, got ${String(e)}`);
  return e;
}

async function all(it: AsyncIterable<Buffer>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const b of it) parts.push(b);
  return Buffer.concat(parts);
}

const sha1 = (b: Buffer | string): string => createHash('sha1').update(b).digest('hex');

describe('LocalFs.openForUpload', () => {
  it('gives the size and stat it was opened with, exact ranges, the whole snapshot in chunks, and its SHA-1', async () => {
    const body = Buffer.from('0123456789abcdef');
    await writeFile(join(root, 'a.bin'), body);
    const st = await stat(join(root, 'a.bin'));
    const r = await reader('a.bin', { sizeBytes: st.size, mtimeMs: st.mtimeMs, inode: st.ino });
    expect(r.size).toBe(16);
    expect(r.stat).toEqual({ dev: String(st.dev), ino: st.ino, mtimeMs: st.mtimeMs, size: 16 });
    expect((await r.read(4, 8)).toString()).toBe('4567');
    expect((await r.read(10, 16)).toString()).toBe('abcdef');
    const chunks: number[] = [];
    for await (const c of r.stream(5)) chunks.push(c.length);
    expect(chunks).toEqual([5, 5, 5, 1]);
    // A stream may be read again (a retried request), from byte 0.
    expect(await all(r.stream())).toEqual(body);
    expect(await r.sha1()).toBe(sha1(body));
  });

  it('refuses a file that no longer matches the planned stat, before reading anything', async () => {
    await writeFile(join(root, 'b.txt'), 'planned');
    const st = await stat(join(root, 'b.txt'));
    await writeFile(join(root, 'b.txt'), 'edited since, and longer');
    const e = await failure(local.openForUpload(p('b.txt'), { sizeBytes: st.size, mtimeMs: st.mtimeMs, inode: st.ino }));
    expect({ code: e.code, disposition: e.disposition }).toEqual({ code: 'local_changed', disposition: 'replan' });
    expect(e.message).toMatch(/^b\.txt changed since it was planned/);
  });

  it('a file that shrinks after the open fails the read that reaches past its end with local_changed', async () => {
    await writeFile(join(root, 'c.bin'), Buffer.alloc(1000, 1));
    const r = await reader('c.bin');
    await truncate(join(root, 'c.bin'), 10);
    const e = await failure(r.read(0, 1000));
    expect({ code: e.code, disposition: e.disposition }).toEqual({ code: 'local_changed', disposition: 'replan' });
    expect(e.message).toMatch(/shrank \(it ended at byte 10\) while it was being uploaded; the upload was abandoned/);
    expect((await failure(all(r.stream()))).message).toMatch(/shrank from 1000 to 10 bytes/);
  });

  it('a file that grows after the open fails the read of its last range, and the stream before any byte', async () => {
    await writeFile(join(root, 'd.bin'), Buffer.alloc(100, 2));
    const r = await reader('d.bin');
    await appendFile(join(root, 'd.bin'), 'more');
    // A range before the end reads as it was; the one ending at the announced size sees the bytes beyond it.
    expect((await r.read(0, 50)).length).toBe(50);
    expect((await failure(r.read(50, 100))).message).toMatch(/grew beyond the 100 bytes announced/);
    expect((await failure(all(r.stream()))).message).toMatch(/grew from 100 to 104 bytes/);
  });

  it('appendOnly (a growing file): bytes appended after the open are left out, the prefix is the snapshot; a shrink still fails', async () => {
    await writeFile(join(root, 'g.log'), 'line 1\n');
    const st = await stat(join(root, 'g.log'));
    await appendFile(join(root, 'g.log'), 'line 2\n');
    // Grown since it was planned: accepted (same inode, no smaller); the snapshot is what it holds at the open.
    const r = await reader('g.log', { sizeBytes: st.size, mtimeMs: st.mtimeMs, inode: st.ino, appendOnly: true });
    expect(r.size).toBe(14);
    await appendFile(join(root, 'g.log'), 'line 3\n');
    expect((await all(r.stream())).toString()).toBe('line 1\nline 2\n');
    expect(await r.sha1()).toBe(createHash('sha1').update('line 1\nline 2\n').digest('hex'));
    expect((await r.read(7, 14)).toString()).toBe('line 2\n');
    await truncate(join(root, 'g.log'), 3);
    expect((await failure(all(r.stream()))).message).toMatch(/shrank from 14 to 3 bytes/);
    // A smaller file than planned is not a growing one: refused before anything is read.
    expect((await failure(reader('g.log', { sizeBytes: st.size, mtimeMs: st.mtimeMs, inode: st.ino, appendOnly: true }))).code).toBe('local_changed');
  });

  it('reads the inode it opened: a file renamed over the path afterwards does not change the snapshot', async () => {
    await writeFile(join(root, 'e.txt'), 'first version');
    const r = await reader('e.txt');
    await writeFile(join(root, 'e.new'), 'the second version, longer');
    await rename(join(root, 'e.new'), join(root, 'e.txt'));
    expect((await all(r.stream())).toString()).toBe('first version');
  });

  it('opens nothing through a symlinked folder, and a missing file is local_changed', async () => {
    await mkdir(join(tmp.dir, 'outside'));
    await writeFile(join(tmp.dir, 'outside', 'secret.txt'), 'outside the root');
    await symlink(join(tmp.dir, 'outside'), join(root, 'link'));
    expect((await failure(local.openForUpload(p('link/secret.txt')))).code).toBe('symlink_in_path');
    expect((await failure(local.openForUpload(p('gone.txt')))).code).toBe('local_changed');
  });

  it('close never rejects and may be called twice', async () => {
    await writeFile(join(root, 'f.txt'), 'x');
    const r = await local.openForUpload(p('f.txt'));
    await r.close();
    await expect(r.close()).resolves.toBeUndefined();
  });
});
