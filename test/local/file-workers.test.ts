/**
 * The file worker threads (src/local/file-workers.ts, worker-temp-file.ts; config `http.fileWorkers`) on real files
 * in a temp dir: a temp file written by a worker holds what the main thread's would, a zip entry is checked and
 * written by the worker, a worker that dies with a job in flight fails that one file with a clear `file_worker`
 * error (retry) and the next file is written by a new thread, a worker that cannot start leaves the work to the
 * main thread, a job with no answer ends by its bound, and close() ends the threads.
 */
import { createHash } from 'node:crypto';
import * as nodeFs from 'node:fs';
import { mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { isSyncError } from '../../src/core/errors.js';
import { asRelPath } from '../../src/core/model.js';
import { FileWorkerPool, MAX_DEATHS, SMALL_PASS_BYTES, SMALL_PASS_FILES, WORKER_CODE, type FileJob } from '../../src/local/file-workers.js';
import { createLocalFs } from '../../src/local/local-fs.js';
import { createLocalTrash } from '../../src/local/local-trash.js';
import { FLUSH_BYTES } from '../../src/local/worker-temp-file.js';
import { WORKER_GC_CODE, WORKER_GC_IDLE_MS } from '../../src/local/worker-gc.js';
import { silentLogger } from '../../src/logger.js';
import type { LocalFs, TempFile } from '../../src/ports/local-fs.js';
import { makeTempDir } from '../support/tmp.js';
import { waitFor } from '../support/wait.js';

const sha1 = (b: Buffer): string => createHash('sha1').update(b).digest('hex');

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

async function setup(opts: ConstructorParameters<typeof FileWorkerPool>[0] = {}): Promise<{ dir: string; root: string; pool: FileWorkerPool; fs: LocalFs; plain: LocalFs }> {
  const tmp = await makeTempDir('boxsync-file-workers-');
  const root = join(tmp.dir, 'root');
  await mkdir(root);
  const pool = new FileWorkerPool({ size: 2, ...opts });
  cleanup.push(tmp.cleanup, () => pool.close());
  const trash = createLocalTrash({ mode: 'state', stateDir: join(tmp.dir, 'state'), fs: nodeFs, logger: silentLogger });
  const fs = createLocalFs({ rootPath: root, fs: nodeFs, trash, logger: silentLogger, fileWorkers: pool });
  const plain = createLocalFs({ rootPath: root, fs: nodeFs, trash, logger: silentLogger });
  return { dir: tmp.dir, root, pool, fs, plain };
}

/** What the executor does with a download's temp file: write, fsync and close, put it in place with Box's mtime. */
async function download(fs: LocalFs, path: string, chunks: readonly Buffer[], mtimeMs = Date.parse('2021-05-06T07:08:09Z')): Promise<void> {
  const rel = asRelPath(path);
  const file = await fs.openTemp(rel);
  try {
    for (const c of chunks) await file.write(c);
    await file.syncAndClose();
  } catch (e) {
    await file.close();
    await fs.discardTemp(file.path);
    throw e;
  }
  await fs.commitTemp(file.path, rel, { state: 'absent' }, mtimeMs, { synced: true });
}

/** A one-entry zip archive (deflated), and where its entry is. */
async function zipOf(path: string, name: string, data: Buffer): Promise<{ offset: number; compressedSize: number }> {
  const body = deflateRawSync(data);
  const header = Buffer.alloc(30);
  header.writeUInt32LE(0x04034b50, 0);
  header.writeUInt16LE(20, 4);
  header.writeUInt16LE(8, 8);
  header.writeUInt32LE(body.length, 18);
  header.writeUInt32LE(data.length, 22);
  header.writeUInt16LE(Buffer.byteLength(name), 26);
  const lead = Buffer.from('some bytes before the entry');
  await writeFile(path, Buffer.concat([lead, header, Buffer.from(name), body]));
  return { offset: lead.length, compressedSize: body.length };
}

describe('file worker threads', () => {
  it('a temp file written by a worker holds what the main thread writes: small, empty, and past FLUSH_BYTES', async () => {
    const { root, fs, plain, pool } = await setup();
    const big = Buffer.alloc(FLUSH_BYTES * 3 + 17, 7);
    const cases: [string, Buffer[]][] = [
      ['small.txt', [Buffer.from('hello '), Buffer.from('world\n')]],
      ['empty.txt', []],
      ['big.bin', [big.subarray(0, 1000), big.subarray(1000, FLUSH_BYTES + 5), big.subarray(FLUSH_BYTES + 5)]],
    ];
    for (const [name, chunks] of cases) {
      await download(fs, `w-${name}`, chunks);
      await download(plain, `m-${name}`, chunks);
      const [w, m] = [await readFile(join(root, `w-${name}`)), await readFile(join(root, `m-${name}`))];
      expect(w.equals(m), name).toBe(true);
      expect(w.equals(Buffer.concat(chunks)), name).toBe(true);
      const [ws, ms] = [await stat(join(root, `w-${name}`)), await stat(join(root, `m-${name}`))];
      expect([ws.mtimeMs, ws.mode]).toEqual([ms.mtimeMs, ms.mode]);
    }
    expect(pool.threaded).toBe(true);
    expect((await readdir(root)).filter((n) => n.startsWith('.boxsync-tmp'))).toEqual([]);
  });

  it('a download Box lists as bigger than a worker job has its temp file on disk from the start; a small one is gathered', async () => {
    const { root, fs } = await setup();
    const big = await fs.openTemp(asRelPath('big.bin'), { expectedBytes: FLUSH_BYTES + 1 });
    const small = await fs.openTemp(asRelPath('small.txt'), { expectedBytes: 10 });
    try {
      await big.write(Buffer.from('first bytes'));
      await small.write(Buffer.from('first'));
      const temps = (await readdir(root)).filter((n) => n.startsWith('.boxsync-tmp'));
      // Only the big one is on disk while its download runs (a trickling download shows its temp file).
      expect(temps).toEqual([big.path.slice(root.length + 1)]);
      expect(big.fillFromArchive).toBeUndefined();
      expect(small.fillFromArchive).toBeDefined();
    } finally {
      for (const f of [big, small]) {
        await f.close();
        await fs.discardTemp(f.path);
      }
    }
    expect((await readdir(root)).filter((n) => n.startsWith('.boxsync-tmp'))).toEqual([]);
  });

  it('a zip entry is read, inflated, checked and written by the worker; a bad entry writes nothing and says why', async () => {
    const { dir, root, fs } = await setup();
    const data = Buffer.from('zip entry bytes\n'.repeat(500));
    const archive = join(dir, 'a.zip');
    const at = await zipOf(archive, 'x.txt', data);
    const entry = { archivePath: archive, localHeaderOffset: at.offset, compressedSize: at.compressedSize, method: 8, sizeBytes: data.length, sha1: sha1(data) };
    const fill = async (path: string, e: typeof entry): Promise<{ file: TempFile; got: Awaited<ReturnType<NonNullable<TempFile['fillFromArchive']>>> }> => {
      const file = await fs.openTemp(asRelPath(path));
      expect(file.fillFromArchive).toBeDefined();
      return { file, got: await file.fillFromArchive!(e) };
    };
    const ok = await fill('x.txt', entry);
    expect(ok.got).toEqual({ sha1: sha1(data), sizeBytes: data.length });
    await fs.commitTemp(ok.file.path, asRelPath('x.txt'), { state: 'absent' }, undefined, { synced: true });
    expect((await readFile(join(root, 'x.txt'))).equals(data)).toBe(true);

    const bad: [Partial<typeof entry>, RegExp][] = [
      [{ sha1: sha1(Buffer.from('other')) }, /SHA-1/],
      [{ sizeBytes: data.length - 1 }, /bytes|output length/i],
      [{ localHeaderOffset: 0 }, /no local file header/],
      [{ method: 12 }, /compression method 12/],
      [{ compressedSize: data.length * 3 }, /compressed bytes/],
      [{ archivePath: join(dir, 'gone.zip') }, /ENOENT|no such file/],
    ];
    for (const [change, why] of bad) {
      const r = await fill('y.txt', { ...entry, ...change });
      expect(r.got, JSON.stringify(change)).toEqual({ unusable: expect.stringMatching(why) });
      // Nothing written: the temp file is still new, and takes a download as before.
      expect(await readdir(root)).toEqual(['x.txt']);
      await r.file.write(Buffer.from('fallback'));
      await r.file.syncAndClose();
      await fs.discardTemp(r.file.path);
    }
  });

  it('the jobs of one turn reach the thread in one message and its answers of one turn come back in one; each job ends as it would alone', async () => {
    // The worker's own code, with each answer tagged by how many messages the thread had received and sent by then.
    const counted = `
const __wt = require('node:worker_threads');
let __in = 0;
let __out = 0;
__wt.parentPort.on('message', () => { __in += 1; });
const __post = __wt.parentPort.postMessage.bind(__wt.parentPort);
__wt.parentPort.postMessage = (m) => {
  __out += 1;
  const tag = (a) => (a && a.id !== undefined ? { ...a, messagesIn: __in, messagesOut: __out } : a);
  __post(Array.isArray(m) ? m.map(tag) : tag(m));
};
${WORKER_CODE}`;
    const { dir, pool } = await setup({ size: 1, workerCode: counted });
    const archive = join(dir, 'a.zip');
    const data = Buffer.from('one entry, many files\n'.repeat(50));
    const at = await zipOf(archive, 'x.txt', data);
    const job = (name: string, sha: string): FileJob => ({ op: 'unzip', path: join(dir, name), fd: null, archive, offset: at.offset, compressedSize: at.compressedSize, method: 8, size: data.length, sha1: sha });
    const good = Array.from({ length: 20 }, (_, i) => pool.run(job(`good-${i}`, sha1(data))));
    const bad = Array.from({ length: 20 }, (_, i) => pool.run(job(`bad-${i}`, sha1(Buffer.from('other')))));
    type Tagged = { messagesIn: number; messagesOut: number; unusable?: string; sha1?: string; fd: number | null };
    const goodAnswers = (await Promise.all(good)) as unknown as Tagged[];
    const badAnswers = (await Promise.all(bad)) as unknown as Tagged[];
    // All 40 jobs came in one message; the 20 refused entries (answered at once) went back in one message.
    for (const a of [...goodAnswers, ...badAnswers]) expect(a.messagesIn).toBe(1);
    expect(new Set(badAnswers.map((a) => a.messagesOut)).size).toBe(1);
    for (const a of badAnswers) expect(a.unusable).toMatch(/SHA-1/);
    for (const [i, a] of goodAnswers.entries()) {
      expect(a.sha1).toBe(sha1(data));
      expect((await readFile(join(dir, `good-${i}`))).equals(data)).toBe(true);
    }
    // A refused entry wrote nothing.
    expect((await readdir(dir)).filter((n) => n.startsWith('bad-'))).toEqual([]);
  });

  it('a put job moves bytes that own their whole ArrayBuffer to a ready thread: the sender sees none of them after', async () => {
    const { dir, pool, fs } = await setup({ size: 1 });
    // The first job of a thread is copied (the thread has not said it is ready): the bytes stay with the sender.
    const early = new Uint8Array(Buffer.from('written before the thread was ready'));
    await pool.run({ op: 'put', path: join(dir, 'early'), fd: null, position: 0, data: early, sync: true, close: true });
    expect(Buffer.from(early).toString()).toBe('written before the thread was ready');
    const bytes = Buffer.alloc(200 * 1024, 'moved ');
    const data = new Uint8Array(bytes);
    const done = pool.run({ op: 'put', path: join(dir, 'moved'), fd: null, position: 0, data, sync: true, close: true });
    // Moved as it was posted: the sender's view and its ArrayBuffer are empty (detached) from then on.
    expect(data.byteLength).toBe(0);
    expect(data.buffer.byteLength).toBe(0);
    await done;
    expect((await readFile(join(dir, 'moved'))).equals(bytes)).toBe(true);
    // The same through a download's temp file: the chunks given to write() stay the caller's, whole.
    const chunks = [Buffer.from('first chunk, '), Buffer.alloc(5000, 'x'), Buffer.from(' last')];
    await download(fs, 'chunks.txt', chunks);
    expect(Buffer.concat(chunks).toString()).toBe(`first chunk, ${'x'.repeat(5000)} last`);
    expect(await readFile(join(dir, 'root', 'chunks.txt'), 'utf8')).toBe(`first chunk, ${'x'.repeat(5000)} last`);
  });

  it('a put job whose bytes share their ArrayBuffer (a pooled Buffer, a slice of a bigger one) is copied: every owner keeps its bytes', async () => {
    const { dir, pool } = await setup({ size: 1 });
    await pool.run({ op: 'put', path: join(dir, 'warm'), fd: null, position: 0, data: new Uint8Array([1]), sync: true, close: true });
    // Buffer.from of a short string takes a slice of Buffer's shared pool, beside other Buffers of the same pool.
    const before = Buffer.from('a neighbour in the pool');
    const pooled = Buffer.from('pooled bytes');
    const after = Buffer.from('another neighbour');
    expect(pooled.buffer).toBe(before.buffer);
    expect(pooled.byteLength).toBeLessThan(pooled.buffer.byteLength);
    await pool.run({ op: 'put', path: join(dir, 'pooled'), fd: null, position: 0, data: pooled, sync: true, close: true });
    expect([before.toString(), pooled.toString(), after.toString()]).toEqual(['a neighbour in the pool', 'pooled bytes', 'another neighbour']);
    expect(await readFile(join(dir, 'pooled'), 'utf8')).toBe('pooled bytes');
    // A view of the middle of a bigger ArrayBuffer (as a socket's chunk can be): copied, the rest untouched.
    const big = Buffer.alloc(64 * 1024, 'b');
    big.write('middle', 1000);
    const slice = big.subarray(1000, 1006);
    await pool.run({ op: 'put', path: join(dir, 'slice'), fd: null, position: 0, data: slice, sync: true, close: true });
    expect(slice.toString()).toBe('middle');
    expect(big.byteLength).toBe(64 * 1024);
    expect(big.subarray(0, 3).toString()).toBe('bbb');
    expect(await readFile(join(dir, 'slice'), 'utf8')).toBe('middle');
  });

  it(`a worker collects its own garbage (a forced full collection) once its heap grew and it had no message for ${WORKER_GC_IDLE_MS} ms; without that code it is never forced`, async () => {
    // A thread with the worker's collection code and a job loop that makes garbage; it answers with the forced full
    // collections it has seen (perf_hooks 'gc' entries flagged forced: what gc() does, V8's own never are).
    const code = (gcCode: string): string => `
const { parentPort } = require('node:worker_threads');
const { PerformanceObserver, constants } = require('node:perf_hooks');
let forced = 0;
new PerformanceObserver((list) => { for (const e of list.getEntries()) if (e.detail.flags & constants.NODE_PERFORMANCE_GC_FLAGS_FORCED) forced++; }).observe({ entryTypes: ['gc'] });
${gcCode}
let keep = [];
parentPort.on('message', (m) => {
  if (m.op === 'close') {
    keep.push(new Array(20000).fill(m.id));
    if (keep.length > 100) keep = [];
  }
  parentPort.postMessage({ id: m.id, fd: null, forced });
});
parentPort.postMessage({ ready: true });
`;
    const forcedAfter = async (gcCode: string): Promise<{ busy: number; idle: number }> => {
      const { pool } = await setup({ size: 1, workerCode: code(gcCode) });
      const ask = async (op: 'close' | 'ask'): Promise<number> => ((await pool.run({ op, path: '/nowhere', fd: 0 } as FileJob)) as { forced?: number }).forced ?? 0;
      // Busy: messages back to back (each well within the idle time of the one before), garbage growing.
      let busy = 0;
      for (let i = 0; i < 800; i++) busy = await ask('close');
      // Idle: one question each 2 idle periods (each lets the timer fire), until a collection was seen or the bound ends.
      const idle = await waitFor(async () => ((await ask('ask')) > busy ? await ask('ask') : false), { timeoutMs: 10 * WORKER_GC_IDLE_MS, intervalMs: 2 * WORKER_GC_IDLE_MS, what: 'an idle collection' }).catch(() => busy);
      expect(pool.threaded).toBe(true);
      return { busy, idle };
    };
    const withCode = await forcedAfter(WORKER_GC_CODE);
    expect(withCode.idle).toBeGreaterThan(withCode.busy);
    const without = await forcedAfter('');
    expect(without).toEqual({ busy: 0, idle: 0 });
  });

  it('a worker that dies with a job in flight fails that file with a clear file_worker error; the next file is written by a new thread', async () => {
    let kill = false;
    const { root, fs, pool } = await setup({
      size: 1,
      beforePost: (_job: FileJob, post) => {
        if (!kill) return;
        kill = false;
        // Ends the thread before it reads the job: the job is in flight on a thread that is gone.
        post({ op: 'exit', code: 7 });
      },
    });
    await download(fs, 'first.txt', [Buffer.from('one')]);
    kill = true;
    const err = await download(fs, 'second.txt', [Buffer.from('two')]).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isSyncError(err) && err.code === 'file_worker' && err.disposition === 'retry').toBe(true);
    expect((err as Error).message).toMatch(/second\.txt.*exit code 7.*tried again/);
    expect((await readdir(root)).sort()).toEqual(['first.txt']);
    // The retry of that file: a new thread writes it.
    await download(fs, 'second.txt', [Buffer.from('two')]);
    expect(await readFile(join(root, 'second.txt'), 'utf8')).toBe('two');
    expect(pool.threaded).toBe(true);
  });

  it(`after ${MAX_DEATHS} deaths the pool writes on the main thread, with the same result`, async () => {
    const { root, fs, pool } = await setup({ size: 1, beforePost: (_job, post) => post({ op: 'exit', code: 3 }) });
    for (let i = 0; i < MAX_DEATHS; i++) {
      // The first job of each thread: it is ready (it said so) before it reads the exit, which comes first.
      await expect(download(fs, `f${i}.txt`, [Buffer.from(`f${i}`)])).rejects.toMatchObject({ code: 'file_worker' });
    }
    expect(pool.threaded).toBe(false);
    await download(fs, 'after.txt', [Buffer.from('after')]);
    expect(await readFile(join(root, 'after.txt'), 'utf8')).toBe('after');
    expect((await readdir(root)).sort()).toEqual(['after.txt']);
  });

  it('a worker that cannot start leaves its jobs and all later ones to the main thread', async () => {
    const { root, fs, pool } = await setup({ workerCode: 'throw new Error("this thread cannot start")' });
    await download(fs, 'a.txt', [Buffer.from('a')]);
    expect(pool.threaded).toBe(false);
    await download(fs, 'b.txt', [Buffer.from('b')]);
    expect([await readFile(join(root, 'a.txt'), 'utf8'), await readFile(join(root, 'b.txt'), 'utf8')]).toEqual(['a', 'b']);
  });

  it('threads with no job are ended after idleMs and started again by the next job (not counted as deaths)', async () => {
    const { root, fs, pool } = await setup({ size: 1, idleMs: 50 });
    for (let i = 0; i < MAX_DEATHS + 2; i++) {
      await download(fs, `f${i}.txt`, [Buffer.from(`f${i}`)]);
      await waitFor(() => pool.threads === 0, { timeoutMs: 10_000, what: 'the idle thread ended' });
    }
    expect(pool.threaded).toBe(true);
    expect((await readdir(root)).sort()).toEqual([...Array(MAX_DEATHS + 2).keys()].map((i) => `f${i}.txt`).sort());
  });

  it('LocalFs.warmUp starts the threads before the first job, which then runs on them; unused, they end after idleMs', async () => {
    const { root, fs, pool } = await setup({ size: 2, idleMs: 300 });
    expect(pool.threads).toBe(0);
    fs.warmUp!();
    expect(pool.threads).toBe(2);
    // Again: no more threads than the pool's size.
    fs.warmUp!();
    expect(pool.threads).toBe(2);
    await download(fs, 'a.txt', [Buffer.from('warm')]);
    expect(pool.threads).toBe(2);
    expect(await readFile(join(root, 'a.txt'), 'utf8')).toBe('warm');
    await waitFor(() => pool.threads === 0, { timeoutMs: 10_000, what: 'the idle threads ended' });
    // Warmed and never given a job: ended all the same.
    fs.warmUp!();
    expect(pool.threads).toBe(2);
    await waitFor(() => pool.threads === 0, { timeoutMs: 10_000, what: 'the unused threads ended' });
    expect(pool.threaded).toBe(true);
  });

  it('a small pass (warmUp with a few small files) starts no thread: its files are written on the main thread; a bigger or unknown one starts them', async () => {
    const { root, fs, pool } = await setup({ size: 2, idleMs: 300 });
    const small = Array.from({ length: SMALL_PASS_FILES - 1 }, () => ({ sizeBytes: 1000 }));
    fs.warmUp!(small);
    expect(pool.threads).toBe(0);
    expect(pool.threaded).toBe(false);
    // Written here: no thread's fill, and none started by the download.
    const here = await fs.openTemp(asRelPath('probe.txt'), { expectedBytes: 5 });
    expect(here.fillFromArchive).toBeUndefined();
    await here.close();
    await fs.discardTemp(here.path);
    await download(fs, 'small.txt', [Buffer.from('small')]);
    expect(await readFile(join(root, 'small.txt'), 'utf8')).toBe('small');
    expect(pool.threads).toBe(0);
    // One file more than a small pass, or more bytes: the threads start, and the next temp file is theirs.
    fs.warmUp!([...small, { sizeBytes: 1 }]);
    expect(pool.threads).toBe(2);
    expect(pool.threaded).toBe(true);
    const there = await fs.openTemp(asRelPath('probe.txt'), { expectedBytes: 5 });
    expect(there.fillFromArchive).toBeTypeOf('function');
    await there.close();
    await fs.discardTemp(there.path);
    // A small pass while they still run uses them; once they ended, its files are written here again.
    fs.warmUp!([{ sizeBytes: 10 }]);
    expect(pool.threaded).toBe(true);
    await waitFor(() => pool.threads === 0, { timeoutMs: 10_000, what: 'the idle threads ended' });
    expect(pool.threaded).toBe(false);
    fs.warmUp!([{ sizeBytes: SMALL_PASS_BYTES + 1 }]);
    expect(pool.threads).toBe(2);
    await waitFor(() => pool.threads === 0, { timeoutMs: 10_000, what: 'the unused threads ended' });
    // No list (an adapter that announces nothing): as before, the threads start.
    fs.warmUp!();
    expect(pool.threads).toBe(2);
    fs.warmUp!([]);
    expect(pool.threaded).toBe(true);
  });

  it('minFiles 0 (config http.fileWorkersMinFiles): a pass of one small file starts the threads', async () => {
    const { fs, pool } = await setup({ size: 2, minFiles: 0 });
    fs.warmUp!([{ sizeBytes: 1 }]);
    expect(pool.threads).toBe(2);
    expect(pool.threaded).toBe(true);
  });

  it('a job with no answer fails by its bound instead of waiting for ever; close() ends the threads', async () => {
    const silent = "require('node:worker_threads').parentPort.on('message', () => {}); require('node:worker_threads').parentPort.postMessage({ ready: true });";
    const { fs, pool } = await setup({ size: 1, workerCode: silent, jobTimeoutMs: 300 });
    await expect(download(fs, 'slow.txt', [Buffer.from('x')])).rejects.toMatchObject({ code: 'file_worker', message: expect.stringMatching(/no answer/) });
    const pending = expect(pool.run({ op: 'close', path: '/nowhere', fd: 12345 })).rejects.toMatchObject({ code: 'file_worker', message: expect.stringMatching(/stopping/) });
    await pool.close();
    await pending;
    await expect(pool.run({ op: 'close', path: '/nowhere', fd: 12345 })).rejects.toMatchObject({ code: 'file_worker' });
  });
});
