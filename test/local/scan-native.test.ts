/**
 * The native walk (native/walk.c through src/local/walk-native.ts) against node:fs on real folders: each case runs
 * twice, with the addon and with the addon missing (BOXSYNC_WALK_ADDON naming a file that is not there, the
 * fallback every machine without the build takes), and must give the same entries, in the same order, with the
 * same parked paths: symlinks, a FIFO, names that are not UTF-8, a name with a newline, names whose UTF-16 order
 * is not their byte order, a path past PATH_MAX, kept and stale SHA-1s, and (as an unprivileged user) a folder
 * that cannot be read.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as nodeFs from 'node:fs';
import { appendFile, chmod, mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LOCAL_NAME_NOT_UTF8 } from '../../src/core/park-class.js';
import { asRelPath, type LocalEntry } from '../../src/core/model.js';
import { createIgnoreMatcher } from '../../src/local/ignore.js';
import { createLocalFs } from '../../src/local/local-fs.js';
import { createLocalTrash } from '../../src/local/local-trash.js';
import { loadWalkAddon } from '../../src/local/walk-native.js';
import type { ScanOptions } from '../../src/ports/local-fs.js';
import { repoRoot } from '../support/cli.js';
import { giveTo, unprivilegedUser } from '../support/run-as.js';
import { makeTempDir } from '../support/tmp.js';

const MISSING = '/nonexistent/boxsync_walk.node';
const addon = loadWalkAddon();

let tmp: { dir: string; cleanup: () => Promise<void> };
let root: string;
let saved: string | undefined;

beforeEach(async () => {
  tmp = await makeTempDir('boxsync-scan-native-');
  root = join(tmp.dir, 'root');
  await mkdir(root);
  saved = process.env.BOXSYNC_WALK_ADDON;
});
afterEach(async () => {
  if (saved === undefined) delete process.env.BOXSYNC_WALK_ADDON;
  else process.env.BOXSYNC_WALK_ADDON = saved;
  await tmp.cleanup();
});

interface Scanned {
  readonly entries: LocalEntry[];
  readonly parked: [string, string][];
  /** Folders the addon read (0 without it): by list() on the main thread, or read ahead by listAhead() on the pool. */
  readonly nativeReads: number;
  /** Of those, the folders read ahead (scan.ts WALK_AHEAD). */
  readonly readAhead: number;
}

/** One scan of `root` with the addon (`native`) or with it missing. */
async function scan(native: boolean, opts: Partial<ScanOptions> = {}): Promise<Scanned> {
  process.env.BOXSYNC_WALK_ADDON = native ? '' : MISSING;
  let nativeReads = 0;
  let readAhead = 0;
  const list = addon?.list;
  const listAhead = addon?.listAhead;
  // Counts the addon's folder reads (the same addon object the walk loads), then puts its own functions back.
  if (addon !== null && list !== undefined && listAhead !== undefined) {
    (addon as { list: typeof list }).list = (path) => {
      nativeReads += 1;
      return list(path);
    };
    (addon as { listAhead: typeof listAhead }).listAhead = (paths) => {
      nativeReads += paths.length;
      readAhead += paths.length;
      return listAhead(paths);
    };
  }
  try {
    const local = createLocalFs({ rootPath: root, fs: nodeFs, trash: createLocalTrash({ mode: 'state', stateDir: join(tmp.dir, 'state'), fs: nodeFs }) });
    const entries: LocalEntry[] = [];
    const parked: [string, string][] = [];
    for await (const b of local.scan({ isIgnored: createIgnoreMatcher(['*.ignored']), onUnreadable: (path, err) => parked.push([path, err.code]), ...opts })) entries.push(...b);
    return { entries, parked, nativeReads, readAhead };
  } finally {
    if (addon !== null && list !== undefined) (addon as { list: typeof list }).list = list;
    if (addon !== null && listAhead !== undefined) (addon as { listAhead: typeof listAhead }).listAhead = listAhead;
  }
}

/** Both ways, checked equal; the native one returned. */
async function bothWays(opts: Partial<ScanOptions> = {}): Promise<Scanned> {
  const viaNode = await scan(false, opts);
  expect(viaNode.nativeReads).toBe(0);
  const viaAddon = await scan(true, opts);
  expect(viaAddon.entries).toEqual(viaNode.entries);
  expect(viaAddon.parked).toEqual(viaNode.parked);
  return viaAddon;
}

