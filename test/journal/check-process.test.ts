/**
 * The journal's integrity check in a process of its own (src/journal/check-process.ts), on real SQLite files: the
 * daemon's maintenance (maintainOffThread) and its open (openJournalCheckedApart) find damage as the
 * synchronous check does and handle it the same way (a fatal journal_damaged error and no clean mark; at open, the
 * file set aside and a fresh journal), and a check can be stopped.
 */
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { asRootId } from '../../src/core/model.js';
import { isSyncError } from '../../src/core/errors.js';
import { checksRunning, quickCheckInProcess } from '../../src/journal/check-process.js';
import { openJournal, openJournalCheckedApart } from '../../src/journal/open-journal.js';
import { makeTempDir } from '../support/tmp.js';
import { waitFor } from '../support/wait.js';
import { damagePage, middleLeafPage } from './damage.js';
import { localFile } from './entries.js';

const R = asRootId('r');

let tmp: { dir: string; cleanup: () => Promise<void> };
let dbPath: string;

beforeEach(async () => {
  tmp = await makeTempDir('boxsync-check-process-');
  dbPath = join(tmp.dir, 'state', 'journal.db');
});
afterEach(async () => {
  await tmp.cleanup();
});

/** A journal of `rows` local rows, closed cleanly (a clean mark the next open trusts). */
function filled(rows = 3000): void {
  const { journal } = openJournal(dbPath);
  journal.transaction(() => {
    for (let i = 0; i < rows; i++) journal.putLocal(R, localFile(`folder-${i % 17}/file-${i}.txt`, { inode: i }));
  });
  journal.close();
}

