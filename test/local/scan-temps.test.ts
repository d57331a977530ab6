/**
 * Leftover temp files (partial downloads of a killed run) are removed by a scan that asks for it, and only
 * then; nothing else that merely looks like one is touched.
 */
import * as nodeFs from 'node:fs';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createIgnoreMatcher } from '../../src/local/ignore.js';
import { createLocalFs } from '../../src/local/local-fs.js';
import { createLocalTrash } from '../../src/local/local-trash.js';
import { TEMP_PREFIX } from '../../src/local/temp-name.js';
import type { LocalFs } from '../../src/ports/local-fs.js';
import { makeTempDir } from '../support/tmp.js';

let tmp: { dir: string; cleanup: () => Promise<void> };
let root: string;
let local: LocalFs;

beforeEach(async () => {
  tmp = await makeTempDir('boxsync-scan-temps-');
  root = join(tmp.dir, 'root');
  await mkdir(join(root, 'sub'), { recursive: true });
  await writeFile(join(root, 'sub', `${TEMP_PREFIX}0123456789abcdef`), 'partial download');
  await writeFile(join(root, `${TEMP_PREFIX}fedcba9876543210`), 'partial download');
  await mkdir(join(root, `${TEMP_PREFIX}folder`));
  await writeFile(join(root, 'sub', 'keep.txt'), 'user data');
  local = createLocalFs({ rootPath: root, fs: nodeFs, trash: createLocalTrash({ mode: 'state', stateDir: join(tmp.dir, 'state'), fs: nodeFs }) });
});
afterEach(() => tmp.cleanup());

async function scan(removeTemps: boolean): Promise<string[]> {
  const paths: string[] = [];
  for await (const b of local.scan({ isIgnored: createIgnoreMatcher([]), removeTemps })) paths.push(...b.map((e) => e.path));
  return paths.sort();
}

it('skips temp files without removing them by default', async () => {
  expect(await scan(false)).toEqual(['sub', 'sub/keep.txt']);
  expect((await readdir(join(root, 'sub'))).sort()).toEqual([`${TEMP_PREFIX}0123456789abcdef`, 'keep.txt']);
});

it('removes leftover temp files when asked, and leaves folders and user files alone', async () => {
  expect(await scan(true)).toEqual(['sub', 'sub/keep.txt']);
  expect(await readdir(join(root, 'sub'))).toEqual(['keep.txt']);
  expect((await readdir(root)).sort()).toEqual([`${TEMP_PREFIX}folder`, 'sub']);
});
