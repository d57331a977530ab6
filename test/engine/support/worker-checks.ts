/**
 * The harness and checks of the engine tests of the file worker threads' commits (engine-worker-replace.test.ts):
 * the next process transfers nothing; a raced name became a conflict with both versions kept, on both sides.
 */
import { expect } from 'vitest';
import { FileWorkerPool, type FileJob } from '../../../src/local/file-workers.js';
import { closedAfterEach } from '../../support/closed-after-each.js';
import { makeBoxHarness, type BoxHarness } from './box-harness.js';
import { expectConverged } from './harness.js';

/** A Box harness whose downloads go through one file worker thread (closed after each test). */
export const workerHarness = closedAfterEach(async (beforePost?: (job: FileJob) => void) => {
  const pool = new FileWorkerPool({ size: 1, minFiles: 0, ...(beforePost ? { beforePost } : {}) });
  const h = await makeBoxHarness({}, {}, pool);
  const close = h.close.bind(h);
  h.close = async () => {
    await close();
    await pool.close();
  };
  return h;
});

/** A new engine on the same state finds everything in sync: nothing is transferred. */
export async function expectNothingToTransfer(h: BoxHarness): Promise<void> {
  const t0 = Date.now();
  await h.restart();
  const again = expectConverged(await h.run());
  expect(again.downloadedBytes + again.uploadedBytes).toBe(0);
  expect(h.transfers(t0)).toEqual({ downloads: 0, uploads: 0, moves: 0 });
}

/** `name` (at the top) and its conflict copy hold `contents` between them, in the mirror and on Box. */
export async function expectBothKept(h: BoxHarness, name: string, contents: readonly string[]): Promise<void> {
  const stem = name.slice(0, name.lastIndexOf('.'));
  const names = await h.list();
  const copy = names.find((n) => n.startsWith(`${stem} (conflicted copy`));
  expect(copy, names.join(', ')).toBeDefined();
  expect([await h.read(name), await h.read(copy!)].sort()).toEqual([...contents].sort());
  expect(h.actor.listFolder(h.topId).map((e) => e.name).sort()).toEqual([name, copy!].sort());
}
