import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { asRelPath, asRemoteId, asRootId } from '../../src/core/model.js';
import { MIGRATIONS, SCHEMA_VERSION } from '../../src/journal/migrations.js';
import { openJournal } from '../../src/journal/open-journal.js';
import { makeTempDir } from '../support/tmp.js';
import { localFile, remoteItem, synced } from './entries.js';

const R = asRootId('r');
/** The structure a version 1 journal had, frozen when it shipped: step 1 must still make exactly this. */
const v1Structure: unknown = JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures', 'schema-v1.json'), 'utf8'));

let tmp: { dir: string; cleanup: () => Promise<void> };
beforeEach(async () => {
  tmp = await makeTempDir('boxsync-migrations-');
});
afterEach(async () => {
  await tmp.cleanup();
});

/** Tables, columns, indexes and STRICT flags, as SQLite reports them (independent of how the SQL was spelled). */
function structure(path: string): unknown {
  const db = new BetterSqlite3(path, { readonly: true });
  const tables = (db.prepare(`SELECT name, strict, wr FROM pragma_table_list WHERE schema = 'main' AND name NOT LIKE 'sqlite_%' ORDER BY name`).all() as {
    name: string;
  }[]).map((t) => ({
    ...t,
    columns: db.prepare(`SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?)`).all(t.name),
    indexes: (db.prepare(`SELECT name, "unique" FROM pragma_index_list(?) ORDER BY name`).all(t.name) as { name: string }[]).map((i) => ({
      ...i,
      columns: db.prepare(`SELECT name FROM pragma_index_info(?)`).all(i.name),
    })),
    foreignKeys: db.prepare(`SELECT "table", "from", "to", on_delete FROM pragma_foreign_key_list(?)`).all(t.name),
    checks: (db.prepare(`SELECT sql FROM sqlite_schema WHERE name = ?`).get(t.name) as { sql: string }).sql.match(/CHECK \([^)]*\)+/g),
  }));
  db.close();
  return tables;
}

