/**
 * A tree's rows read out of path order are journal damage (src/core/path-order.ts, src/journal/path-table.ts,
 * open-journal.ts): on a real SQLite file whose primary key index holds its rows in another order (built under
 * NOCASE, then declared BINARY again: integrity_check says "row not in PRIMARY KEY order", quick_check sees
 * nothing), reading the tree stops with the fatal journal_damaged error, the journal is not marked clean, and the
 * next open sets the file aside and starts a fresh one, even though quick_check passes. The idle check's merge
 * of the trees (engine/out-of-sync.ts) relies on that order and has no other way.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { asRelPath, asRemoteId, asRootId, type SyncRoot } from '../../src/core/model.js';
import { comparePaths, followsInPathOrder } from '../../src/core/path-order.js';
import { isSyncError } from '../../src/core/errors.js';
import { outOfSync } from '../../src/engine/out-of-sync.js';
import { openJournal } from '../../src/journal/open-journal.js';
import { makeTempDir } from '../support/tmp.js';
import { localFile } from './entries.js';

const R = asRootId('r');
const root: SyncRoot = { id: R, remoteId: asRemoteId('0'), localPath: '/m', direction: 'two-way', exclude: [] };
const BINARY = 'path       TEXT NOT NULL,';
const NOCASE = 'path       TEXT NOT NULL COLLATE NOCASE,';

let cleanup: (() => Promise<void>) | null = null;
afterEach(async () => {
  await cleanup?.();
  cleanup = null;
});

/** Declares local_entries' path with another collation, leaving its rows where they are (writable_schema). */
function declare(path: string, from: string, to: string): void {
  const db = new BetterSqlite3(path);
  try {
    db.unsafeMode(true);
    db.pragma('writable_schema = ON');
    expect(db.prepare(`UPDATE sqlite_schema SET sql = replace(sql, ?, ?) WHERE name = 'local_entries'`).run(from, to).changes).toBe(1);
    db.pragma(`schema_version = ${(db.pragma('schema_version', { simple: true }) as number) + 1}`);
  } finally {
    db.close();
  }
}

/** A closed journal whose local rows a.txt, B.txt, c.txt sit in NOCASE order under a BINARY primary key. */
async function outOfOrderJournal(): Promise<{ path: string; dir: string }> {
  const tmp = await makeTempDir('boxsync-path-order-');
  cleanup = tmp.cleanup;
  const path = join(tmp.dir, 'journal.db');
  openJournal(path).journal.close();
  declare(path, BINARY, NOCASE);
  const j = openJournal(path).journal;
  for (const name of ['a.txt', 'B.txt', 'c.txt']) j.putLocal(R, localFile(name));
  j.close();
  declare(path, NOCASE, BINARY);
  const db = new BetterSqlite3(path, { readonly: true });
  try {
    expect(db.pragma('quick_check')).toEqual([{ quick_check: 'ok' }]);
    expect((db.pragma('integrity_check') as { integrity_check: string }[]).map((r) => r.integrity_check)).toContain('row not in PRIMARY KEY order for local_entries');
  } finally {
    db.close();
  }
  return { path, dir: tmp.dir };
}

describe('path order', () => {
  it('is code point order; followsInPathOrder takes what comparePaths orders, and nothing equal or before', () => {
    expect(comparePaths('B.txt', 'a.txt')).toBeLessThan(0);
    expect(comparePaths('\uE000', '\u{1F600}')).toBeLessThan(0);
    expect(followsInPathOrder('B.txt', 'a.txt')).toBe(true);
    expect(followsInPathOrder('\uE000', '\u{1F600}')).toBe(true);
    expect(followsInPathOrder('a.txt', 'B.txt')).toBe(false);
    expect(followsInPathOrder('a.txt', 'a.txt')).toBe(false);
    expect(followsInPathOrder('a/b', 'a')).toBe(false);
  });
});

describe('rows out of path order', () => {
  it('stop the read as journal damage; the next open sets the file aside though quick_check passes', async () => {
    const { path, dir } = await outOfOrderJournal();
    const opened = openJournal(path);
    expect(opened.rebuilt).toBe(false);
    const j = opened.journal;
    let thrown: unknown;
    try {
      [...j.localUnder(R, '')];
    } catch (e) {
      thrown = e;
    }
    expect(isSyncError(thrown) && thrown.code === 'journal_damaged' && thrown.disposition === 'fatal').toBe(true);
    expect(String((thrown as Error).message)).toMatch(/is damaged \(SQLITE_CORRUPT_INDEX: the rows of local_entries came out of path order/);
    // The idle check's merge reads the same tree: the same error, no answer built on a wrong order.
    expect(() => outOfSync(j, root, () => false)).toThrow(/journal .* is damaged/);
    j.close();
    expect(existsSync(`${path}.clean`)).toBe(false);
    expect(existsSync(`${path}.damaged`)).toBe(true);

    const next = openJournal(path);
    expect(next.rebuilt).toBe(true);
    if (next.rebuilt) expect(next.reason).toMatch(/damage was seen while it was in use \(SQLITE_CORRUPT_INDEX/);
    expect(readdirSync(dir).filter((n) => n.startsWith('journal.db.corrupt-') && !n.endsWith('-wal') && !n.endsWith('-shm'))).toHaveLength(1);
    expect(existsSync(`${path}.damaged`)).toBe(false);
    // The fresh journal reads in order.
    next.journal.putLocal(R, localFile('B.txt'));
    next.journal.putLocal(R, localFile('a.txt'));
    expect([...next.journal.localUnder(R, '')].map((e) => e.path)).toEqual([asRelPath('B.txt'), asRelPath('a.txt')]);
    next.journal.close();
    const again = openJournal(path);
    expect(again.rebuilt).toBe(false);
    again.journal.close();
  });
});
