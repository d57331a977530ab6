/**
 * A run that finds nothing changed writes nothing to the journal (src/journal/first-write.ts, notes.ts): on a real
 * SQLite file, the action given to beforeNextWrite runs right before the first write and only then, inside that
 * write's transaction; a transaction that rolls back undoes it and makes it pending again; setting the value a key
 * already has writes nothing; a note is kept beside the journal, across a reopen, without touching the journal. Every
 * write method of the journal passes the gate (SqliteJournal calls it; better-sqlite3's objects are not patched).
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { asRelPath as p, asRemoteId as rid, asRootId } from '../../src/core/model.js';
import { openJournal } from '../../src/journal/index.js';
import { SqliteJournal } from '../../src/journal/sqlite-journal.js';
import type { Journal } from '../../src/ports/journal.js';
import { makeTempDir } from '../support/tmp.js';
import { localFile, remoteItem, synced } from './entries.js';

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

async function open(): Promise<{ journal: Journal; path: string; reopen: () => Journal }> {
  const tmp = await makeTempDir('boxsync-first-write-');
  const path = join(tmp.dir, 'journal.db');
  let journal = openJournal(path).journal;
  cleanup.push(tmp.cleanup, async () => journal.close());
  return {
    journal,
    path,
    reopen: () => {
      journal.close();
      journal = openJournal(path).journal;
      return journal;
    },
  };
}

/** A journal holding `key`, closed cleanly and opened again (`j`), and the file's bytes then. */
async function closedWith(key: string, value: string): Promise<{ j: Journal; path: string; bytes: Buffer; reopen: () => Journal }> {
  const { journal, path, reopen } = await open();
  journal.setMeta(key, value);
  const j = reopen();
  return { j, path, bytes: await readFile(path), reopen };
}

