import * as nodeFs from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { viaCallback, type FsModule } from '../../src/local/fs-module.js';
import { lstatOrUndefined } from '../../src/local/guard.js';
import { onLocalDisk, QUICK_SLOW_IN_A_ROW, QuickGate, quickFs } from '../../src/local/quick-fs.js';
import { makeTempDir } from '../support/tmp.js';

type TempDir = Awaited<ReturnType<typeof makeTempDir>>;

describe('QuickGate', () => {
  it('turns off after QUICK_SLOW_IN_A_ROW slow records in a row, never after fewer; a quick one resets the count', () => {
    const gate = new QuickGate(true, 0.025);
    const slowMs = 64 * 0.025 * 2;
    const quickMs = (64 * 0.025) / 4;
    for (let i = 0; i < 10; i++) {
      for (let k = 0; k < QUICK_SLOW_IN_A_ROW - 1; k++) gate.record(64, slowMs);
      gate.record(64, quickMs);
    }
    expect(gate.on).toBe(true);
    // The limit is per entry: a window of one is slow at a sixty-fourth of a full window's time.
    gate.record(1, slowMs / 64);
    gate.record(64, slowMs);
    expect(gate.on).toBe(true);
    gate.record(64, slowMs);
    expect(gate.on).toBe(false);
    gate.record(64, quickMs);
    expect(gate.on).toBe(false);
    expect(new QuickGate(false, 1).on).toBe(false);
  });

  it('with offForMs, is back on once that long has passed; set() decides outright', () => {
    let now = 1_000;
    const gate = new QuickGate(true, 0.5, { offForMs: 60_000, now: () => now });
    for (let k = 0; k < QUICK_SLOW_IN_A_ROW; k++) gate.record(1, 5);
    expect(gate.on).toBe(false);
    now += 59_999;
    expect(gate.on).toBe(false);
    now += 1;
    expect(gate.on).toBe(true);
    gate.set(false);
    now += 10 * 60_000;
    expect(gate.on).toBe(false);
    gate.set(true);
    expect(gate.on).toBe(true);
  });
});

describe('QuickGate.call', () => {
  it('answers in the same turn by default, and on the next turn with answerNextTurn (after work already queued), errors too', async () => {
    for (const answerNextTurn of [false, true]) {
      const gate = new QuickGate(true, 0.5, { answerNextTurn });
      const order: string[] = [];
      setImmediate(() => order.push('queued before'));
      const answered = new Promise<void>((resolve) =>
        gate.call(nodeFs.lstat as never, nodeFs.lstatSync as never, ['/'], (err: Error | null, st: nodeFs.Stats) => {
          order.push(err === null && st.isDirectory() ? 'answer' : 'wrong answer');
          resolve();
        }),
      );
      order.push('call returned');
      const failed = new Promise<string | undefined>((resolve) =>
        gate.call(nodeFs.lstat as never, nodeFs.lstatSync as never, ['/no/such/path'], (err: NodeJS.ErrnoException | null) => resolve(err?.code)),
      );
      await answered;
      expect(await failed).toBe('ENOENT');
      await new Promise((r) => setImmediate(r));
      expect(order).toEqual(answerNextTurn ? ['call returned', 'queued before', 'answer'] : ['answer', 'call returned', 'queued before']);
    }
  });
});

describe('onLocalDisk', () => {
  const withStatfs = (answer: (cb: (err: Error | null, st: { type: number }) => void) => void): FsModule =>
    ({ ...nodeFs, statfs: ((_p: string, cb: (err: Error | null, st: { type: number }) => void) => answer(cb)) as unknown as FsModule['statfs'] }) as FsModule;

  it('is true for a local file system type and false for a network one, a failed statfs, or none', async () => {
    expect(await onLocalDisk(withStatfs((cb) => cb(null, { type: 0xef53 })), '/x')).toBe(true);
    // Btrfs's magic number has its top bit set; some platforms report it as a negative number.
    expect(await onLocalDisk(withStatfs((cb) => cb(null, { type: 0x9123683e | 0 })), '/x')).toBe(true);
    expect(await onLocalDisk(withStatfs((cb) => cb(null, { type: 0x6969 })), '/x')).toBe(false); // NFS
    expect(await onLocalDisk(withStatfs((cb) => cb(null, { type: 0x65735546 })), '/x')).toBe(false); // FUSE
    expect(await onLocalDisk(withStatfs((cb) => cb(new Error('EIO'), { type: 0 })), '/x')).toBe(false);
    expect(await onLocalDisk({ promises: nodeFs.promises, createReadStream: nodeFs.createReadStream }, '/x')).toBe(false);
  });

  it('answers for a path not there yet with its nearest existing parent (a root a first run creates)', async () => {
    const asked: string[] = [];
    const fs = {
      ...nodeFs,
      statfs: ((p: string, cb: (err: NodeJS.ErrnoException | null, st: { type: number }) => void) => {
        asked.push(p);
        if (p === '/home/u') cb(null, { type: 0xef53 });
        else cb(Object.assign(new Error('ENOENT'), { code: 'ENOENT' }), { type: 0 });
      }) as unknown as FsModule['statfs'],
    } as FsModule;
    expect(await onLocalDisk(fs, '/home/u/Box/new')).toBe(true);
    expect(asked).toEqual(['/home/u/Box/new', '/home/u/Box', '/home/u']);
    // Nothing there at all: not a local disk (and the walk up ends at '/').
    asked.length = 0;
    expect(await onLocalDisk(fs, '/nowhere/x')).toBe(false);
    expect(asked).toEqual(['/nowhere/x', '/nowhere', '/']);
  });
});