describe('the native walk', () => {
  it('is built and loads here (scripts/build-native.mjs; the tests below would otherwise compare node:fs with itself)', () => {
    expect(process.platform).toBe('linux');
    expect(addon).not.toBeNull();
    expect(typeof addon?.listAhead).toBe('function');
    expect(loadWalkAddon(MISSING)).toBeNull();
    expect(loadWalkAddon('off')).toBeNull();
  });

  it('gives the kind, size, mtime and inode node:fs lstat gives, bit for bit; symlinks and a FIFO are not followed', async () => {
    const outside = join(tmp.dir, 'outside');
    await mkdir(outside);
    await writeFile(join(outside, 'secret.txt'), 'outside the root');
    await mkdir(join(root, 'sub', 'deeper'), { recursive: true });
    await writeFile(join(root, 'a.txt'), 'a');
    await writeFile(join(root, 'sub', 'b.bin'), Buffer.alloc(70_000, 7));
    await writeFile(join(root, 'sub', 'deeper', 'c'), '');
    await writeFile(join(root, 'sub', 'skip.ignored'), 'x');
    await symlink(outside, join(root, 'out'));
    await symlink('/nonexistent/target', join(root, 'sub', 'dangling'));
    execFileSync('mkfifo', [join(root, 'pipe')]);
    const got = await bothWays();
    expect(got.nativeReads).toBe(3);
    expect(got.entries.map((e) => [e.path, e.kind])).toEqual([
      ['a.txt', 'file'],
      ['out', 'symlink'],
      ['pipe', 'other'],
      ['sub', 'folder'],
      ['sub/b.bin', 'file'],
      ['sub/dangling', 'symlink'],
      ['sub/deeper', 'folder'],
      ['sub/deeper/c', 'file'],
    ]);
    for (const e of got.entries) {
      const st = nodeFs.lstatSync(join(root, e.path));
      expect([e.inode, e.mtimeMs, e.sizeBytes]).toEqual([st.ino, st.mtimeMs, e.kind === 'folder' ? 0 : st.size]);
    }
  });

  it('orders names as JavaScript sorts them (UTF-16), keeps a newline in a name, and parks a name that is not UTF-8 with its siblings listed', async () => {
    const names = ['Z', 'a', 'é', '\u{1F600}', '\uE000x', '\uFFFDreplaced', 'new\nline', 'tab\there', ' space'];
    for (const n of names) await writeFile(join(root, n), n);
    await mkdir(join(root, 'bytes'));
    await writeFile(join(root, 'bytes', 'fine'), 'ok');
    nodeFs.writeFileSync(Buffer.concat([Buffer.from(`${root}/bytes/bad-`), Buffer.from([0xff, 0xfe]), Buffer.from('.txt')]), 'not utf-8');
    const got = await bothWays();
    expect(got.entries.filter((e) => !e.path.includes('/')).map((e) => e.path)).toEqual([...names, 'bytes'].sort());
    expect(got.entries.map((e) => e.path)).toContain('bytes/fine');
    expect(got.parked).toEqual([['bytes/bad-\\xff\\xfe.txt', LOCAL_NAME_NOT_UTF8]]);
    // The root and `bytes` read natively; `bytes` answered "not UTF-8" and was read again by node:fs as bytes.
    expect(got.nativeReads).toBe(2);
  });

  it('sorts a few hundred mixed names (ASCII, Latin, CJK, emoji, private use, U+FFFD) exactly as JavaScript does', async () => {
    const alphabet = ['a', 'B', '0', '-', 'z', 'é', 'ß', 'Ω', '\u00A0', '中', '\u{1F600}', '\u{10FFFD}', '\uE000', '\uFFFD', '\uFF5E'];
    // Park-Miller: exact in doubles (48271 * 2^31 < 2^53), so the same names on every machine.
    let seed = 7;
    const next = (n: number): number => {
      seed = (seed * 48271) % 2147483647;
      return seed % n;
    };
    const names = new Set<string>();
    for (let tries = 0; names.size < 300 && tries < 100_000; tries++) {
      let n = '';
      for (let k = 1 + next(4); k > 0; k--) n += alphabet[next(alphabet.length)];
      names.add(n);
    }
    expect(names.size).toBe(300);
    for (const n of names) await writeFile(join(root, n), '');
    const got = await bothWays();
    expect(got.nativeReads).toBe(1);
    expect(got.entries.map((e) => e.path)).toEqual([...names].sort());
  });

  it('keeps a known SHA-1 only while size, mtime and inode match, and hashes an edited file when asked', async () => {
    await mkdir(join(root, 'd'));
    await writeFile(join(root, 'd', 'same'), 'same');
    await writeFile(join(root, 'd', 'edited'), 'before');
    const first = await bothWays({ hash: true });
    const known = new Map(first.entries.map((e) => [e.path, e]));
    expect(known.get(asRelPath('d/same'))?.sha1).toMatch(/^[0-9a-f]{40}$/);
    await appendFile(join(root, 'd', 'edited'), ' and after');
    const hashedNone = await bothWays({ known: (p) => known.get(p) });
    expect(hashedNone.entries.find((e) => e.path === 'd/same')?.sha1).toBe(known.get(asRelPath('d/same'))?.sha1);
    expect(hashedNone.entries.find((e) => e.path === 'd/edited')?.sha1).toBeNull();
    const hashed = await bothWays({ known: (p) => known.get(p), hash: true });
    expect(hashed.entries.find((e) => e.path === 'd/edited')?.sha1).toBe(createHash('sha1').update('before and after').digest('hex'));
    expect(hashed.entries.find((e) => e.path === 'd/same')?.sha1).toBe(createHash('sha1').update('same').digest('hex'));
  });

  it('reads the next folders ahead on the thread pool (listAhead) and still sees every entry and every edit, as node:fs does', async () => {
    // Wide and deep: more folders than WALK_AHEAD at each level, so that folders are read ahead while others are
    // observed, and some are met again after their read-ahead siblings' subtrees.
    for (let a = 0; a < 12; a++) {
      for (let b = 0; b < 3; b++) {
        await mkdir(join(root, `d${a}`, `e${b}`), { recursive: true });
        for (let f = 0; f < 4; f++) await writeFile(join(root, `d${a}`, `e${b}`, `f${f}.txt`), `${a}.${b}.${f}`);
      }
      await writeFile(join(root, `d${a}`, 'top.txt'), String(a));
    }
    const first = await bothWays({ hash: true });
    expect(first.readAhead).toBeGreaterThan(0);
    // Every folder read once, natively (the root and 12 x 4 below it).
    expect(first.nativeReads).toBe(1 + 12 * 4);
    expect(first.entries.filter((e) => e.kind === 'file').length).toBe(12 * (3 * 4 + 1));
    // An edit in each folder (appended: size and mtime change; one replaced by a new file: a new inode): each seen.
    const known = new Map(first.entries.map((e) => [e.path, e]));
    const edited: string[] = [];
    for (let a = 0; a < 12; a++) {
      await appendFile(join(root, `d${a}`, `e${a % 3}`, 'f1.txt'), ' edited');
      edited.push(`d${a}/e${a % 3}/f1.txt`);
    }
    await nodeFs.promises.rename(join(root, 'd11', 'top.txt'), join(root, 'd11', 'moved.txt'));
    await writeFile(join(root, 'd11', 'top.txt'), '11');
    const again = await bothWays({ known: (p) => known.get(p), hash: true });
    expect(again.readAhead).toBeGreaterThan(0);
    const changedFiles = again.entries.filter((e) => {
      const k = known.get(e.path);
      return e.kind === 'file' && (k === undefined || k.sha1 !== e.sha1 || k.inode !== e.inode || k.sizeBytes !== e.sizeBytes || k.mtimeMs !== e.mtimeMs);
    });
    expect(changedFiles.map((e) => e.path).sort()).toEqual([...edited, 'd11/moved.txt', 'd11/top.txt'].sort());
    for (const p of edited) expect(again.entries.find((e) => e.path === p)?.sha1).toBe(createHash('sha1').update(`${p.slice(1, p.indexOf('/'))}.${p.split('/')[1]!.slice(1)}.1 edited`).digest('hex'));
  });

  it('listAhead answers as list() does, per path: entries, -errno, EINVAL for a NUL', async () => {
    await mkdir(join(root, 'sub'));
    await writeFile(join(root, 'sub', 'f.txt'), 'x');
    await writeFile(join(root, 'file'), 'x');
    const got = await addon!.listAhead!([join(root, 'sub'), join(root, 'gone'), join(root, 'file'), `${join(root, 'sub')}\0/etc`, root]);
    expect(got.length).toBe(5);
    const sub = got[0]!;
    expect(typeof sub === 'number' ? sub : [sub[0], Array.from(sub[1])]).toEqual((([n, m]) => [n, Array.from(m)])(addon!.list(join(root, 'sub')) as readonly [string, Float64Array]));
    expect(got.slice(1, 4)).toEqual([-2, -20, -22]);
    expect(typeof got[4] === 'number' ? got[4] : got[4]![0]).toBe('file\0sub');
    expect(await addon!.listAhead!([])).toEqual([]);
  });

  it('refuses a path with a NUL in it (EINVAL) instead of reading the shorter path before the NUL', async () => {
    await mkdir(join(root, 'sub'));
    await writeFile(join(root, 'sub', 'f.txt'), 'x');
    expect(addon).not.toBeNull();
    expect(addon!.list(`${join(root, 'sub')}\0/etc`)).toBe(-22);
    const listed = addon!.list(join(root, 'sub'));
    expect(typeof listed === 'number' ? listed : listed[0]).toBe('f.txt');
  });

  it('parks a path past PATH_MAX (ENAMETOOLONG) and goes on with the rest', async () => {
    // 4096 bytes is Linux's PATH_MAX: folders of 200-byte names until the path passes it. GNU mkdir and rm go
    // down folder by folder (node's calls take the whole path, which the kernel refuses past PATH_MAX).
    let deep = root;
    while (Buffer.byteLength(deep) < 4300) deep = join(deep, 'd'.repeat(200));
    execFileSync('mkdir', ['-p', deep]);
    try {
      await writeFile(join(root, 'sibling'), 'x');
      const got = await bothWays();
      expect(got.entries.map((e) => e.path)).toContain('sibling');
      expect(got.parked.length).toBe(1);
      expect(got.parked[0]?.[1]).toBe('name_too_long');
      expect(Buffer.byteLength(join(root, got.parked[0]![0]))).toBeGreaterThanOrEqual(4096);
    } finally {
      execFileSync('rm', ['-rf', join(root, 'd'.repeat(200))]);
    }
  });

  const user = unprivilegedUser();
  it.skipIf(!('as' in user))('parks a folder it cannot read, and an entry it cannot look at, as node:fs does (as an unprivileged user: root reads any folder)', async () => {
    const as = 'as' in user ? user.as : undefined;
    await mkdir(join(root, 'open'));
    await writeFile(join(root, 'open', 'f'), 'f');
    await mkdir(join(root, 'shut'));
    await writeFile(join(root, 'shut', 'hidden'), 'h');
    // Listable but not searchable: its names are read, each lstat is refused (EACCES).
    await mkdir(join(root, 'noexec'));
    await writeFile(join(root, 'noexec', 'g'), 'g');
    await chmod(tmp.dir, 0o755);
    giveTo(tmp.dir, as!);
    await chmod(join(root, 'shut'), 0o000);
    await chmod(join(root, 'noexec'), 0o644);
    const run = (addonPath: string): unknown => {
      const r = spawnSync(process.execPath, ['--import', 'tsx', join(repoRoot, 'test', 'local', 'scan-as-user.ts'), root], {
        cwd: repoRoot,
        uid: as!.uid,
        gid: as!.gid,
        env: { ...process.env, BOXSYNC_WALK_ADDON: addonPath },
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(r.status, r.stderr).toBe(0);
      return JSON.parse(r.stdout);
    };
    const viaNode = run(MISSING);
    const viaAddon = run('');
    expect(viaNode).toMatchObject({ native: false });
    expect(viaAddon).toEqual({ ...(viaNode as object), native: true });
    expect(viaAddon).toMatchObject({
      entries: [
        ['noexec', 'folder'],
        ['open', 'folder'],
        ['shut', 'folder'],
        ['open/f', 'file'],
      ],
      parked: [
        ['noexec/g', 'permission_denied'],
        ['shut', 'permission_denied'],
      ],
    });
  });
});
