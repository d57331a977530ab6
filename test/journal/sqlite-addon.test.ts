/**
 * better-sqlite3's addon found by its file (src/journal/sqlite-addon.ts), as `bindings` would find it: the bundle of
 * `sync` holds better-sqlite3's JavaScript and opens the journal with it. Real better-sqlite3, a real file.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sqliteAddonPath, withSqliteAddon } from '../../src/journal/sqlite-addon.js';
import { openJournal } from '../../src/journal/open-journal.js';
import { makeTempDir } from '../support/tmp.js';

let tmp: { dir: string; cleanup: () => Promise<void> };
beforeEach(async () => (tmp = await makeTempDir('boxsync-sqlite-addon-')));
afterEach(async () => tmp.cleanup());

describe("better-sqlite3's addon", () => {
  it('is the file `bindings` would load: the first of its folders under better-sqlite3 that holds one', () => {
    const root = dirname(createRequire(import.meta.url).resolve('better-sqlite3/package.json'));
    const path = sqliteAddonPath();
    expect(path).toBeDefined();
    expect(existsSync(path!)).toBe(true);
    const first = ['build', 'build/Debug', 'build/Release'].map((d) => join(root, d, 'better_sqlite3.node')).find((f) => existsSync(f));
    expect(path).toBe(first);
    expect(withSqliteAddon({ readonly: true })).toEqual({ readonly: true, nativeBinding: path });
  });

  it('opens a database through that file, and a journal (openJournal) with it', () => {
    const db = new BetterSqlite3(join(tmp.dir, 'a.db'), withSqliteAddon({}));
    expect(db.prepare('select 1 + 1 as n').get()).toEqual({ n: 2 });
    db.close();
    const { journal, rebuilt } = openJournal(join(tmp.dir, 'journal.db'));
    expect(rebuilt).toBe(false);
    journal.close();
  });
});
