import * as nodeFs from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, symlink, utimes, writeFile, lstat, readlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { asRelPath as p } from '../../src/core/model.js';
import { createLocalTrash, DEFAULT_TRASH_RETENTION_MS, type ManifestLine } from '../../src/local/local-trash.js';
import { makeTempDir } from '../support/tmp.js';
import { withFaults } from './faulty-fs.js';

const DAY = 24 * 60 * 60 * 1000;

let tmp: { dir: string; cleanup: () => Promise<void> };
let root: string;
let stateDir: string;
let shm: string | undefined;

beforeEach(async () => {
  tmp = await makeTempDir('boxsync-trash-');
  root = join(tmp.dir, 'root');
  stateDir = join(tmp.dir, 'state');
  await mkdir(join(root, 'docs'), { recursive: true });
  await writeFile(join(root, 'docs', 'a.txt'), 'alpha');
});
afterEach(async () => {
  await tmp.cleanup();
  if (shm !== undefined) await rm(shm, { recursive: true, force: true });
  shm = undefined;
});

const manifest = async (day: string): Promise<ManifestLine[]> =>
  (await readFile(join(stateDir, 'trash', day, 'manifest.jsonl'), 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as ManifestLine);

/** Is /dev/shm a usable, separate file system (tmpfs) here? Decides whether the cross-device tests can run. */
const hasOtherDevice = await (async () => {
  try {
    const dir = await mkdtemp('/dev/shm/boxsync-probe-');
    const separate = (await stat(dir)).dev !== (await stat(tmpdir())).dev;
    await rm(dir, { recursive: true });
    return separate;
  } catch {
    return false;
  }
})();

const otherDevice = (): Promise<string> => mkdtemp('/dev/shm/boxsync-test-');

describe('state trash', () => {
  it('moves the item under <stateDir>/trash/<date>/<entry>/<relpath> and writes a manifest line', async () => {
    const at = Date.UTC(2026, 10, 22, 13, 0, 0);
    const trash = createLocalTrash({ mode: 'state', stateDir, fs: nodeFs, now: () => at });
    const dest = await trash.trash(join(root, 'docs', 'a.txt'), p('docs/a.txt'));
    expect(dest).toMatch(new RegExp(`^${stateDir}/trash/2026-11-22/${at}-[0-9a-f]{12}/docs/a\\.txt$`));
    expect(await readFile(dest, 'utf8')).toBe('alpha');
    expect(await readdir(join(root, 'docs'))).toEqual([]);
    const lines = await manifest('2026-11-22');
    expect(lines).toEqual([
      { entry: dest.split('/').at(-3), originalPath: join(root, 'docs', 'a.txt'), relPath: 'docs/a.txt', trashedAtMs: at, trashedAt: '2026-11-22T13:00:00.000Z' },
    ]);
  });

  it('keeps two trashed items of the same path apart', async () => {
    const trash = createLocalTrash({ mode: 'state', stateDir, fs: nodeFs, now: () => Date.UTC(2026, 0, 1) });
    const first = await trash.trash(join(root, 'docs', 'a.txt'), p('docs/a.txt'));
    await writeFile(join(root, 'docs', 'a.txt'), 'alpha 2');
    const second = await trash.trash(join(root, 'docs', 'a.txt'), p('docs/a.txt'));
    expect(first).not.toBe(second);
    expect([await readFile(first, 'utf8'), await readFile(second, 'utf8')]).toEqual(['alpha', 'alpha 2']);
    expect(await manifest('2026-01-01')).toHaveLength(2);
  });

  it('purges entries older than the retention, keeps younger ones, and prunes the manifest', async () => {
    let now = Date.UTC(2026, 0, 1, 12);
    const trash = createLocalTrash({ mode: 'state', stateDir, fs: nodeFs, now: () => now });
    await writeFile(join(root, 'b.txt'), 'b');
    await writeFile(join(root, 'c.txt'), 'c');
    const old = await trash.trash(join(root, 'docs', 'a.txt'), p('docs/a.txt'));
    now += 1000;
    const sameDayYounger = await trash.trash(join(root, 'b.txt'), p('b.txt'));
    now = Date.UTC(2026, 0, 20);
    const recent = await trash.trash(join(root, 'c.txt'), p('c.txt'));

    now = Date.UTC(2026, 0, 1, 12) + DEFAULT_TRASH_RETENTION_MS + 500;
    expect(await trash.purgeOlderThan()).toBe(1);
    await expect(stat(old)).rejects.toThrow();
    expect(await readFile(sameDayYounger, 'utf8')).toBe('b');
    expect((await manifest('2026-01-01')).map((l) => l.relPath)).toEqual(['b.txt']);

    now += 2000;
    expect(await trash.purgeOlderThan()).toBe(1);
    expect((await readdir(join(stateDir, 'trash'))).sort()).toEqual(['2026-01-20']);
    expect(await readFile(recent, 'utf8')).toBe('c');
    expect(await trash.purgeOlderThan(0)).toBe(1);
    expect(await readdir(join(stateDir, 'trash'))).toEqual([]);
  });

  it('purges nothing when there is no trash yet', async () => {
    const trash = createLocalTrash({ mode: 'state', stateDir, fs: nodeFs });
    expect(await trash.purgeOlderThan(0)).toBe(0);
  });

  it.skipIf(!hasOtherDevice)('falls back to copy + verify + unlink across file systems, keeping content, mtimes and symlinks', async () => {
    shm = await otherDevice();
    await mkdir(join(root, 'docs', 'deep'));
    await writeFile(join(root, 'docs', 'deep', 'b.bin'), Buffer.alloc(200_000, 7));
    await symlink('../a.txt', join(root, 'docs', 'deep', 'link'));
    await utimes(join(root, 'docs', 'a.txt'), new Date(1_500_000_000_000), new Date(1_500_000_000_000));
    const trash = createLocalTrash({ mode: 'state', stateDir: shm, fs: nodeFs });
    const dest = await trash.trash(join(root, 'docs'), p('docs'));
    expect(dest.startsWith(shm)).toBe(true);
    expect(await readFile(join(dest, 'a.txt'), 'utf8')).toBe('alpha');
    expect((await stat(join(dest, 'a.txt'))).mtimeMs).toBe(1_500_000_000_000);
    expect((await readFile(join(dest, 'deep', 'b.bin'))).equals(Buffer.alloc(200_000, 7))).toBe(true);
    expect(await readlink(join(dest, 'deep', 'link'))).toBe('../a.txt');
    expect(await readdir(root)).toEqual([]);
  });

  it('handles EXDEV from rename the same way when the kernel reports it', async () => {
    const fs = withFaults(nodeFs, (m) => (m === 'rename' ? 'EXDEV' : undefined));
    const trash = createLocalTrash({ mode: 'state', stateDir, fs });
    const dest = await trash.trash(join(root, 'docs'), p('docs'));
    expect(await readFile(join(dest, 'a.txt'), 'utf8')).toBe('alpha');
    expect(await readdir(root)).toEqual([]);
    expect(fs.calls.some((c) => c.method === 'copyFile')).toBe(true);
  });
});

describe('freedesktop trash', () => {
  it('moves into $XDG_DATA_HOME/Trash/files and writes a .trashinfo per the spec, with unique names', async () => {
    const xdg = join(tmp.dir, 'xdg');
    const at = new Date(2026, 10, 22, 14, 5, 9);
    const trash = createLocalTrash({ mode: 'freedesktop', stateDir, fs: nodeFs, xdgDataHome: xdg, now: () => at.getTime() });
    await writeFile(join(root, 'docs', 'my report #1.txt'), 'r1');
    const first = await trash.trash(join(root, 'docs', 'my report #1.txt'), p('docs/my report #1.txt'));
    await writeFile(join(root, 'docs', 'my report #1.txt'), 'r2');
    const second = await trash.trash(join(root, 'docs', 'my report #1.txt'), p('docs/my report #1.txt'));
    expect(first).toBe(join(xdg, 'Trash', 'files', 'my report #1.txt'));
    expect(second).toBe(join(xdg, 'Trash', 'files', 'my report #1.txt.2'));
    expect(await readFile(second, 'utf8')).toBe('r2');
    const info = await readFile(join(xdg, 'Trash', 'info', 'my report #1.txt.trashinfo'), 'utf8');
    const encoded = join(root, 'docs').split('/').map(encodeURIComponent).join('/');
    expect(info).toBe(`[Trash Info]\nPath=${encoded}/my%20report%20%231.txt\nDeletionDate=2026-11-22T14:05:09\n`);
    expect((await readdir(join(xdg, 'Trash', 'info'))).sort()).toEqual(['my report #1.txt.2.trashinfo', 'my report #1.txt.trashinfo']);
    expect((await lstat(join(xdg, 'Trash'))).mode & 0o777).toBe(0o700);
  });

  it.skipIf(!hasOtherDevice)('uses the state trash when the desktop trash is on another file system', async () => {
    shm = await otherDevice();
    const trash = createLocalTrash({ mode: 'freedesktop', stateDir, fs: nodeFs, xdgDataHome: shm });
    const dest = await trash.trash(join(root, 'docs', 'a.txt'), p('docs/a.txt'));
    expect(dest.startsWith(join(stateDir, 'trash'))).toBe(true);
    expect(await readFile(dest, 'utf8')).toBe('alpha');
    expect(await readdir(shm)).toEqual([]);
  });
});
