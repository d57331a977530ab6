import * as nodeFs from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isSyncError } from '../../src/core/errors.js';
import { asRelPath } from '../../src/core/model.js';
import type { FsModule } from '../../src/local/fs-module.js';
import { createLocalFs } from '../../src/local/local-fs.js';
import { createLocalTrash } from '../../src/local/local-trash.js';
import { QuickGate } from '../../src/local/quick-fs.js';
import { openTempFile } from '../../src/local/temp-file.js';
import { isTempName } from '../../src/local/temp-name.js';
import { makeTempDir } from '../support/tmp.js';
import { errnoError, withFaults } from './faulty-fs.js';

const FD_CALLS = ['open', 'write', 'ftruncate', 'close', 'fsync'] as const;

/** node:fs with the temp file's calls counted by form; `fault(name)` makes that call fail with the errno it returns. */
function counted(fault: (name: string) => string | undefined = () => undefined, maxWrite = Infinity) {
  const calls: string[] = [];
  const fs: Record<string, unknown> = { ...nodeFs };
  for (const name of FD_CALLS) {
    const viaPool = (nodeFs as unknown as Record<string, (...a: unknown[]) => void>)[name]!;
    fs[name] = (...a: unknown[]) => {
      calls.push(`${name} (pool)`);
      const errno = fault(name);
      if (errno !== undefined) return (a[a.length - 1] as (e: Error) => void)(errnoError(errno, name, a[0]));
      viaPool(...a);
    };
    if (name === 'fsync') continue;
    const sync = (nodeFs as unknown as Record<string, (...a: unknown[]) => unknown>)[`${name}Sync`]!;
    fs[`${name}Sync`] = (...a: unknown[]) => {
      calls.push(name);
      const errno = fault(name);
      if (errno !== undefined) throw errnoError(errno, name, a[0]);
      // A short write, as write(2) may make: (fd, buffer, offset, length, position).
      if (name === 'write') return sync(a[0], a[1], a[2], Math.min(a[3] as number, maxWrite), a[4]);
      return sync(...a);
    };
  }
  return { calls, fs: fs as unknown as FsModule };
}

