import { createHash } from 'node:crypto';
import { Volume, createFsFromVolume } from 'memfs';
import { describe, expect, it } from 'vitest';
import { isSyncError, type SyncError } from '../../src/core/errors.js';
import { asRelPath as p, type LocalEntry, type RelPath } from '../../src/core/model.js';
import type { FsModule } from '../../src/local/fs-module.js';
import { createIgnoreMatcher } from '../../src/local/ignore.js';
import { createLocalFs } from '../../src/local/local-fs.js';
import { createLocalTrash } from '../../src/local/local-trash.js';
import type { ScanOptions } from '../../src/ports/local-fs.js';
import { QUICK_SLOW_IN_A_ROW } from '../../src/local/quick-fs.js';
import { LSTAT_WINDOW, SCAN_BATCH_ENTRIES, SYNC_LSTAT_MAX_MS_EACH, WALK_TURN_MS } from '../../src/local/scan.js';
import { SCHED_LAG_MS } from '../../src/local/thread-clock.js';
import { errnoError, withFaults } from './faulty-fs.js';

const sha1 = (s: string): string => createHash('sha1').update(s).digest('hex');

function setup(files: Record<string, string | null>, wrap?: (fs: FsModule) => FsModule) {
  const vol = Volume.fromJSON(files);
  const base = createFsFromVolume(vol) as unknown as FsModule;
  const fs = wrap ? wrap(base) : base;
  const trash = createLocalTrash({ mode: 'state', stateDir: '/state', fs });
  return { vol, fs, local: createLocalFs({ rootPath: '/r', fs, trash }) };
}

async function collect(it: AsyncIterable<readonly LocalEntry[]>): Promise<{ batches: number[]; entries: LocalEntry[] }> {
  const batches: number[] = [];
  const entries: LocalEntry[] = [];
  for await (const b of it) {
    batches.push(b.length);
    entries.push(...b);
  }
  return { batches, entries };
}

const base: ScanOptions = { isIgnored: createIgnoreMatcher([]) };