describe('migrations', () => {
  it('has one step per version from 1, in order', () => {
    expect(MIGRATIONS.map((m) => m.toVersion)).toEqual(Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1));
  });

  it('step 1 makes the structure version 1 shipped with; such a journal migrates forward, keeping its rows, to exactly the structure of a fresh one', () => {
    const oldPath = join(tmp.dir, 'old', 'journal.db');
    const freshPath = join(tmp.dir, 'fresh', 'journal.db');
    openJournal(freshPath).journal.close();

    mkdirSync(join(tmp.dir, 'old'));
    const v1 = new BetterSqlite3(oldPath);
    v1.exec(MIGRATIONS[0]!.sql);
    v1.pragma('user_version = 1');
    expect(structure(oldPath)).toEqual(v1Structure);
    v1.prepare(`INSERT INTO local_entries VALUES ('r', 'a.txt', 'file', 7, 10, 1700000000123.5, 'da39a3ee5e6b4b0d3255bfef95601890afd80709')`).run();
    v1.prepare(`INSERT INTO synced_entries VALUES ('r', 's', 'f1', 'file', '1', 'aa', 'v1', 5, 42, 1700000000000, NULL)`).run();
    v1.prepare(`INSERT INTO remote_items VALUES ('5', 'file', '0', 'n', '0', '0', NULL, 0, 1700000000000, NULL, NULL, 'active')`).run();
    v1.prepare(`INSERT INTO stream_cursors VALUES ('changes', '99999999999999999999')`).run();
    v1.close();

    const { journal, rebuilt } = openJournal(oldPath);
    expect(rebuilt).toBe(false);
    expect(journal.getLocal(R, asRelPath('a.txt'))).toEqual(localFile('a.txt', { inode: 7 }));
    expect(journal.getSynced(R, asRelPath('s'))).toEqual(synced('s', 'f1'));
    expect(journal.getRemote(asRemoteId('5'))).toEqual(remoteItem('5', '0', 'n'));
    expect(journal.getCursor('changes')).toBe('99999999999999999999');
    journal.recordFailure({ root: R, path: asRelPath('a.txt'), code: 'x', message: 'm', attempts: 1, nextRetryAtMs: 1, disposition: 'retry' });
    expect(journal.failures()).toHaveLength(1);
    journal.close();

    const raw = new BetterSqlite3(oldPath, { readonly: true });
    expect(raw.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    raw.close();
    expect(structure(oldPath)).toEqual(structure(freshPath));
  });

  it('step 7 copies the Box id of a park recorded before it out of its message, so the park is found by id', () => {
    const path = join(tmp.dir, 'v6', 'journal.db');
    mkdirSync(join(tmp.dir, 'v6'));
    const v6 = new BetterSqlite3(path);
    for (const m of MIGRATIONS.filter((x) => x.toVersion <= 6)) v6.exec(m.sql);
    v6.pragma('user_version = 6');
    const park = v6.prepare(`INSERT INTO failures (root, path, code, message, attempts, next_retry_at_ms, disposition) VALUES ('r', ?, ?, ?, 1, 0, 'skip')`);
    park.run('bad\\x2fname', 'remote_item_invalid', 'Box sent a file (Box id 4711) that cannot be synced: GET /files/4711 field `name`: refused');
    park.run('(Box id unknown)', 'remote_item_invalid', 'Box sent a file that cannot be synced: GET folder items field `id`: missing');
    park.run('other.txt', 'unexpected', 'not about a (Box id 99) park');
    v6.close();

    const { journal } = openJournal(path);
    expect(journal.failuresOfRemoteId(asRemoteId('4711')).map((f) => f.path)).toEqual(['bad\\x2fname']);
    expect(journal.failuresOfRemoteId(asRemoteId('99'))).toEqual([]);
    expect(journal.failures().filter((f) => f.remoteId !== null).map((f) => f.remoteId)).toEqual(['4711']);
    journal.close();
  });

  it('step 8: since when an item fails; kept across its retries, gone with its failure; a row from before the step gets one at its next attempt', () => {
    const path = join(tmp.dir, 'v7', 'journal.db');
    mkdirSync(join(tmp.dir, 'v7'));
    const v7 = new BetterSqlite3(path);
    for (const m of MIGRATIONS.filter((x) => x.toVersion <= 7)) v7.exec(m.sql);
    v7.pragma('user_version = 7');
    v7.prepare(`INSERT INTO failures (root, path, code, message, attempts, next_retry_at_ms, disposition) VALUES ('r', 'old.txt', 'x', 'm', 3, 0, 'retry')`).run();
    v7.close();

    const { journal } = openJournal(path);
    const old = asRelPath('old.txt');
    expect(journal.getFailure(R, old)).toMatchObject({ attempts: 3, firstFailedAtMs: null });
    const base = { root: R, code: 'x', message: 'm', nextRetryAtMs: 0, disposition: 'retry' } as const;
    journal.recordFailure({ ...base, path: old, attempts: 4, firstFailedAtMs: 5_000 });
    expect(journal.getFailure(R, old)?.firstFailedAtMs).toBe(5_000);
    // The same item failing again (another code, another message) keeps the time its failures began.
    const a = asRelPath('a.txt');
    journal.recordFailure({ ...base, path: a, attempts: 1, firstFailedAtMs: 1_000 });
    journal.recordFailure({ ...base, path: a, code: 'y', message: 'again', attempts: 2, firstFailedAtMs: 9_000 });
    expect(journal.getFailure(R, a)).toMatchObject({ code: 'y', message: 'again', attempts: 2, firstFailedAtMs: 1_000 });
    // Cleared with the failure: a new failure later starts a new "since".
    journal.clearFailure(R, a);
    journal.recordFailure({ ...base, path: a, attempts: 1, firstFailedAtMs: 20_000 });
    expect(journal.getFailure(R, a)?.firstFailedAtMs).toBe(20_000);
    journal.close();
  });

  it('records the Box id of a failure and finds it by that id in every root', () => {
    const { journal } = openJournal(join(tmp.dir, 'by-id', 'journal.db'));
    const base = { code: 'remote_item_invalid', message: 'm', attempts: 1, nextRetryAtMs: 0, disposition: 'skip' } as const;
    journal.recordFailure({ ...base, root: R, path: asRelPath('(Box id 7)'), remoteId: asRemoteId('7') });
    journal.recordFailure({ ...base, root: asRootId('s'), path: asRelPath('x'), remoteId: asRemoteId('7') });
    journal.recordFailure({ ...base, root: R, path: asRelPath('y'), remoteId: asRemoteId('8') });
    journal.recordFailure({ ...base, root: R, path: asRelPath('z') });
    expect(journal.failuresOfRemoteId(asRemoteId('7')).map((f) => `${f.root}:${f.path}`)).toEqual(['r:(Box id 7)', 's:x']);
    expect(journal.getFailure(R, asRelPath('z'))?.remoteId).toBeNull();
    journal.close();
  });
});