describe('the temp file of a download', () => {
  let tmp: Awaited<ReturnType<typeof makeTempDir>>;
  beforeEach(async () => {
    tmp = await makeTempDir('temp-file-');
  });
  afterEach(async () => {
    await tmp.cleanup();
  });

  it('on a quick local disk opens, writes, truncates and closes synchronously; the fsync goes through the pool', async () => {
    const { calls, fs } = counted();
    const path = join(tmp.dir, 't');
    const f = await openTempFile(fs, new QuickGate(true, 0.5), path, 'dir/t.txt');
    await f.write(Buffer.from('discarded'));
    await f.truncate();
    const big = Buffer.alloc(1024 * 1024, 7);
    await f.write(Buffer.from('hello '));
    await f.write(big);
    await f.syncAndClose();
    await f.close();
    // Buffer.equals: a deep toEqual of a MiB compares it element by element for seconds.
    expect(nodeFs.readFileSync(path).equals(Buffer.concat([Buffer.from('hello '), big]))).toBe(true);
    expect(calls).toEqual(['open', 'write', 'ftruncate', 'write', 'write', 'fsync (pool)', 'close']);
  });

  it('goes through the pool while the gate is off, with the same bytes', async () => {
    const { calls, fs } = counted();
    const path = join(tmp.dir, 't');
    const f = await openTempFile(fs, new QuickGate(false, 0.5), path, 'dir/t.txt');
    await f.write(Buffer.from('abc'));
    await f.truncate();
    await f.write(Buffer.from('xyz'));
    await f.syncAndClose();
    expect(nodeFs.readFileSync(path, 'utf8')).toBe('xyz');
    expect(calls).toEqual(['open (pool)', 'write (pool)', 'ftruncate (pool)', 'write (pool)', 'fsync (pool)', 'close (pool)']);
  });

  it('writes the rest of a chunk after a short write, in order', async () => {
    const { calls, fs } = counted(undefined, 3);
    const path = join(tmp.dir, 't');
    const f = await openTempFile(fs, new QuickGate(true, 0.5), path, 'dir/t.txt');
    await f.write(Buffer.from('0123456789'));
    await f.write(Buffer.from('ab'));
    await f.syncAndClose();
    expect(nodeFs.readFileSync(path, 'utf8')).toBe('0123456789ab');
    expect(calls.filter((c) => c === 'write')).toHaveLength(5);
  });

  it('ends with local_io when a write takes none of the bytes, instead of asking again for ever', async () => {
    const { calls, fs } = counted(undefined, 0);
    const f = await openTempFile(fs, new QuickGate(true, 0.5), join(tmp.dir, 't'), 'dir/t.txt');
    const e = await f.write(Buffer.from('abc')).catch((x: unknown) => x);
    expect(isSyncError(e) && e.code === 'local_io' && e.disposition === 'retry').toBe(true);
    expect((e as Error).message).toContain('dir/t.txt');
    expect(calls.filter((c) => c === 'write')).toHaveLength(1);
    await f.close();
  });

  it('never opens a file that exists (O_EXCL): the existing file is untouched', async () => {
    const path = join(tmp.dir, 't');
    nodeFs.writeFileSync(path, 'user data');
    const e = await openTempFile(nodeFs, new QuickGate(true, 0.5), path, 'dir/t.txt').catch((x: unknown) => x);
    expect(isSyncError(e) && e.code === 'local_changed').toBe(true);
    expect(nodeFs.readFileSync(path, 'utf8')).toBe('user data');
  });

  it('turns a full disk while writing into disk_full (fatal) naming the file, and closes once after a failed fsync', async () => {
    const full = counted((name) => (name === 'write' ? 'ENOSPC' : undefined));
    const f = await openTempFile(full.fs, new QuickGate(true, 0.5), join(tmp.dir, 'full'), 'dir/big.iso');
    const e = await f.write(Buffer.from('x')).catch((x: unknown) => x);
    expect(isSyncError(e) && e.code === 'disk_full' && e.disposition === 'fatal').toBe(true);
    expect((e as Error).message).toContain('dir/big.iso');
    await f.close();
    await f.close();
    expect(full.calls.filter((c) => c.startsWith('close'))).toHaveLength(1);

    const eio = counted((name) => (name === 'fsync' ? 'EIO' : undefined));
    const g = await openTempFile(eio.fs, new QuickGate(true, 0.5), join(tmp.dir, 'eio'), 'dir/x');
    await g.write(Buffer.from('y'));
    const s = await g.syncAndClose().catch((x: unknown) => x);
    expect(isSyncError(s) && s.code === 'local_io' && s.disposition === 'retry').toBe(true);
    await g.close();
    expect(eio.calls.filter((c) => c.startsWith('close'))).toEqual(['close']);
  });

  it('without the file-descriptor calls (a wrapper of promises only), writes through a FileHandle', async () => {
    const fs = withFaults(nodeFs, () => undefined);
    const path = join(tmp.dir, 'h');
    const f = await openTempFile(fs, new QuickGate(true, 0.5), path, 'dir/h');
    await f.write(Buffer.from('first'));
    await f.truncate();
    await f.write(Buffer.from('second'));
    await f.syncAndClose();
    await f.close();
    expect(nodeFs.readFileSync(path, 'utf8')).toBe('second');
    expect(fs.calls.map((c) => c.method)).toEqual(['open']);
  });

  it('LocalFs.openTemp makes a temp name in the target\'s folder, and refuses one through a symlink out of the root', async () => {
    const root = join(tmp.dir, 'root');
    nodeFs.mkdirSync(join(root, 'd'), { recursive: true });
    nodeFs.mkdirSync(join(tmp.dir, 'outside'));
    nodeFs.symlinkSync(join(tmp.dir, 'outside'), join(root, 'out'));
    const local = createLocalFs({ rootPath: root, fs: nodeFs, trash: createLocalTrash({ mode: 'state', stateDir: join(tmp.dir, 'state'), fs: nodeFs }) });
    const f = await local.openTemp(asRelPath('d/file.txt'));
    await f.write(Buffer.from('bytes'));
    await f.syncAndClose();
    expect(f.path.startsWith(join(root, 'd') + '/')).toBe(true);
    expect(isTempName(f.path.slice(f.path.lastIndexOf('/') + 1))).toBe(true);
    const entry = await local.commitTemp(f.path, asRelPath('d/file.txt'), { state: 'absent' }, undefined, { synced: true });
    expect(entry).toMatchObject({ kind: 'file', sizeBytes: 5 });
    expect(nodeFs.readFileSync(join(root, 'd', 'file.txt'), 'utf8')).toBe('bytes');
    const e = await local.openTemp(asRelPath('out/escape.txt')).catch((x: unknown) => x);
    expect(isSyncError(e)).toBe(true);
    expect(nodeFs.readdirSync(join(tmp.dir, 'outside'))).toEqual([]);
  });
});
