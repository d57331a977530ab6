import { chmodSync, existsSync, readFileSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { asRelPath, asRootId } from '../../src/core/model.js';
import { isSyncError } from '../../src/core/errors.js';
import { INTEGRITY_CHECK_EVERY_MS, openJournal } from '../../src/journal/open-journal.js';
import { SCHEMA_VERSION } from '../../src/journal/migrations.js';
import { makeTempDir } from '../support/tmp.js';
import { overwritePages } from './damage.js';
import { localFile } from './entries.js';

const R = asRootId('r');

let tmp: { dir: string; cleanup: () => Promise<void> };
let dbPath: string;

beforeEach(async () => {
  tmp = await makeTempDir('boxsync-open-journal-');
  dbPath = join(tmp.dir, 'state', 'nested', 'journal.db');
});
afterEach(async () => {
  await tmp.cleanup();
});

const asideFiles = (): string[] => readdirSync(join(tmp.dir, 'state', 'nested')).filter((n) => n.includes('.corrupt-'));

describe('openJournal', () => {
  it('creates the directory 0700 and the file 0600, in WAL mode at the current schema version', () => {
    const { journal, rebuilt } = openJournal(dbPath);
    journal.setMeta('k', 'v');
    expect(rebuilt).toBe(false);
    expect(statSync(join(tmp.dir, 'state')).mode & 0o777).toBe(0o700);
    expect(statSync(join(tmp.dir, 'state', 'nested')).mode & 0o777).toBe(0o700);
    expect(statSync(dbPath).mode & 0o777).toBe(0o600);
    expect(statSync(`${dbPath}-wal`).mode & 0o777).toBe(0o600);
    journal.close();
    const raw = new BetterSqlite3(dbPath, { readonly: true });
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(raw.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    const strict = raw.prepare(`SELECT name, strict FROM pragma_table_list WHERE schema = 'main' AND name NOT LIKE 'sqlite_%'`).all() as { name: string; strict: number }[];
    expect(strict.length).toBe(12);
    expect(strict.filter((t) => t.strict !== 1)).toEqual([]);
    raw.close();
  });

  it('tightens the mode of an existing journal file to 0600', () => {
    openJournal(dbPath).journal.close();
    chmodSync(dbPath, 0o644);
    const { journal } = openJournal(dbPath);
    journal.close();
    expect(statSync(dbPath).mode & 0o777).toBe(0o600);
  });

  it('moves a garbage file aside and starts fresh, keeping the garbage byte for byte', () => {
    openJournal(dbPath).journal.close();
    const garbage = Buffer.from('this is not a database, just some text that landed here\n'.repeat(200));
    writeFileSync(dbPath, garbage);
    const res = openJournal(dbPath);
    expect(res.rebuilt).toBe(true);
    if (!res.rebuilt) return;
    expect(res.reason).toMatch(/not a SQLite database/);
    expect(res.movedTo).toMatch(/journal\.db\.corrupt-\d{8}T\d{9}Z$/);
    expect(readFileSync(res.movedTo).equals(garbage)).toBe(true);
    res.journal.putLocal(R, localFile('works'));
    expect(res.journal.getLocal(R, asRelPath('works'))).toBeDefined();
    res.journal.close();
    expect(asideFiles()).toHaveLength(1);
  });

  /** A journal of 3000 rows, closed cleanly, then 3 pages in the middle overwritten; returns the damaged bytes. */
  const damageInTheMiddle = (opts: { keepMtime: boolean }): Buffer => {
    const { journal } = openJournal(dbPath);
    journal.transaction(() => {
      for (let i = 0; i < 3000; i++) journal.putLocal(R, localFile(`folder-${i % 17}/file-${i}.txt`, { inode: i }));
    });
    journal.close();
    const before = statSync(dbPath);
    const sizeBytes = before.size;
    expect(sizeBytes).toBeGreaterThan(20 * 4096);
    overwritePages(dbPath, Math.floor(sizeBytes / 2 / 4096) * 4096, 3, opts.keepMtime);
    if (!opts.keepMtime) utimesSync(dbPath, before.atime, new Date(before.mtimeMs + 1000));
    return readFileSync(dbPath);
  };

  it('moves aside a real database damaged in the middle (changed since its clean close: checked at open)', () => {
    const damaged = damageInTheMiddle({ keepMtime: false });
    const res = openJournal(dbPath);
    expect(res.rebuilt).toBe(true);
    if (!res.rebuilt) return;
    expect(res.reason).toMatch(/integrity check failed|damaged/);
    expect(readFileSync(res.movedTo).equals(damaged)).toBe(true);
    expect([...res.journal.localUnder(R, '')]).toEqual([]);
    res.journal.close();
    expect(openJournal(dbPath).rebuilt).toBe(false);
  });

  it('checks at open when the last run did not close cleanly (no clean mark)', () => {
    damageInTheMiddle({ keepMtime: true });
    rmSync(`${dbPath}.clean`);
    const res = openJournal(dbPath);
    expect(res.rebuilt).toBe(true);
    res.journal.close();
  });

  it('checks at open when the last check is a day old, even after a clean close', () => {
    damageInTheMiddle({ keepMtime: true });
    const mark = JSON.parse(readFileSync(`${dbPath}.clean`, 'utf8')) as { checkedAtMs: number };
    writeFileSync(`${dbPath}.clean`, JSON.stringify({ ...mark, checkedAtMs: Date.now() - INTEGRITY_CHECK_EVERY_MS - 1 }));
    const res = openJournal(dbPath);
    expect(res.rebuilt).toBe(true);
    res.journal.close();
  });

  it('after a clean close the next open skips the check; damage met later stops the run, and the next open sets the file aside', () => {
    const damaged = damageInTheMiddle({ keepMtime: true });
    expect(statSync(`${dbPath}.clean`).mode & 0o777).toBe(0o600);
    const first = openJournal(dbPath);
    // Not checked: the damage is only met when a query reads the bad pages.
    expect(first.rebuilt).toBe(false);
    expect(existsSync(`${dbPath}.clean`)).toBe(false);
    let caught: unknown;
    try {
      for (let i = 0; i < 3000; i++) first.journal.localByInode(R, i);
      void [...first.journal.localUnder(R, '')];
    } catch (e) {
      caught = e;
    }
    expect(isSyncError(caught) && caught.code === 'journal_damaged' && caught.disposition === 'fatal').toBe(true);
    expect((caught as Error).message).toMatch(/next start sets the damaged file aside/);
    first.journal.close();
    // Damage seen: no clean mark, so the next open checks.
    expect(existsSync(`${dbPath}.clean`)).toBe(false);
    const second = openJournal(dbPath);
    expect(second.rebuilt).toBe(true);
    if (second.rebuilt) expect(readFileSync(second.movedTo).equals(damaged)).toBe(true);
    second.journal.close();
  });

  it('damage met through the upload sessions is reported the same way (their methods are watched too)', () => {
    const { journal } = openJournal(dbPath);
    journal.transaction(() => {
      for (let i = 0; i < 3000; i++) {
        journal.uploadSessions.put({
          key: `r:file-${i}.bin`, sessionId: `S${i}`, endpoints: { upload_part: `http://x/u/${i}`, commit: `http://x/c/${i}` }, partSizeBytes: 8,
          totalParts: 2, fileSizeBytes: 16, sourceSha1: null, sourceMtimeMs: i, expiresAtMs: i, fileId: null, parts: [],
        });
      }
    });
    journal.close();
    const sizeBytes = statSync(dbPath).size;
    overwritePages(dbPath, Math.floor(sizeBytes / 2 / 4096) * 4096, 3, true);
    const first = openJournal(dbPath);
    expect(first.rebuilt).toBe(false);
    let caught: unknown;
    try {
      first.journal.uploadSessions.list();
    } catch (e) {
      caught = e;
    }
    expect(isSyncError(caught) && caught.code === 'journal_damaged' && caught.disposition === 'fatal').toBe(true);
    first.journal.close();
    const second = openJournal(dbPath);
    expect(second.rebuilt).toBe(true);
    second.journal.close();
  });

  it('maintain() checks the journal too, and a damaged one is reported and not marked clean', () => {
    damageInTheMiddle({ keepMtime: true });
    const { journal, rebuilt } = openJournal(dbPath);
    expect(rebuilt).toBe(false);
    let caught: unknown;
    try {
      journal.maintain?.();
    } catch (e) {
      caught = e;
    }
    expect(isSyncError(caught) && caught.code === 'journal_damaged').toBe(true);
    journal.close();
    expect(existsSync(`${dbPath}.clean`)).toBe(false);
    expect(openJournal(dbPath).rebuilt).toBe(true);
  });

  it('a healthy journal: maintain() passes, and a clean close leaves the mark the next open trusts', () => {
    const { journal } = openJournal(dbPath);
    journal.setMeta('k', 'v');
    journal.maintain?.();
    journal.close();
    const mark = JSON.parse(readFileSync(`${dbPath}.clean`, 'utf8')) as { checkedAtMs: number; sizeBytes: number; mtimeMs: number };
    expect(mark.sizeBytes).toBe(statSync(dbPath).size);
    expect(Date.now() - mark.checkedAtMs).toBeLessThan(60_000);
    const again = openJournal(dbPath);
    expect(again.rebuilt).toBe(false);
    expect(again.journal.getMeta('k')).toBe('v');
    again.journal.close();
  });

  it('moves aside a database cut short (a truncated copy)', () => {
    const { journal } = openJournal(dbPath);
    journal.transaction(() => {
      for (let i = 0; i < 2000; i++) journal.putLocal(R, localFile(`t/${i}`, { inode: i }));
    });
    journal.close();
    const whole = readFileSync(dbPath);
    writeFileSync(dbPath, whole.subarray(0, Math.floor(whole.length / 3)));
    const res = openJournal(dbPath);
    expect(res.rebuilt).toBe(true);
    expect([...res.journal.localUnder(R, '')]).toEqual([]);
    res.journal.close();
  });

  it('moves aside a journal from a newer boxsync instead of misreading it', () => {
    const { journal } = openJournal(dbPath);
    journal.setMeta('marker', 'from the future');
    journal.close();
    const raw = new BetterSqlite3(dbPath);
    raw.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    raw.close();
    const res = openJournal(dbPath);
    expect(res.rebuilt).toBe(true);
    if (!res.rebuilt) return;
    expect(res.reason).toMatch(/newer than this boxsync/);
    expect(res.journal.getMeta('marker')).toBeUndefined();
    res.journal.close();
    const old = new BetterSqlite3(res.movedTo, { readonly: true });
    expect(old.prepare(`SELECT value FROM meta WHERE key = 'marker'`).get()).toEqual({ value: 'from the future' });
    old.close();
  });

  it('moves aside a foreign SQLite database that has tables but no version', () => {
    const raw = new BetterSqlite3(join(tmp.dir, 'foreign.db'));
    raw.exec('CREATE TABLE t (x)');
    raw.close();
    openJournal(dbPath).journal.close();
    writeFileSync(dbPath, readFileSync(join(tmp.dir, 'foreign.db')));
    const res = openJournal(dbPath);
    expect(res.rebuilt).toBe(true);
    if (res.rebuilt) expect(res.reason).toMatch(/no boxsync schema version/);
    res.journal.close();
  });

  it('reports a journal it cannot create as a fatal SyncError that says what happens next', () => {
    writeFileSync(join(tmp.dir, 'blocker'), 'a file where a directory should be');
    let caught: unknown;
    try {
      openJournal(join(tmp.dir, 'blocker', 'journal.db'));
    } catch (e) {
      caught = e;
    }
    expect(existsSync(join(tmp.dir, 'blocker'))).toBe(true);
    expect(isSyncError(caught) && caught.code === 'journal_unusable' && caught.disposition === 'fatal').toBe(true);
    expect((caught as Error).message).toMatch(/stops without touching any files/);
  });
});
