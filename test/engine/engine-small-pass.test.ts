/**
 * A small pass's downloads written on the main thread (src/local/file-workers.ts smallPass, config
 * `http.fileWorkersMinFiles`; the engine announces the pass's planned downloads to LocalFs.warmUp), over HTTP to
 * box-server: a first mirror of a few small files starts no file worker thread and lands whole, with Box's mtimes;
 * a later pass of SMALL_PASS_FILES files starts the threads, which write and commit them.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileWorkerPool, SMALL_PASS_FILES, type WorkerTrace } from '../../src/local/file-workers.js';
import { closedAfterEach } from '../support/closed-after-each.js';
import { makeBoxHarness } from './support/box-harness.js';
import { expectConverged } from './support/harness.js';

const harness = closedAfterEach(async (onTrace: (t: WorkerTrace) => void) => {
  const pool = new FileWorkerPool({ size: 1, onTrace });
  const h = await makeBoxHarness({}, {}, pool);
  const close = async (): Promise<void> => {
    await h.close();
    await pool.close();
  };
  return { h, pool, close };
});

describe('a small pass without the file worker threads', () => {
  it('a first mirror of 20 small files starts no thread; a pass of SMALL_PASS_FILES files has them written by the threads', async () => {
    const traces: WorkerTrace[] = [];
    const { h, pool } = await harness((t) => traces.push(t));
    for (let i = 0; i < 20; i++) h.actor.uploadFile(h.topId, `f${i}.txt`, `file ${i}\n`, { contentModifiedAt: '2020-01-02T10:00:00Z' });
    expectConverged(await h.run());
    for (let i = 0; i < 20; i++) expect(await h.read(`f${i}.txt`)).toBe(`file ${i}\n`);
    expect((await stat(join(h.localPath, 'f7.txt'))).mtimeMs).toBe(Date.parse('2020-01-02T10:00:00Z'));
    expect(pool.threads).toBe(0);
    expect(traces).toEqual([]);

    const many = h.actor.createFolder(h.topId, 'many');
    for (let i = 0; i < SMALL_PASS_FILES; i++) h.actor.uploadFile(many.id, `g${i}.txt`, `many ${i}\n`);
    expectConverged(await h.run());
    for (const i of [0, SMALL_PASS_FILES - 1]) expect(await h.read(`many/g${i}.txt`)).toBe(`many ${i}\n`);
    expect(traces.some((t) => t.op === 'committed')).toBe(true);
  });
});