describe('the journal check in its own process', () => {
  it('maintainOffThread passes on a sound journal, beside the open connection, and the clean close keeps the mark', async () => {
    filled();
    const { journal } = openJournal(dbPath);
    journal.setMeta('k', 'v');
    let upkeepAsked = 0;
    const t = await journal.maintainOffThread!({ beforeUpkeep: async () => void (upkeepAsked += 1) });
    expect(upkeepAsked).toBe(1);
    expect(t.checkMs).toBeGreaterThan(0);
    journal.close();
    expect(existsSync(`${dbPath}.clean`)).toBe(true);
    await waitFor(() => !checksRunning(), { timeoutMs: 60_000, what: 'the check process to end' });
  });

  it('maintainOffThread finds damage the open did not check: journal_damaged (fatal), no clean mark, the next open sets the file aside', async () => {
    filled();
    damagePage(dbPath, middleLeafPage(dbPath, 'local_entries'), true);
    const damaged = readFileSync(dbPath);
    const { journal, rebuilt } = openJournal(dbPath);
    expect(rebuilt).toBe(false);
    const caught = await journal.maintainOffThread!().then(() => null, (e: unknown) => e);
    expect(isSyncError(caught) && caught.code === 'journal_damaged' && caught.disposition === 'fatal').toBe(true);
    // The pragma reports the bad page, or SQLite stops it with SQLITE_CORRUPT: either way the same fatal error.
    expect((caught as Error).message).toMatch(/failed its integrity check|is damaged \(SQLITE_CORRUPT/);
    expect((caught as Error).message).toMatch(/next start sets the damaged file aside/);
    journal.close();
    expect(existsSync(`${dbPath}.clean`)).toBe(false);
    const next = openJournal(dbPath);
    expect(next.rebuilt).toBe(true);
    if (next.rebuilt) expect(readFileSync(next.movedTo).equals(damaged)).toBe(true);
    next.journal.close();
  });

  it('openJournalCheckedApart: a due check on a sound file runs in the process and the open does not check again', async () => {
    filled();
    rmSync(`${dbPath}.clean`);
    const res = await openJournalCheckedApart(dbPath);
    expect(res.rebuilt).toBe(false);
    expect(res.journal.countLocalUnder(R, '', 10_000)).toBe(3000);
    res.journal.close();
    // The check it made counts as the last one: the mark written at close is fresh.
    const mark = JSON.parse(readFileSync(`${dbPath}.clean`, 'utf8')) as { checkedAtMs: number; sizeBytes: number };
    expect(Date.now() - mark.checkedAtMs).toBeLessThan(60_000);
    expect(mark.sizeBytes).toBe(statSync(dbPath).size);
  });

  it('openJournalCheckedApart: a check not due (a clean mark of an hour ago, the file unchanged) runs nowhere, and the mark keeps its time', async () => {
    filled();
    const mark = JSON.parse(readFileSync(`${dbPath}.clean`, 'utf8')) as { checkedAtMs: number; sizeBytes: number; mtimeMs: number };
    const hourAgo = Date.now() - 60 * 60 * 1000;
    writeFileSync(`${dbPath}.clean`, JSON.stringify({ ...mark, checkedAtMs: hourAgo }));
    // A check, were it run, would not finish in its time: the open would say so and leave no mark.
    const res = await openJournalCheckedApart(dbPath, { repeat: 1_000_000, checkTimeoutMs: 300 });
    expect(res.rebuilt).toBe(false);
    if (res.rebuilt) return;
    expect(res.checkUnfinished).toBeUndefined();
    expect(checksRunning()).toBe(false);
    expect(res.journal.countLocalUnder(R, '', 10_000)).toBe(3000);
    res.journal.close();
    // No check since the mark's: the close carries its time over (a check here or apart would have written now).
    expect((JSON.parse(readFileSync(`${dbPath}.clean`, 'utf8')) as { checkedAtMs: number }).checkedAtMs).toBe(hourAgo);
  });

  it('openJournalCheckedApart: a damaged file whose check is due is set aside and a fresh journal opened, as openJournal does', async () => {
    filled();
    damagePage(dbPath, middleLeafPage(dbPath, 'local_entries'), true);
    rmSync(`${dbPath}.clean`);
    const damaged = readFileSync(dbPath);
    const res = await openJournalCheckedApart(dbPath);
    expect(res.rebuilt).toBe(true);
    if (!res.rebuilt) return;
    expect(res.reason).toMatch(/integrity check failed|damaged/);
    // Acted on the process's answer: the open did not check the file again on this thread (that reason would not say so).
    expect(res.reason).toContain('in its own process');
    expect(readFileSync(res.movedTo).equals(damaged)).toBe(true);
    expect(res.journal.countLocalUnder(R, '', 10)).toBe(0);
    res.journal.close();
  });

  it('a check stopped by its signal answers at once with ABORT_ERR, and its process ends', async () => {
    filled();
    const stop = new AbortController();
    // Many rounds: the check is still running when it is stopped.
    const running = quickCheckInProcess(dbPath, { repeat: 1000, signal: stop.signal });
    expect(checksRunning()).toBe(true);
    stop.abort();
    const r = await running;
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.code).toBe('ABORT_ERR');
    await waitFor(() => !checksRunning(), { timeoutMs: 60_000, what: 'the stopped check process to end' });
  });

  it('a check past its time limit is stopped: CHECK_TIMEOUT, said clearly, and its process ends', async () => {
    filled();
    // A million rounds: far past the limit however fast the machine.
    const r = await quickCheckInProcess(dbPath, { repeat: 1_000_000, timeoutMs: 300 });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe('CHECK_TIMEOUT');
      expect(r.error.message).toMatch(/did not finish within 0\.3 s/);
    }
    await waitFor(() => !checksRunning(), { timeoutMs: 60_000, what: 'the timed-out check process to end' });
  });

  it('openJournalCheckedApart: a due check past its limit opens the journal as it is, says so, and leaves the check due', async () => {
    filled();
    rmSync(`${dbPath}.clean`);
    const before = readFileSync(dbPath);
    const res = await openJournalCheckedApart(dbPath, { repeat: 1_000_000, checkTimeoutMs: 300 });
    expect(res.rebuilt).toBe(false);
    if (res.rebuilt) return;
    expect(res.checkUnfinished).toMatch(/did not finish within 0\.3 s.*used as it is.*checked again at the next start/);
    expect(res.journal.countLocalUnder(R, '', 10_000)).toBe(3000);
    res.journal.close();
    // Nothing set aside, and no clean mark: the close does not claim a check that did not finish.
    expect(readFileSync(dbPath).length).toBe(before.length);
    expect(existsSync(`${dbPath}.clean`)).toBe(false);
    await waitFor(() => !checksRunning(), { timeoutMs: 60_000, what: 'the timed-out check process to end' });
  });

  it('openJournalCheckedApart: stopped by its signal, it rejects and opens nothing (no check on this thread, nothing set aside)', async () => {
    filled();
    rmSync(`${dbPath}.clean`);
    const stop = new AbortController();
    const opening = openJournalCheckedApart(dbPath, { repeat: 1_000_000, signal: stop.signal });
    await waitFor(() => checksRunning(), { timeoutMs: 60_000, what: 'the check process to start' });
    stop.abort();
    const caught = await opening.then(() => null, (e: unknown) => e);
    expect((caught as { code?: string } | null)?.code).toBe('ABORT_ERR');
    expect(existsSync(dbPath)).toBe(true);
    expect(existsSync(`${dbPath}-wal`)).toBe(false);
    await waitFor(() => !checksRunning(), { timeoutMs: 60_000, what: 'the stopped check process to end' });
  });

  it('maintainOffThread past its limit rejects with a plain error (not journal_damaged) and runs no upkeep', async () => {
    filled();
    const { journal } = openJournal(dbPath);
    let upkeepAsked = 0;
    const caught = await journal.maintainOffThread!({ repeat: 1_000_000, timeoutMs: 300, beforeUpkeep: async () => void (upkeepAsked += 1) }).then(() => null, (e: unknown) => e);
    expect(isSyncError(caught)).toBe(false);
    expect((caught as Error).message).toMatch(/did not finish within 0\.3 s.*next maintenance checks it again/);
    expect(upkeepAsked).toBe(0);
    // Once its process is gone, this connection is the last one: its close removes the WAL.
    await waitFor(() => !checksRunning(), { timeoutMs: 60_000, what: 'the timed-out check process to end' });
    journal.close();
    // Not damage: the journal closes clean (the check at its open still counts).
    expect(existsSync(`${dbPath}.clean`)).toBe(true);
  });

  it('maintainOffThread: the statistics are written by the check process, read by the open connection, and the WAL is truncated', async () => {
    filled();
    const { journal } = openJournal(dbPath);
    journal.transaction(() => {
      for (let i = 0; i < 500; i++) journal.putLocal(R, localFile(`more/file-${i}.txt`, { inode: 10_000 + i }));
    });
    expect(statSync(`${dbPath}-wal`).size).toBeGreaterThan(0);
    await journal.maintainOffThread!();
    expect(statSync(`${dbPath}-wal`).size).toBe(0);
    const reader = new BetterSqlite3(dbPath, { readonly: true });
    try {
      const stats = reader.prepare(`SELECT tbl FROM sqlite_stat1 WHERE tbl = 'local_entries'`).all();
      expect(stats.length).toBeGreaterThan(0);
    } finally {
      reader.close();
    }
    expect(journal.countLocalUnder(R, '', 10_000)).toBe(3500);
    journal.close();
  });

  it('a missing file: the check answers with an error (never throws)', async () => {
    const r = await quickCheckInProcess(join(tmp.dir, 'no-such-journal.db'));
    expect(r.ok).toBe(false);
  });
});