describe('scan (memfs)', () => {
  it('walks the tree with lstat, a folder before its contents, skipping temp files and ignored paths', async () => {
    const { fs, local } = setup({
      '/r/a.txt': 'hello',
      '/r/d/b.txt': 'bee',
      '/r/d/e/c.txt': 'sea',
      '/r/d/.boxsync-tmp-0011': 'partial download',
      '/r/d/notes.txt~': 'editor backup',
      '/r/node_modules/x/y.js': 'ignored by a user pattern',
      '/r/empty': null,
      '/outside/secret.txt': 'must never be reached',
    });
    await fs.promises.symlink('/outside', '/r/link-out');
    await fs.promises.symlink('a.txt', '/r/d/link-in');
    const { entries } = await collect(local.scan({ isIgnored: createIgnoreMatcher(['node_modules/']), hash: true }));
    const byPath = new Map(entries.map((e) => [e.path as string, e]));
    expect([...byPath.keys()].sort()).toEqual(['a.txt', 'd', 'd/b.txt', 'd/e', 'd/e/c.txt', 'd/link-in', 'empty', 'link-out']);
    expect(byPath.get('a.txt')).toMatchObject({ kind: 'file', sizeBytes: 5, sha1: sha1('hello') });
    expect(byPath.get('d')).toMatchObject({ kind: 'folder', sizeBytes: 0, sha1: null });
    expect(byPath.get('link-out')).toMatchObject({ kind: 'symlink', sha1: null });
    expect(byPath.get('d/link-in')?.kind).toBe('symlink');
    const order = entries.map((e) => e.path as string);
    expect(order.indexOf('d')).toBeLessThan(order.indexOf('d/e'));
    expect(order.indexOf('d/e')).toBeLessThan(order.indexOf('d/e/c.txt'));
  });

  it('yields bounded batches for a big folder', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 1234; i++) files[`/r/big/f${i}`] = String(i);
    const { local } = setup(files);
    const { batches, entries } = await collect(local.scan(base));
    expect(entries).toHaveLength(1235);
    expect(batches.length).toBeGreaterThanOrEqual(3);
    expect(Math.max(...batches)).toBeLessThanOrEqual(500);
  });

  it('stats through the callback lstat when the module has one, in name order across windows; an entry gone meanwhile is skipped', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 150; i++) files[`/r/w/f${String(i).padStart(3, '0')}`] = String(i);
    let callbackStats = 0;
    const { local } = setup(files, (mem) => ({
      promises: mem.promises,
      createReadStream: mem.createReadStream,
      lstat: ((path: string, cb: (err: NodeJS.ErrnoException | null, st?: unknown) => void) => {
        callbackStats += 1;
        // Deleted between the folder listing and its lstat.
        if (path === '/r/w/f070') return cb(Object.assign(new Error('ENOENT: gone'), { code: 'ENOENT' }));
        (mem.lstat as (p: string, c: typeof cb) => void)(path, cb);
      }) as FsModule['lstat'],
    }));
    const { entries } = await collect(local.scan(base));
    const names = entries.map((e) => e.path as string).filter((x) => x.startsWith('w/'));
    expect(names).toHaveLength(149);
    expect(names).toEqual([...names].sort());
    expect(names).not.toContain('w/f070');
    expect(callbackStats).toBe(151);
  });

  describe('synchronous lstats on a local disk', () => {
    /**
     * memfs with statfs answering `fsType` and both lstats counted; `slowSync(n)` says whether the n-th sync call is
     * slow: `true`, it sleeps 1 ms (as a call the disk answers); 'busy', it keeps the CPU 0.2 ms (as a machine
     * whose other work takes the CPU: neither is the disk).
     */
    function counted(files: Record<string, string>, fsType: number, slowSync: (n: number) => boolean | 'busy' = () => false, gone?: string) {
      // `gone`: its folder replaced by a file between the listing and this lstat (ENOTDIR), through either lstat.
      const notDir = (): NodeJS.ErrnoException => Object.assign(new Error('ENOTDIR: not a directory'), { code: 'ENOTDIR' });
      const calls = { sync: 0, callback: 0 };
      const cache = new Map<string, unknown>();
      const { local, fs } = setup(files, (mem) => ({
        promises: mem.promises,
        createReadStream: mem.createReadStream,
        statfs: ((path: string, cb: (err: null, st: { type: number }) => void) => cb(null, { type: fsType })) as unknown as FsModule['statfs'],
        lstat: ((path: string, cb: (err: NodeJS.ErrnoException | null, st?: unknown) => void) => {
          calls.callback += 1;
          if (path === gone) return cb(notDir());
          (mem.lstat as (p: string, c: typeof cb) => void)(path, cb);
        }) as FsModule['lstat'],
        lstatSync: ((path: string, opts: object) => {
          calls.sync += 1;
          if (path === gone) throw notDir();
          // A lstat that reads the disk: this one sleeps 1 ms, far over SYNC_LSTAT_MAX_MS_EACH.
          const slow = slowSync(calls.sync);
          if (slow === 'busy') for (const until = performance.now() + 0.2; performance.now() < until; );
          else if (slow) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
          // Answered from stats taken before the walk (a cached lstat), so that only slowSync decides what is slow.
          if (!cache.has(path)) cache.set(path, (mem.lstatSync as (p: string, o: object) => unknown)(path, opts));
          return cache.get(path);
        }) as FsModule['lstatSync'],
      }));
      for (const path of [...Object.keys(files), ...Object.keys(files).map((f) => f.slice(0, f.lastIndexOf('/')))]) {
        if (path !== gone && !cache.has(path)) cache.set(path, fs.lstatSync!(path, { throwIfNoEntry: false }));
      }
      calls.sync = 0;
      return { calls, local };
    }
    const folderOf = (n: number): Record<string, string> => {
      const files: Record<string, string> = {};
      for (let i = 0; i < n; i++) files[`/r/w/f${String(i).padStart(3, '0')}`] = String(i);
      return files;
    };
    const EXT4 = 0xef53;

    it('stats every entry synchronously while the lstats answer fast, with the same entries as through the pool', async () => {
      const files = { ...folderOf(150), '/r/w/f010/inside': 'f010 becomes a folder' };
      delete (files as Record<string, string>)['/r/w/f010'];
      const { calls, local } = counted(files, EXT4, undefined, '/r/w/f020');
      const sync = await collect(local.scan(base));
      // 'w', its 150 entries, and f010/inside, each stat-ed once (synchronously while the gate stayed on:
      // quick-fs.test says when it turns off).
      expect(calls.sync + calls.callback).toBe(152);
      expect(calls.sync).toBeGreaterThan(0);
      const pooled = await collect(counted(files, 0x6969, undefined, '/r/w/f020').local.scan(base));
      // Two volumes of the same files: all but the mtimes agree.
      const shape = (es: LocalEntry[]) => es.map(({ mtimeMs: _, ...rest }) => rest);
      expect(shape(sync.entries)).toEqual(shape(pooled.entries));
      expect(sync.entries.map((e) => e.path as string)).toContain('w/f010/inside');
      expect(sync.entries.map((e) => e.path as string)).not.toContain('w/f020');
      expect(sync.entries).toHaveLength(151);
    });

    it('goes back to the thread pool for the rest of the walk after QUICK_SLOW_IN_A_ROW slow windows in a row', async () => {
      const { calls, local } = counted(folderOf(300), EXT4, () => true);
      const { entries } = await collect(local.scan(base));
      const names = entries.map((e) => e.path as string).filter((x) => x.startsWith('w/'));
      expect(names).toHaveLength(300);
      expect(names).toEqual([...names].sort());
      // 'w' itself (its own window of one: 1 ms of sleep is within SCHED_LAG_MS, not counted) and three windows of
      // 64 of its entries; then the pool.
      expect(calls).toEqual({ sync: 1 + 3 * LSTAT_WINDOW, callback: 300 - 3 * LSTAT_WINDOW });
      expect(QUICK_SLOW_IN_A_ROW).toBe(3);
      // (A window's 64 ms of sleep, less the lag, is still over its budget.)
      expect(LSTAT_WINDOW * 1 - SCHED_LAG_MS).toBeGreaterThan(LSTAT_WINDOW * SYNC_LSTAT_MAX_MS_EACH);
    });

    it('keeps the synchronous lstats when a slow window kept the CPU (a loaded machine) instead of sleeping (the disk)', async () => {
      // Each lstat holds the CPU 0.2 ms: every window of 64 is eight times over SYNC_LSTAT_MAX_MS_EACH by the wall
      // clock, as a window of cached lstats is when other processes take the CPU, and none of it is sleep.
      const { calls, local } = counted(folderOf(300), EXT4, () => 'busy');
      const { entries } = await collect(local.scan(base));
      expect(entries.filter((e) => e.path.startsWith('w/'))).toHaveLength(300);
      expect(calls).toEqual({ sync: 301, callback: 0 });
    });

    /**
     * memfs on "ext4" with both readdirs recorded: `readdirSync` sleeps `sleepMs` (a folder the disk answers), keeps
     * the CPU `busyMs`, and refuses `/r/locked` (EACCES), as the kernel would.
     */
    function withReaddirs(files: Record<string, string>, sleepMs = 0, busyMs = 0) {
      const reads = { sync: [] as string[], pooled: [] as string[] };
      const { local } = setup(files, (mem) => ({
        promises: {
          ...mem.promises,
          readdir: ((path: string, o?: object) => {
            reads.pooled.push(path);
            if (path === '/r/locked') return Promise.reject(errnoError('EACCES', 'scandir', path));
            return mem.promises.readdir(path, o as never);
          }) as FsModule['promises']['readdir'],
        },
        createReadStream: mem.createReadStream,
        statfs: ((path: string, cb: (err: null, st: { type: number }) => void) => cb(null, { type: EXT4 })) as unknown as FsModule['statfs'],
        lstat: mem.lstat,
        lstatSync: mem.lstatSync,
        readdirSync: ((path: string, o?: object) => {
          reads.sync.push(path);
          if (sleepMs > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, sleepMs);
          for (const until = performance.now() + busyMs; performance.now() < until; );
          if (path === '/r/locked') throw errnoError('EACCES', 'scandir', path);
          return (mem.readdirSync as (p: string, o?: object) => unknown)(path, o);
        }) as FsModule['readdirSync'],
      }));
      return { reads, local };
    }

    it('reads each folder synchronously too while the lstats are, with the same entries, and parks a folder it cannot read', async () => {
      const files = { ...folderOf(100), '/r/x/one': '1', '/r/locked/secret': 's' };
      const { reads, local } = withReaddirs(files);
      const problems: [RelPath, string][] = [];
      const { entries } = await collect(local.scan({ ...base, onUnreadable: (path, e) => problems.push([path, e.code]) }));
      expect(reads.sync.sort()).toEqual(['/r', '/r/locked', '/r/w', '/r/x']);
      expect(reads.pooled).toEqual([]);
      expect(problems).toEqual([['locked', 'permission_denied']]);
      // The same entries as a walk through the pool (a volume that is not on this machine) finds.
      const pooled = counted({ ...folderOf(100), '/r/x/one': '1' }, 0x6969);
      const shape = (es: LocalEntry[]) => es.map((e) => `${e.path} ${e.kind} ${e.sizeBytes}`);
      expect(shape(entries)).toEqual(shape((await collect(pooled.local.scan(base))).entries).toSpliced(0, 0, 'locked folder 0'));
    });

    it('gives the event loop a turn every WALK_TURN_MS while it reads folders and lstats synchronously', async () => {
      const files: Record<string, string> = {};
      for (let i = 0; i < 6; i++) files[`/r/d${i}/f`] = String(i);
      // Each read keeps the CPU for WALK_TURN_MS (a big folder on a loaded machine): never sleep, so it stays quick.
      const { reads, local } = withReaddirs(files, 0, WALK_TURN_MS);
      let turns = 0;
      const timer = setInterval(() => (turns += 1), 0);
      try {
        const { entries } = await collect(local.scan(base));
        expect(entries).toHaveLength(12);
      } finally {
        clearInterval(timer);
      }
      expect(reads.pooled).toEqual([]);
      // Nothing in such a walk waits for I/O: only the turns it gives let the timer run, about one per folder here.
      expect(turns).toBeGreaterThanOrEqual(3);
    });

    it('gives the event loop a turn between the batches of one big folder when their consumer held it WALK_TURN_MS', async () => {
      // One folder, one synchronous read: 4 batches of SCAN_BATCH_ENTRIES, each written by its consumer (a journal
      // transaction in a pass) for WALK_TURN_MS. A folder of 20,000 entries held the event loop 1-1.7 s at a million files.
      const files: Record<string, string> = {};
      for (let i = 0; i < 4 * SCAN_BATCH_ENTRIES; i++) files[`/r/big/f${i}`] = '';
      const { reads, local } = withReaddirs(files);
      let turns = 0;
      const timer = setInterval(() => (turns += 1), 0);
      const turnsAtBatch: number[] = [];
      try {
        for await (const batch of local.scan(base)) {
          turnsAtBatch.push(turns);
          if (batch.length === SCAN_BATCH_ENTRIES) for (const until = performance.now() + WALK_TURN_MS; performance.now() < until; );
        }
      } finally {
        clearInterval(timer);
      }
      expect(reads.pooled).toEqual([]);
      expect(turnsAtBatch.length).toBeGreaterThanOrEqual(4);
      // Nothing in the walk waits for I/O: only the turns it gives after a batch let the timer run (a turn given
      // after a batch shows in the count by the one after next).
      expect(turnsAtBatch[3]!).toBeGreaterThanOrEqual(2);
    });

    it('goes back to the thread pool for folders too once reading them slept (the disk answered) QUICK_SLOW_IN_A_ROW times in a row', async () => {
      const files: Record<string, string> = {};
      for (let i = 0; i < 8; i++) files[`/r/d${i}/f`] = String(i);
      // Each read sleeps far over its budget (two entries' worth) and over SCHED_LAG_MS, with room for the time a
      // loaded machine takes to give the woken thread a CPU (counted as not sleeping).
      const { reads, local } = withReaddirs(files, SCHED_LAG_MS + 90);
      const { entries } = await collect(local.scan(base));
      const d = Array.from({ length: 8 }, (_, i) => `d${i}`);
      expect(entries.map((e) => e.path as string)).toEqual([...d, ...d.map((x) => `${x}/f`)]);
      // The root's read and the next two slept (the quick lstats between them count for the lstats' gate only);
      // the other six went through the pool.
      expect(reads.sync).toEqual(['/r', '/r/d0', '/r/d1']);
      expect(reads.pooled).toEqual(['/r/d2', '/r/d3', '/r/d4', '/r/d5', '/r/d6', '/r/d7']);
      expect(QUICK_SLOW_IN_A_ROW).toBe(3);
    });

    it('asks statfs when the LocalFs is made and at each full scan, never for a scan of a subtree; a full scan follows a changed answer', async () => {
      let fsType = EXT4;
      const asked = { statfs: 0, sync: 0 };
      const { local } = setup(folderOf(20), (mem) => ({
        promises: mem.promises,
        createReadStream: mem.createReadStream,
        lstat: mem.lstat,
        statfs: ((path: string, cb: (err: null, st: { type: number }) => void) => {
          asked.statfs += 1;
          cb(null, { type: fsType });
        }) as unknown as FsModule['statfs'],
        lstatSync: ((path: string, opts: object) => {
          asked.sync += 1;
          return (mem.lstatSync as (p: string, o: object) => unknown)(path, opts);
        }) as FsModule['lstatSync'],
      }));
      for (let i = 0; i < 3; i++) expect((await collect(local.scan({ ...base, under: p('w') }))).entries).toHaveLength(21);
      // Each scan of 'w' lstats its 20 entries synchronously ('w' itself through the pool).
      expect(asked).toEqual({ statfs: 1, sync: 3 * 20 });
      // The root is now on NFS (mounted over): the next full scan asks, and its walk goes through the pool.
      fsType = 0x6969;
      expect((await collect(local.scan(base))).entries).toHaveLength(21);
      expect(asked).toEqual({ statfs: 2, sync: 3 * 20 });
      expect((await collect(local.scan({ ...base, under: p('w') }))).entries).toHaveLength(21);
      expect(asked).toEqual({ statfs: 2, sync: 3 * 20 });
    });

    it('never stats synchronously on a file system that is not on this machine (NFS), or when statfs fails', async () => {
      const nfs = counted(folderOf(100), 0x6969);
      expect((await collect(nfs.local.scan(base))).entries).toHaveLength(101);
      expect(nfs.calls).toEqual({ sync: 0, callback: 101 });
      const failing = setup(folderOf(100), (mem) => ({
        promises: mem.promises,
        createReadStream: mem.createReadStream,
        statfs: ((path: string, cb: (err: Error) => void) => cb(new Error('EIO'))) as unknown as FsModule['statfs'],
        lstatSync: (() => {
          throw new Error('must not be called');
        }) as unknown as FsModule['lstatSync'],
      }));
      expect((await collect(failing.local.scan(base))).entries).toHaveLength(101);
    });
  });

  it('keeps the known SHA-1 of an unchanged file and hashes a changed one only when asked', async () => {
    const { fs, local } = setup({ '/r/same.txt': 'same', '/r/changed.txt': 'new content' });
    const sameSt = await fs.promises.lstat('/r/same.txt');
    const changedSt = await fs.promises.lstat('/r/changed.txt');
    const known = new Map<RelPath, LocalEntry>([
      [p('same.txt'), { path: p('same.txt'), kind: 'file', inode: sameSt.ino, sizeBytes: sameSt.size, mtimeMs: sameSt.mtimeMs, sha1: 'f'.repeat(40) }],
      [p('changed.txt'), { path: p('changed.txt'), kind: 'file', inode: changedSt.ino, sizeBytes: 3, mtimeMs: changedSt.mtimeMs, sha1: 'e'.repeat(40) }],
    ]);
    const hashed = await collect(local.scan({ ...base, known: (x) => known.get(x), hash: true }));
    const sha = (r: { entries: LocalEntry[] }, x: string) => r.entries.find((e) => e.path === x)?.sha1;
    // The stored hash is trusted as is (it is deliberately not the real one, proving the file was not read).
    expect(sha(hashed, 'same.txt')).toBe('f'.repeat(40));
    expect(sha(hashed, 'changed.txt')).toBe(sha1('new content'));
    const unhashed = await collect(local.scan({ ...base, known: (x) => known.get(x) }));
    expect(sha(unhashed, 'same.txt')).toBe('f'.repeat(40));
    expect(sha(unhashed, 'changed.txt')).toBeNull();
  });

  it('scans only a subtree with `under`, starting with the subtree root itself', async () => {
    const { local } = setup({ '/r/a/x': '1', '/r/a/y/z': '2', '/r/ab': '3', '/r/a.txt': '4' });
    const { entries } = await collect(local.scan({ ...base, under: p('a') }));
    expect(entries.map((e) => e.path)).toEqual(['a', 'a/x', 'a/y', 'a/y/z']);
    expect((await collect(local.scan({ ...base, under: p('gone') }))).entries).toEqual([]);
    expect((await collect(local.scan({ ...base, under: p('ab') }))).entries.map((e) => e.path)).toEqual(['ab']);
  });

  it('refuses to report a missing root as an empty tree', async () => {
    const { local } = setup({ '/elsewhere/a': '1' });
    const err = await collect(local.scan(base)).catch((e: unknown) => e);
    expect(isSyncError(err) && err.code === 'local_root_missing' && err.disposition === 'fatal').toBe(true);
  });

  it('reports an unreadable folder through onUnreadable (or throws without it) and goes on with the rest', async () => {
    const files = { '/r/locked/secret': 's', '/r/open/a': 'a' };
    const deny = (fs: FsModule) => withFaults(fs, (m, args) => (m === 'readdir' && args[0] === '/r/locked' ? 'EACCES' : undefined));
    const { local } = setup(files, deny);
    const problems: [RelPath, SyncError][] = [];
    const { entries } = await collect(local.scan({ ...base, onUnreadable: (path, e) => problems.push([path, e]) }));
    expect(entries.map((e) => e.path).sort()).toEqual(['locked', 'open', 'open/a']);
    expect(problems.map(([x, e]) => [x, e.code, e.disposition])).toEqual([['locked', 'permission_denied', 'skip']]);
    const thrown = await collect(setup(files, deny).local.scan(base)).catch((e: unknown) => e);
    expect(isSyncError(thrown) && thrown.code === 'permission_denied').toBe(true);
  });

  it('does not trust a hash taken while the file was being written', async () => {
    const { fs, local } = setup({ '/r/growing.log': 'line 1\n', '/r/still.txt': 'still' }, (mem) => ({
      promises: mem.promises,
      createReadStream: ((path: string, o: unknown) => {
        if (path === '/r/growing.log') (mem as unknown as { appendFileSync: (p: string, d: string) => void }).appendFileSync(path, 'line 2\n');
        return mem.createReadStream(path, o as never);
      }) as FsModule['createReadStream'],
    }));
    const { entries } = await collect(local.scan({ ...base, hash: true }));
    expect(entries.find((e) => e.path === 'growing.log')).toMatchObject({ sha1: null, sizeBytes: 14 });
    expect(entries.find((e) => e.path === 'still.txt')?.sha1).toBe(sha1('still'));
    expect(await fs.promises.readFile('/r/growing.log', 'utf8')).toBe('line 1\nline 2\n');
  });
});
