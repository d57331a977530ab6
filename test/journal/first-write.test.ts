/**
 * A run that finds nothing changed writes nothing to the journal (src/journal/first-write.ts, notes.ts): on a real
 * SQLite file, the action given to beforeNextWrite runs right before the first write and only then, inside that
 * write's transaction; a transaction that rolls back undoes it and makes it pending again; setting the value a key
 * already has writes nothing; a note is kept beside the journal, across a reopen, without touching the journal.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openJournal } from '../../src/journal/index.js';
import type { Journal } from '../../src/ports/journal.js';
import { makeTempDir } from '../support/tmp.js';

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
});
