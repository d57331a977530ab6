/**
 * NameTwins' cache: small folders are read again whenever someone else changes them, big ones at most once a
 * second; our own writes update the cached names and the stamp, so they never make the folder be read again.
 */
import * as nodeFs from 'node:fs';
import type { FsModule } from '../../src/local/fs-module.js';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { NameTwins } from '../../src/local/name-twins.js';
import { makeTempDir } from '../support/tmp.js';

let tmp: { dir: string; cleanup: () => Promise<void> };
beforeEach(async () => (tmp = await makeTempDir('boxsync-twins-')));
afterEach(async () => tmp.cleanup());

it('finds twins by case and normalization, never the name itself or the excepted one; ignores boxsync temps', async () => {
  for (const n of ['Report.txt', 'notes.md', '.boxsync-tmp-1234.part']) await writeFile(join(tmp.dir, n), '');
  const t = new NameTwins(nodeFs);
  expect(await t.twinOf(tmp.dir, 'report.txt')).toBe('Report.txt');
  expect(await t.twinOf(tmp.dir, 'Report.txt')).toBeUndefined();
  expect(await t.twinOf(tmp.dir, 'REPORT.TXT', 'Report.txt')).toBeUndefined();
  expect(await t.twinOf(tmp.dir, 'NOTES.md')).toBe('notes.md');
  expect(await t.twinOf(join(tmp.dir, 'missing'), 'x')).toBeUndefined();
});

it('a folder of more than 2,000 names is listed again at most once a second; its own writes are noted at once', async () => {
  for (let i = 0; i < 2_001; i++) await writeFile(join(tmp.dir, `f${i}`), '');
  let now = 1_000_000;
  const t = new NameTwins(nodeFs, () => now);
  expect(await t.twinOf(tmp.dir, 'F7')).toBe('f7');
  t.noteChanged(tmp.dir, 'Ours.txt', 'f7');
  await writeFile(join(tmp.dir, 'Late.txt'), '');
  now += 500;
  expect(await t.twinOf(tmp.dir, 'late.txt')).toBeUndefined(); // within the second: the cached listing
  expect(await t.twinOf(tmp.dir, 'ours.txt')).toBe('Ours.txt');
  expect(await t.twinOf(tmp.dir, 'F7')).toBeUndefined();
  now += 600;
  expect(await t.twinOf(tmp.dir, 'late.txt')).toBe('Late.txt'); // read again: the folder changed
  expect(await t.twinOf(tmp.dir, 'F7')).toBe('f7');
});

/** node:fs with its readdir calls counted. */
function countingFs(): { fs: FsModule; reads: () => number } {
  let reads = 0;
  const promises = { ...nodeFs.promises, readdir: ((...a: Parameters<typeof nodeFs.promises.readdir>) => ((reads += 1), nodeFs.promises.readdir(...a))) as typeof nodeFs.promises.readdir };
  return { fs: { ...nodeFs, promises } as FsModule, reads: () => reads };
}

const refuse = (twin: string) => {
  throw new Error(`twin ${twin}`);
};

it('our own new names do not make the folder be read again; a write by someone else does', async () => {
  const { fs, reads } = countingFs();
  let now = 1_000_000;
  const t = new NameTwins(fs, () => now);
  // Side by side, as the engine's transfers are: the check and the write of each take turns.
  await Promise.all(
    Array.from({ length: 50 }, (_, i) => t.putNew(tmp.dir, `file-${i}.bin`, undefined, refuse, () => writeFile(join(tmp.dir, `file-${i}.bin`), ''))),
  );
  expect(reads()).toBe(1);
  expect(await t.twinOf(tmp.dir, 'FILE-3.bin')).toBe('file-3.bin');
  await expect(t.putNew(tmp.dir, 'File-3.BIN', undefined, refuse, () => writeFile(join(tmp.dir, 'File-3.BIN'), ''))).rejects.toThrow('twin file-3.bin');
  expect(reads()).toBe(1);
  await writeFile(join(tmp.dir, 'Made-By-User.txt'), '');
  expect(await t.twinOf(tmp.dir, 'made-by-user.txt')).toBe('Made-By-User.txt');
  expect(reads()).toBe(2);
  expect(await readdir(tmp.dir)).toHaveLength(51);
});

it('a write of ours long after the last check keeps the old stamp: the next check reads the folder', async () => {
  const { fs, reads } = countingFs();
  let now = 1_000_000;
  const t = new NameTwins(fs, () => now);
  expect(await t.twinOf(tmp.dir, 'a.txt')).toBeUndefined();
  await t.putNew(tmp.dir, 'a.txt', undefined, refuse, async () => {
    now += 1_500; // a slow write: the check it follows is too old to vouch for the folder's new stamp
    await writeFile(join(tmp.dir, 'Other.txt'), ''); // someone else, meanwhile
    await writeFile(join(tmp.dir, 'a.txt'), '');
  });
  expect(await t.twinOf(tmp.dir, 'other.TXT')).toBe('Other.txt');
  expect(reads()).toBe(2);
});
