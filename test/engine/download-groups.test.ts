/**
 * Small downloads a zip prefetch holds run in groups (engine/reconciler.ts, runGroup): one queue task of up to
 * DOWNLOAD_GROUP files and one commit call for them, each file still through the executor's own download. The engine
 * with the real Box adapter (zip downloads on) against box-server, one file worker thread, a real journal and disk:
 * the files land with Box's bytes and mtimes and are recorded as synced; a corrupted and a missing archive entry are
 * downloaded alone; a name the user takes while its group runs is a conflict with both versions kept, and the rest
 * of its group is committed.
 */
import * as nodeFs from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FileWorkerPool, type FileJob } from '../../src/local/file-workers.js';
import { DOWNLOAD_GROUP, TransferQueue, type QueueTask } from '../../src/engine/transfer-queue.js';
import { systemClock } from '../../src/ports/clock.js';
import { makeTempDir } from '../support/tmp.js';
import { makeBoxHarness, type BoxHarness } from './support/box-harness.js';
import { expectConverged } from './support/harness.js';
import { expectNothingToTransfer } from './support/worker-checks.js';

const FILES = 40;
const contentOf = (i: number): string => `file ${i}\n`.repeat(1 + (i % 5));
const mtimeOf = (i: number): string => `2021-05-${String(1 + (i % 28)).padStart(2, '0')}T08:00:00Z`;

let h: BoxHarness | undefined;
let pool: FileWorkerPool | undefined;
let scratch: Awaited<ReturnType<typeof makeTempDir>> | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await h?.close();
  await pool?.close();
  await scratch?.cleanup();
  h = undefined;
  pool = undefined;
  scratch = undefined;
});

describe('engine: small downloads from zip archives run in groups', () => {
  it('each file checked and committed alone: bad entries downloaded alone, a raced name a conflict, the rest synced', async () => {
    let local = '';
    let raced = false;
    pool = new FileWorkerPool({
      size: 1,
      minFiles: 0,
      beforePost: (job: FileJob) => {
        if (raced || job.op !== 'unzip' || job.commit?.rel !== 'docs/f5.txt') return;
        raced = true;
        nodeFs.writeFileSync(join(local, 'docs', 'f5.txt'), 'the user wrote this');
      },
    });
    scratch = await makeTempDir('boxsync-zip-scratch-');
    h = await makeBoxHarness({}, { zipDownloads: { scratchDir: scratch.dir, minFiles: 5 } }, pool);
    local = h.localPath;
    const docs = h.actor.createFolder(h.topId, 'docs');
    const ids: string[] = [];
    for (let i = 0; i < FILES; i++) ids.push(h.actor.uploadFile(docs.id, `f${i}.txt`, contentOf(i), { contentModifiedAt: mtimeOf(i) }).id);
    h.srv.control.zipFaults({ drop: ['f1.txt'], corrupt: ['f2.txt'] });
    const groups: number[] = [];
    const add = TransferQueue.prototype.add;
    vi.spyOn(TransferQueue.prototype, 'add').mockImplementation(function (this: TransferQueue, task: QueueTask) {
      if ((task.files ?? 1) > 1) groups.push(task.files!);
      return add.call(this, task);
    });
    const t0 = Date.now();
    const s = expectConverged(await h.run());

    // The archive's files ran in groups of at most DOWNLOAD_GROUP.
    expect(groups.length).toBeGreaterThanOrEqual(2);
    expect(Math.max(...groups)).toBe(DOWNLOAD_GROUP);
    expect(groups.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(FILES - 2);
    // The missing and the corrupted entry each came alone, and so did the raced file's Box version (the conflict's
    // next pass): nothing else did.
    const alone = h.srv.control
      .requests()
      .filter((r) => r.atMs >= t0 && r.method === 'GET' && /\/files\/[^/]+\/content$/.test(r.path))
      .map((r) => ids.indexOf(/\/files\/([^/]+)\/content$/.exec(r.path)![1]!));
    expect(alone.sort((a, b) => a - b)).toEqual([1, 2, 5]);
    expect(raced).toBe(true);
    expect(s.conflicts).toBe(1);
    const names = await h.list('docs');
    const copy = names.find((n) => n.startsWith('f5 (conflicted copy'));
    expect(copy, names.join(', ')).toBeDefined();
    expect([await h.read('docs/f5.txt'), await h.read(`docs/${copy!}`)].sort()).toEqual(['the user wrote this', contentOf(5)].sort());
    for (let i = 0; i < FILES; i++) {
      if (i === 5) continue;
      expect(await h.read(`docs/f${i}.txt`)).toBe(contentOf(i));
      expect((await stat(join(h.localPath, 'docs', `f${i}.txt`))).mtimeMs).toBe(Date.parse(mtimeOf(i)));
      expect(h.journal.getSynced(h.root.id, `docs/f${i}.txt` as never)?.sha1).toBeTruthy();
    }
    expect(names.filter((n) => n.includes('.boxsync-'))).toEqual([]);
    await expectNothingToTransfer(h);
  });
});

describe('TransferQueue: a group of downloads', () => {
  it('counts its files as queued work, runs, and counts nothing once done', async () => {
    const q = new TransferQueue({ concurrency: 2, clock: systemClock });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const root = 'r1' as never;
    const done = q.add({ root, path: 'a' as never, direction: 'down', totalBytes: 160, files: 16, run: async (onProgress) => (await gate, onProgress({ doneBytes: 160, totalBytes: 160 }), { status: 'done', result: { bytes: 160 } }) });
    expect(q.queued(root).ops).toBe(16);
    release();
    expect((await done).status).toBe('done');
    expect(q.queued(root)).toEqual({ ops: 0, bytes: 0 });
  });
});