describe('quickFs (real files)', () => {
  let tmp: TempDir;
  beforeEach(async () => {
    tmp = await makeTempDir('quick-fs-');
  });
  afterEach(async () => {
    await tmp.cleanup();
  });

  /** node:fs with every call counted by form; `slow(name)` makes that synchronous call take 1 ms. */
  function counted(slow: (name: string) => boolean = () => false) {
    const calls = { sync: [] as string[], pool: [] as string[] };
    const fs: Record<string, unknown> = { ...nodeFs };
    for (const name of ['lstat', 'stat', 'link', 'unlink', 'utimes', 'rename']) {
      const viaPool = (nodeFs as unknown as Record<string, (...a: unknown[]) => unknown>)[name]!;
      const sync = (nodeFs as unknown as Record<string, (...a: unknown[]) => unknown>)[`${name}Sync`]!;
      fs[name] = (...a: unknown[]) => {
        calls.pool.push(name);
        return viaPool(...a);
      };
      fs[`${name}Sync`] = (...a: unknown[]) => {
        calls.sync.push(name);
        // A call the disk answered, not the cache.
        if (slow(name)) for (const until = performance.now() + 1; performance.now() < until; );
        return sync(...a);
      };
    }
    return { calls, fs: fs as unknown as FsModule };
  }

  it('answers lstat, stat, link, unlink, utimes and rename synchronously while the gate is on, with the same results and errors', async () => {
    const { calls, fs } = counted();
    // A clock that never moves: every call is quick, however busy the machine (when the gate turns off: below).
    const quick = quickFs(fs, new QuickGate(true, 0.5, { now: () => 0 }));
    const a = join(tmp.dir, 'a');
    const b = join(tmp.dir, 'b');
    await nodeFs.promises.writeFile(a, 'hello');
    expect((await lstatOrUndefined(quick, a))?.size).toBe(5);
    expect(await lstatOrUndefined(quick, join(tmp.dir, 'missing'))).toBeUndefined();
    expect((await viaCallback(quick.stat, (p: string) => nodeFs.promises.stat(p), tmp.dir)).isDirectory()).toBe(true);
    await viaCallback(quick.link, (x: string, y: string) => nodeFs.promises.link(x, y), a, b);
    // link(2) refuses an existing target: the error reaches the caller as through the pool.
    await expect(viaCallback(quick.link, (x: string, y: string) => nodeFs.promises.link(x, y), a, b)).rejects.toMatchObject({ code: 'EEXIST' });
    await viaCallback(quick.utimes, (p: string, x: Date, y: Date) => nodeFs.promises.utimes(p, x, y), b, new Date(), new Date(1_600_000_000_000));
    expect(nodeFs.statSync(a).mtimeMs).toBe(1_600_000_000_000);
    await viaCallback(quick.unlink, (p: string) => nodeFs.promises.unlink(p), a);
    await viaCallback(quick.rename, (x: string, y: string) => nodeFs.promises.rename(x, y), b, a);
    expect(nodeFs.readFileSync(a, 'utf8')).toBe('hello');
    expect(nodeFs.existsSync(b)).toBe(false);
    expect(calls.pool).toEqual([]);
    expect(calls.sync).toEqual(['lstat', 'lstat', 'stat', 'link', 'link', 'utimes', 'unlink', 'rename']);
  });

  it('goes through the pool while the gate is off, and turns it off after QUICK_SLOW_IN_A_ROW slow calls', async () => {
    const { calls, fs } = counted((name) => name === 'lstat');
    const gate = new QuickGate(true, 0.5);
    const quick = quickFs(fs, gate);
    const a = join(tmp.dir, 'a');
    await nodeFs.promises.writeFile(a, 'x');
    for (let i = 0; i < QUICK_SLOW_IN_A_ROW + 2; i++) expect((await lstatOrUndefined(quick, a))?.size).toBe(1);
    expect(gate.on).toBe(false);
    expect(calls.sync).toEqual(Array(QUICK_SLOW_IN_A_ROW).fill('lstat'));
    expect(calls.pool).toEqual(['lstat', 'lstat']);
    expect(await lstatOrUndefined(quickFs(fs, new QuickGate(false, 0.5)), join(tmp.dir, 'missing'))).toBeUndefined();
    expect(calls.pool).toHaveLength(3);
  });

  it('leaves a module without synchronous forms as it is', () => {
    const plain: FsModule = { promises: nodeFs.promises, createReadStream: nodeFs.createReadStream, lstat: nodeFs.lstat };
    const quick = quickFs(plain, new QuickGate(true, 0.5));
    expect(quick.lstat).toBe(nodeFs.lstat);
    expect(quick.stat).toBeUndefined();
  });
});
