/**
 * The engine with downloads that replace synced files committed by the file worker threads (src/local/
 * worker-replace.ts), over HTTP to box-server: new versions from Box land with Box's mtimes, by the workers, and are
 * recorded as synced (the next run transfers nothing); a save by the user between a replacing download and its
 * commit is kept, and the pass makes the pair a conflict with both versions kept, as on the main thread's path.
 */
import * as nodeFs from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FileJob } from '../../src/local/file-workers.js';
import { expectConverged } from './support/harness.js';
import { expectBothKept, expectNothingToTransfer, workerHarness } from './support/worker-checks.js';

const harness = workerHarness;

const replacing = (job: FileJob): string | undefined => ((job.op === 'put' || job.op === 'unzip') && job.commit?.replace !== undefined ? job.commit.rel : undefined);

describe('replacing downloads committed by the file worker threads', () => {
  it('new versions from Box replace the synced files by the workers, with Box mtimes, recorded as synced: the next run transfers nothing', async () => {
    const replaced: string[] = [];
    const h = await harness((job) => {
      const rel = replacing(job);
      if (rel !== undefined) replaced.push(rel);
    });
    const docs = h.actor.createFolder(h.topId, 'docs');
    const ids = [];
    for (let i = 0; i < 6; i++) ids.push(h.actor.uploadFile(i % 2 === 0 ? docs.id : h.topId, `f${i}.txt`, `file ${i}\n`).id);
    expectConverged(await h.run());
    expect(replaced).toEqual([]);
    for (const id of ids) h.actor.uploadVersion(id, `version 2 of ${id}\n`);
    const s = expectConverged(await h.run());
    expect(s.ops.download ?? 0).toBe(6);
    expect(replaced.sort()).toEqual(['docs/f0.txt', 'docs/f2.txt', 'docs/f4.txt', 'f1.txt', 'f3.txt', 'f5.txt']);
    for (let i = 0; i < 6; i++) {
      const rel = i % 2 === 0 ? `docs/f${i}.txt` : `f${i}.txt`;
      expect(await h.read(rel)).toBe(`version 2 of ${ids[i]}\n`);
      const synced = h.journal.getSynced(h.root.id, rel as never);
      const st = await stat(join(h.localPath, rel));
      expect(synced?.mtimeMs).toBe(st.mtimeMs);
      expect(synced?.inode).toBe(st.ino);
      expect(st.mtimeMs).toBe(h.journal.getRemote(ids[i]! as never)?.modifiedAtMs);
    }
    await expectNothingToTransfer(h);
  });

  it('a save by the user between a replacing download and its commit is kept; the pair is a conflict, both kept', async () => {
    let local = '';
    let raced = false;
    const h = await harness((job) => {
      if (raced || replacing(job) !== 'doc.txt') return;
      raced = true;
      nodeFs.appendFileSync(join(local, 'doc.txt'), ' and the user wrote this');
    });
    local = h.localPath;
    const doc = h.actor.uploadFile(h.topId, 'doc.txt', 'first');
    expectConverged(await h.run());
    h.actor.uploadVersion(doc.id, 'second from box');
    const s = expectConverged(await h.run());
    expect(raced).toBe(true);
    expect(s.conflicts).toBe(1);
    // Both versions are kept, on both sides.
    await expectBothKept(h, 'doc.txt', ['first and the user wrote this', 'second from box']);
  });
});
