/**
 * Leftover temp files (partial downloads of a killed run) are removed by a scan that asks for it, and only
 * then; nothing else that merely looks like one is touched: a file with the temp prefix that a boxsync of this
 * state dir (its temp key) did not make is a user's, reported and left alone (issue 26, point 8).
 */
import * as nodeFs from 'node:fs';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createIgnoreMatcher } from '../../src/local/ignore.js';
import { createLocalFs } from '../../src/local/local-fs.js';
import { createLocalTrash } from '../../src/local/local-trash.js';
import { newTempKey, TempNames, TEMP_PREFIX } from '../../src/local/temp-name.js';
import type { LocalFs } from '../../src/ports/local-fs.js';
import { makeTempDir } from '../support/tmp.js';

let tmp: { dir: string; cleanup: () => Promise<void> };
let root: string;
let local: LocalFs;
const key = newTempKey();
/** Names as an earlier process of the same state dir made them (same key). */
const ours = new TempNames(key);
const oursInSub = ours.next();
const oursInRoot = ours.next();

beforeEach(async () => {
  tmp = await makeTempDir('boxsync-scan-temps-');
  root = join(tmp.dir, 'root');
  await mkdir(join(root, 'sub'), { recursive: true });
  await writeFile(join(root, 'sub', oursInSub), 'partial download');
  await writeFile(join(root, oursInRoot), 'partial download');
  await mkdir(join(root, `${TEMP_PREFIX}folder`));
  await writeFile(join(root, 'sub', 'keep.txt'), 'user data');
  local = createLocalFs({ rootPath: root, fs: nodeFs, trash: createLocalTrash({ mode: 'state', stateDir: join(tmp.dir, 'state'), fs: nodeFs }), tempKey: key });
});
afterEach(() => tmp.cleanup());

async function scan(removeTemps: boolean, foreign: string[] = []): Promise<string[]> {
  const paths: string[] = [];
  for await (const b of local.scan({ isIgnored: createIgnoreMatcher([]), removeTemps, onForeignTemp: (p) => void foreign.push(p) })) paths.push(...b.map((e) => e.path));
  return paths.sort();
}

it('skips temp files without removing them by default', async () => {
  expect(await scan(false)).toEqual(['sub', 'sub/keep.txt']);
  expect((await readdir(join(root, 'sub'))).sort()).toEqual([oursInSub, 'keep.txt'].sort());
});

it('removes leftover temp files when asked, and leaves folders and user files alone', async () => {
  expect(await scan(true)).toEqual(['sub', 'sub/keep.txt']);
  expect(await readdir(join(root, 'sub'))).toEqual(['keep.txt']);
  expect((await readdir(root)).sort()).toEqual([`${TEMP_PREFIX}folder`, 'sub']);
});

it("never removes a file with the temp prefix that boxsync did not make: a user's, or another state dir's; it is reported", async () => {
  const users = `${TEMP_PREFIX}my-notes.txt`;
  const lookalike = `${TEMP_PREFIX}0123456789abcdef`;
  const otherKeys = new TempNames(newTempKey()).next();
  for (const n of [users, lookalike, otherKeys]) await writeFile(join(root, 'sub', n), 'user data');
  const foreign: string[] = [];
  expect(await scan(true, foreign)).toEqual(['sub', 'sub/keep.txt']);
  expect(foreign.sort()).toEqual([`sub/${users}`, `sub/${lookalike}`, `sub/${otherKeys}`].sort());
  expect((await readdir(join(root, 'sub'))).sort()).toEqual([users, lookalike, otherKeys, 'keep.txt'].sort());
  // Our own temp of the same key went.
  expect(await readdir(root)).not.toContain(oursInRoot);
});
