/**
 * Group commit (engine/commit-batch.ts) on a real journal: outcomes that end together commit in one transaction,
 * each in its own savepoint; a failing write fails alone; nothing is committed before `beforeCommit` (the local
 * adapter's fsync of the renamed files' folders) is over, and nothing at all when it fails.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { asRelPath as p, asRemoteId as id, asRootId, type SyncedEntry } from '../../src/core/model.js';
import { CommitBatch } from '../../src/engine/commit-batch.js';
import type { Journal } from '../../src/ports/journal.js';
import { tempJournal } from './support/journal.js';

const root = asRootId('r1');
let j: { journal: Journal; cleanup: () => Promise<void> };
beforeEach(async () => {
  j = await tempJournal();
});
afterEach(() => j.cleanup());

function base(path: string, remoteId: string): SyncedEntry {
  return { path: p(path), remoteId: id(remoteId), kind: 'file', etag: '1', sha1: 'a'.repeat(40), versionId: null, sizeBytes: 1, inode: 7, mtimeMs: 1000, url: null };
}

/** A CommitBatch on the real journal that records the size of each commit. */
function recordingBatch(journal: Journal, o: Omit<ConstructorParameters<typeof CommitBatch>[0], 'transactionEach' | 'beforeCommit'>): { batch: CommitBatch; sizes: number[] } {
  const sizes: number[] = [];
  const batch = new CommitBatch({
    transactionEach: (w) => {
      sizes.push(w.length);
      return journal.transactionEach(w);
    },
    beforeCommit: async () => undefined,
    ...o,
  });
  return { batch, sizes };
}

const settle = (ps: Promise<void>[]) => Promise.allSettled(ps).then((rs) => rs.map((r) => (r.status === 'fulfilled' ? 'ok' : String((r.reason as Error).message))));

describe('Journal.transactionEach', () => {
  it('rolls back a failing write alone, with its partial changes, and reports its error at its index', () => {
    const { journal } = j;
    const errors = journal.transactionEach([
      () => journal.putSynced(root, base('a', '1')),
      () => {
        journal.putSynced(root, base('b', '2'));
        throw new Error('boom');
      },
      () => journal.putSynced(root, base('c', '3')),
    ]);
    expect(errors.map((e) => (e === undefined ? 'ok' : (e as Error).message))).toEqual(['ok', 'boom', 'ok']);
    expect(journal.getSynced(root, p('a'))?.remoteId).toBe('1');
    expect(journal.getSynced(root, p('b'))).toBeUndefined();
    expect(journal.getSynced(root, p('c'))?.remoteId).toBe('3');
  });
});

describe('Journal.transactionEach, savepoints only when needed', () => {
  it('runs each write once when none throws; when one does, the rest run again and are written once', () => {
    const { journal } = j;
    const runs = [0, 0, 0];
    const write = (k: number, fail = false) => () => {
      runs[k]! += 1;
      journal.putSynced(root, base(`f${k}`, String(k)));
      journal.recordOperation({ root, path: p(`f${k}`), kind: 'download', reason: 'test', ok: true, error: null, atMs: 1 });
      if (fail) throw new Error('late failure');
    };
    expect(journal.transactionEach([write(0), write(1), write(2)])).toEqual([undefined, undefined, undefined]);
    expect(runs).toEqual([1, 1, 1]);
    runs.fill(0);
    const errors = journal.transactionEach([write(0), write(1, true), write(2)]);
    expect(errors.map((e) => (e === undefined ? 'ok' : (e as Error).message))).toEqual(['ok', 'late failure', 'ok']);
    expect(runs).toEqual([2, 2, 1]);
    // The first pass was rolled back whole: one history row per written operation, none for the failed one.
    expect(journal.operations({ path: p('f0'), under: false })).toHaveLength(2);
    expect(journal.operations({ path: p('f1'), under: false })).toHaveLength(1);
  });
});

