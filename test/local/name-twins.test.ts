/** NameTwins' cache: small folders are read again whenever they change, big ones at most once a second. */
import * as nodeFs from 'node:fs';
import { writeFile } from 'node:fs/promises';
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
  await writeFile(join(tmp.dir, 'Late.txt'), '');
  t.noteChanged(tmp.dir, 'Ours.txt', 'f7');
  now += 500;
  expect(await t.twinOf(tmp.dir, 'late.txt')).toBeUndefined(); // within the second: the cached listing
  expect(await t.twinOf(tmp.dir, 'ours.txt')).toBe('Ours.txt');
  expect(await t.twinOf(tmp.dir, 'F7')).toBeUndefined();
  now += 600;
  expect(await t.twinOf(tmp.dir, 'late.txt')).toBe('Late.txt'); // read again: the folder changed
  expect(await t.twinOf(tmp.dir, 'F7')).toBe('f7');
});