describe('the first write of a run', () => {
  it('runs the pending action right before it, once; reads and a value set again run nothing', async () => {
    const { journal } = await open();
    journal.setMeta('k', 'v1');
    const ran: string[] = [];
    journal.beforeNextWrite!(() => {
      ran.push(`before, k=${journal.getMeta('k')}`);
      journal.setMeta('mark', '');
    });
    // Reads, and writes of the value already there, are no writes.
    expect(journal.getMeta('k')).toBe('v1');
    journal.setMeta('k', 'v1');
    journal.setCursor('c', 'p1');
    expect(ran).toEqual(['before, k=v1']);
    // The cursor was the first write: the action ran before it, and not again.
    ran.length = 0;
    journal.setCursor('c', 'p1');
    journal.setMeta('k', 'v2');
    expect(ran).toEqual([]);
    expect([journal.getMeta('mark'), journal.getMeta('k'), journal.getCursor('c')]).toEqual(['', 'v2', 'p1']);
  });

  it('a transaction that rolls back undoes the action too, which then runs before the next write', async () => {
    const { journal } = await open();
    journal.setMeta('mark', 'clean');
    let runs = 0;
    journal.beforeNextWrite!(() => {
      runs++;
      journal.setMeta('mark', '');
    });
    expect(() =>
      journal.transaction(() => {
        journal.setMeta('observed', 'x');
        throw new Error('the write failed');
      }),
    ).toThrow('the write failed');
    expect([runs, journal.getMeta('mark'), journal.getMeta('observed')]).toEqual([1, 'clean', undefined]);
    journal.setMeta('observed', 'y');
    expect([runs, journal.getMeta('mark'), journal.getMeta('observed')]).toEqual([2, '', 'y']);
  });

  it('null drops the pending action: a connection that only read leaves the file byte for byte as it was', async () => {
    const { j, path, bytes, reopen } = await closedWith('mark', 'clean');
    let runs = 0;
    j.beforeNextWrite!(() => {
      runs++;
      j.setMeta('mark', '');
    });
    j.setMeta('mark', 'clean');
    expect(j.getMeta('mark')).toBe('clean');
    j.beforeNextWrite!(null);
    const k = reopen();
    expect(runs).toBe(0);
    expect((await readFile(path)).equals(bytes)).toBe(true);
    // Dropped: a later write runs nothing.
    k.beforeNextWrite!(() => void runs++);
    k.beforeNextWrite!(null);
    k.setMeta('other', 'written');
    expect([runs, k.getMeta('mark'), k.getMeta('other')]).toEqual([0, 'clean', 'written']);
  });

  it('a note is kept beside the journal across a reopen, and writes nothing into it', async () => {
    const { j, path, bytes, reopen } = await closedWith('k', 'v');
    j.setNote!('engine.lastSuccessfulSyncAtMs', '1234');
    expect(j.getNote!('engine.lastSuccessfulSyncAtMs')).toBe('1234');
    const k = reopen();
    expect((await readFile(path)).equals(bytes)).toBe(true);
    expect(k.getNote!('engine.lastSuccessfulSyncAtMs')).toBe('1234');
    expect(k.getNote!('other')).toBeUndefined();
    expect(((await stat(`${path}.notes`)).mode & 0o777).toString(8)).toBe('600');
  });

  it('every write method of the journal runs the action before it writes, and each method is known as a write or not', async () => {
    const { journal: j } = await open();
    const R = asRootId('r');
    const session = {
      key: 'r:big.bin', sessionId: 'S1', endpoints: { upload_part: 'http://x/u', commit: 'http://x/c' }, partSizeBytes: 8,
      totalParts: 2, fileSizeBytes: 16, sourceSha1: null, sourceMtimeMs: 1, expiresAtMs: 2, fileId: null, parts: [],
    };
    // Each write, and what shows it was done (false while the action runs: the action comes first).
    const writes: Record<string, { setup?: () => void; write: () => void; done: () => boolean }> = {
      putRemote: { write: () => j.putRemote(remoteItem('1', null, 'f')), done: () => j.getRemote(rid('1')) !== undefined },
      deleteRemote: { write: () => j.deleteRemote(rid('1')), done: () => j.getRemote(rid('1')) === undefined },
      deleteRemoteSubtree: {
        setup: () => j.putRemote(remoteItem('3', '2', 'below')),
        write: () => j.deleteRemoteSubtree(rid('2')),
        done: () => j.getRemote(rid('3')) === undefined,
      },
      putLocal: { write: () => j.putLocal(R, localFile('a')), done: () => j.getLocal(R, p('a')) !== undefined },
      moveLocalSubtree: { write: () => j.moveLocalSubtree(R, p('a'), p('b')), done: () => j.getLocal(R, p('b')) !== undefined },
      deleteLocal: { write: () => j.deleteLocal(R, p('b')), done: () => j.getLocal(R, p('b')) === undefined },
      deleteLocalSubtree: { setup: () => j.putLocal(R, localFile('c')), write: () => j.deleteLocalSubtree(R, p('c')), done: () => j.getLocal(R, p('c')) === undefined },
      putSynced: { write: () => j.putSynced(R, synced('a', '1')), done: () => j.getSynced(R, p('a')) !== undefined },
      moveSyncedSubtree: { write: () => j.moveSyncedSubtree(R, p('a'), p('b')), done: () => j.getSynced(R, p('b')) !== undefined },
      deleteSynced: { write: () => j.deleteSynced(R, p('b')), done: () => j.getSynced(R, p('b')) === undefined },
      deleteSyncedSubtree: { setup: () => j.putSynced(R, synced('c', '3')), write: () => j.deleteSyncedSubtree(R, p('c')), done: () => j.getSynced(R, p('c')) === undefined },
      setCursor: { write: () => j.setCursor('c', '1'), done: () => j.getCursor('c') === '1' },
      setMeta: { write: () => j.setMeta('m', '1'), done: () => j.getMeta('m') === '1' },
      markTrashed: { write: () => j.markTrashed(rid('1'), true), done: () => j.isTrashed(rid('1')) },
      recordFailure: {
        write: () => j.recordFailure({ root: R, path: p('x'), code: 'c', message: 'm', attempts: 1, nextRetryAtMs: 1, disposition: 'retry' }),
        done: () => j.getFailure(R, p('x')) !== undefined,
      },
      clearFailure: { write: () => j.clearFailure(R, p('x')), done: () => j.getFailure(R, p('x')) === undefined },
      recordOperation: {
        write: () => j.recordOperation({ root: R, path: p('x'), kind: 'download', reason: 'r', ok: true, error: null, atMs: 1 }),
        done: () => j.lastOperation(R, p('x')) !== undefined,
      },
      putUnsynced: {
        write: () => j.putUnsynced({ root: R, path: p('u'), reason: 'config-exclude', kind: 'folder', sinceMs: 1 }),
        done: () => j.unsyncedPaths(R).length === 1,
      },
      deleteUnsynced: { write: () => j.deleteUnsynced(R, p('u')), done: () => j.unsyncedPaths(R).length === 0 },
      putListingMark: { write: () => j.putListingMark!(R, p('d'), 'm', 0), done: () => j.listingMark!(R, p('d')) !== undefined },
      clearListingMarks: { write: () => j.clearListingMarks!(R), done: () => j.listingMark!(R, p('d')) === undefined },
      forgetRoot: {
        setup: () => (j.putLocal(R, localFile('a')), j.putListingMark!(R, p('e'), 'm', 0)),
        write: () => j.forgetRoot(R),
        done: () => j.getLocal(R, p('a')) === undefined && j.listingMark!(R, p('e')) === undefined,
      },
      'uploadSessions.put': { write: () => j.uploadSessions.put(session), done: () => j.uploadSessions.get(session.key) !== undefined },
      'uploadSessions.addPart': {
        write: () => j.uploadSessions.addPart(session.key, { partId: 'P', offset: 0, size: 8, sha1: 'a' }),
        done: () => j.uploadSessions.get(session.key)?.parts.length === 1,
      },
      'uploadSessions.delete': { write: () => j.uploadSessions.delete(session.key), done: () => j.uploadSessions.get(session.key) === undefined },
    };
    const seen: string[] = [];
    for (const [name, { setup, write, done }] of Object.entries(writes)) {
      setup?.();
      j.beforeNextWrite!(() => seen.push(`${name}${done() ? ' after its write' : ''}`));
      write();
      expect(done(), name).toBe(true);
    }
    expect(seen).toEqual(Object.keys(writes));
    // A method added to the journal must be named here: as a write above, or as one that does not write.
    const notWrites = [
      'constructor', 'transaction', 'transactionEach', 'maintain', 'beforeNextWrite', 'close', 'getRemote', 'remoteChildren',
      'remoteChildrenPaged', 'remoteChildNamed', 'countRemoteBelow', 'getLocal', 'localUnder', 'localByInode', 'localChildren',
      'countLocalUnder', 'listingMark', 'getSynced', 'remoteGeneration', 'syncedByRemoteId', 'syncedByRemoteIds', 'syncedByInode', 'syncedUnder', 'syncedChildren', 'countSyncedUnder',
      'countSynced', 'countSyncedSteps', 'getCursor', 'isTrashed', 'getMeta', 'getFailure', 'failures', 'failuresOfRemoteId', 'parkedFailures', 'operations',
      'lastOperation', 'unsyncedPaths', 'syncedRoots', 'afterUpkeepApart', 'localChildrenPages', 'syncedChildrenPages',
    ];
    const unknown = Object.getOwnPropertyNames(SqliteJournal.prototype).filter((m) => !(m in writes) && !notWrites.includes(m));
    expect(unknown).toEqual([]);
  });
});