describe('CommitBatch', () => {
  it('commits outcomes that end together in one transaction, after beforeCommit', async () => {
    const { journal } = j;
    const order: string[] = [];
    const batch = new CommitBatch({
      transactionEach: (w) => {
        order.push(`commit ${w.length}`);
        return journal.transactionEach(w);
      },
      beforeCommit: async () => {
        order.push('durable');
        await new Promise((r) => setTimeout(r, 5));
      },
    });
    const results = await settle(['a', 'b', 'c', 'd'].map((name, k) => batch.add(() => journal.putSynced(root, base(name, String(k))))));
    expect(results).toEqual(['ok', 'ok', 'ok', 'ok']);
    expect(order).toEqual(['durable', 'commit 4']);
    expect(batch.commits).toBe(1);
    for (const name of ['a', 'b', 'c', 'd']) expect(journal.getSynced(root, p(name))).toBeDefined();
  });

  it('fails only the write that throws; the others of its commit are written', async () => {
    const { journal } = j;
    const batch = new CommitBatch({ transactionEach: (w) => journal.transactionEach(w), beforeCommit: async () => undefined });
    const results = await settle([
      batch.add(() => journal.putSynced(root, base('a', '1'))),
      batch.add(() => {
        journal.putSynced(root, base('b', '2'));
        throw new Error('constraint');
      }),
      batch.add(() => journal.putSynced(root, base('c', '3'))),
    ]);
    expect(results).toEqual(['ok', 'constraint', 'ok']);
    expect(batch.commits).toBe(1);
    expect(journal.getSynced(root, p('b'))).toBeUndefined();
    expect(journal.getSynced(root, p('c'))).toBeDefined();
  });

  it('commits nothing when beforeCommit fails, and fails every outcome waiting for it', async () => {
    const { journal } = j;
    const batch = new CommitBatch({ transactionEach: (w) => journal.transactionEach(w), beforeCommit: async () => Promise.reject(new Error('fsync failed')) });
    const results = await settle([batch.add(() => journal.putSynced(root, base('a', '1'))), batch.add(() => journal.putSynced(root, base('b', '2')))]);
    expect(results).toEqual(['fsync failed', 'fsync failed']);
    expect(journal.getSynced(root, p('a'))).toBeUndefined();
    expect(batch.commits).toBe(0);
  });

  it('an outcome that ends while a commit is prepared waits for the next one, and the one after that', async () => {
    const { journal } = j;
    let late: Promise<void> | undefined;
    let calls = 0;
    const batch = new CommitBatch({
      transactionEach: (w) => journal.transactionEach(w),
      beforeCommit: async () => {
        calls += 1;
        if (calls === 1) late = batch.add(() => journal.putSynced(root, base('late', '9')));
        await new Promise((r) => setTimeout(r, 1));
      },
    });
    await batch.add(() => journal.putSynced(root, base('first', '1')));
    expect(late).toBeDefined();
    await late;
    expect(batch.commits).toBe(2);
    expect(journal.getSynced(root, p('late'))).toBeDefined();
    // Drained: a new outcome starts a new commit by itself.
    await batch.add(() => journal.putSynced(root, base('again', '2')));
    expect(batch.commits).toBe(3);
  });

  it('holds at most maxPerCommit outcomes in one transaction', async () => {
    const { journal } = j;
    const { batch, sizes } = recordingBatch(journal, { maxPerCommit: 3 });
    await Promise.all(Array.from({ length: 7 }, (_, k) => batch.add(() => journal.putSynced(root, base(`f${k}`, String(k))))));
    expect(sizes).toEqual([3, 3, 1]);
  });

  it('gathers outcomes while more are expected, and commits at once when the last one comes', async () => {
    const { journal } = j;
    let running = 5;
    // gatherMs is never waited out here: each commit below is released by its condition.
    const { batch, sizes } = recordingBatch(journal, { expectMore: () => running > 0, gatherMs: 60_000 });
    const done: Promise<void>[] = [];
    for (let k = 0; k < 5; k++) {
      await new Promise((r) => setTimeout(r, 2));
      running -= 1;
      done.push(batch.add(() => journal.putSynced(root, base(`g${k}`, String(k)))));
    }
    await Promise.all(done);
    expect(sizes).toEqual([5]);
    // A lone outcome with nothing else running commits on the next turn.
    await batch.add(() => journal.putSynced(root, base('lone', '9')));
    expect(sizes).toEqual([5, 1]);
  });

  it('commits what it gathered when gatherCount is reached, or when the operations it waited for end without an outcome', async () => {
    const { journal } = j;
    let running = 10;
    const { batch, sizes } = recordingBatch(journal, { expectMore: () => running > 0, gatherMs: 60_000, gatherCount: 3 });
    const first = [0, 1, 2].map((k) => batch.add(() => journal.putSynced(root, base(`c${k}`, String(k)))));
    running -= 3;
    await Promise.all(first);
    expect(sizes).toEqual([3]);
    const last = batch.add(() => journal.putSynced(root, base('c3', '3')));
    running -= 1;
    await new Promise((r) => setTimeout(r, 5));
    expect(sizes).toEqual([3]); // still gathering: six operations run
    running = 0; // they failed: nothing to commit for them
    batch.wake();
    await last;
    expect(sizes).toEqual([3, 1]);
  });
});

describe('CommitBatch.addAll', () => {
  it('commits several writes with one promise: a failing one gets its error at its index, the rest are committed', async () => {
    const { journal } = j;
    const { batch, sizes } = recordingBatch(journal, {});
    const errors = await batch.addAll([
      () => journal.putSynced(root, base('a', '1')),
      () => {
        journal.putSynced(root, base('b', '2'));
        throw new Error('boom');
      },
      () => journal.putSynced(root, base('c', '3')),
    ]);
    expect(errors.map((e) => (e === undefined ? 'ok' : (e as Error).message))).toEqual(['ok', 'boom', 'ok']);
    expect(sizes).toEqual([3]);
    expect(journal.getSynced(root, p('a'))?.remoteId).toBe('1');
    expect(journal.getSynced(root, p('b'))).toBeUndefined();
    expect(journal.getSynced(root, p('c'))?.remoteId).toBe('3');
    expect(await batch.addAll([])).toEqual([]);
  });

  it('a failed commit (beforeCommit threw) is each write’s error; nothing is written', async () => {
    const { journal } = j;
    const batch = new CommitBatch({
      transactionEach: (w) => journal.transactionEach(w),
      beforeCommit: () => Promise.reject(new Error('fsync failed')),
    });
    const errors = await batch.addAll([() => journal.putSynced(root, base('a', '1')), () => journal.putSynced(root, base('b', '2'))]);
    expect(errors.map((e) => (e as Error).message)).toEqual(['fsync failed', 'fsync failed']);
    expect(journal.getSynced(root, p('a'))).toBeUndefined();
  });
});
