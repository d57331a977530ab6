/**
 * The engine with downloads committed into place by the file worker threads (src/local/worker-commit.ts), over
 * HTTP to box-server: a first mirror lands with Box's mtimes and is recorded as synced; a file the user saves under
 * a downloaded file's name between its download and its commit is kept, and the pass reports the pair as a
 * conflict with both versions kept, as on the main thread's path.
 */
import * as nodeFs from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectConverged } from './support/harness.js';
import { workerHarness } from './support/worker-checks.js';

const harness = workerHarness;

describe('downloads committed by the file worker threads', () => {
  it('a first mirror lands with Box mtimes, recorded as synced: the next run transfers nothing', async () => {
    const h = await harness();
    const docs = h.actor.createFolder(h.topId, 'docs');
    for (let i = 0; i < 20; i++) h.actor.uploadFile(i % 2 === 0 ? docs.id : h.topId, `f${i}.txt`, `file ${i}\n`, { contentModifiedAt: `2020-01-0${1 + (i % 9)}T10:00:00Z` });
    expectConverged(await h.run());
    for (let i = 0; i < 20; i++) {
      const rel = i % 2 === 0 ? `docs/f${i}.txt` : `f${i}.txt`;
      expect(await h.read(rel)).toBe(`file ${i}\n`);
      expect((await stat(join(h.localPath, rel))).mtimeMs).toBe(Date.parse(`2020-01-0${1 + (i % 9)}T10:00:00Z`));
    }
    expect(h.journal.getSynced(h.root.id, 'docs/f0.txt' as never)?.mtimeMs).toBe(Date.parse('2020-01-01T10:00:00Z'));
    const t0 = Date.now();
    await h.restart();
    const again = expectConverged(await h.run());
    expect(again.downloadedBytes + again.uploadedBytes).toBe(0);
    expect(h.transfers(t0)).toEqual({ downloads: 0, uploads: 0, moves: 0 });
  });

  it('a file the user saves under the name between download and commit is kept; the pair is a conflict, both kept', async () => {
    let local = '';
    let raced = false;
    const h = await harness((job) => {
      if (raced || (job.op !== 'put' && job.op !== 'unzip') || job.commit?.rel !== 'doc.txt') return;
      raced = true;
      nodeFs.writeFileSync(join(local, 'doc.txt'), 'the user wrote this');
    });
    local = h.localPath;
    h.actor.uploadFile(h.topId, 'doc.txt', 'from box');
    const s = expectConverged(await h.run());
    expect(raced).toBe(true);
    expect(s.conflicts).toBe(1);
    const names = await h.list();
    const copy = names.find((n) => n.startsWith('doc (conflicted copy'));
    expect(copy, names.join(', ')).toBeDefined();
    // Both versions are kept, on both sides.
    const contents = [await h.read('doc.txt'), await h.read(copy!)].sort();
    expect(contents).toEqual(['from box', 'the user wrote this'].sort());
    expect(h.actor.listFolder(h.topId).map((e) => e.name).sort()).toEqual(['doc.txt', copy!].sort());
  });
});
