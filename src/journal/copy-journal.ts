/**
 * A consistent copy of a journal file, for work that must not change the real one (`sync --once --dry-run`
 * observes into the copy). SQLite's online backup reads a snapshot, WAL included, while other connections
 * keep working. Returns false when there is no journal yet (the caller then starts from an empty one).
 */
import { existsSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { SyncError } from '../core/errors.js';
import { withSqliteAddon } from './sqlite-addon.js';

export async function copyJournal(from: string, to: string): Promise<boolean> {
  if (!existsSync(from)) return false;
  let db: BetterSqlite3.Database | undefined;
  try {
    db = new BetterSqlite3(from, withSqliteAddon({ readonly: true, fileMustExist: true }));
    await db.backup(to);
    return true;
  } catch (e) {
    throw new SyncError({
      code: 'journal_unusable',
      disposition: 'fatal',
      message: `cannot read the journal ${from} (${e instanceof Error ? e.message : String(e)}); nothing was changed. Run \`boxsync sync --once\` once to check or rebuild it`,
      cause: e,
    });
  } finally {
    db?.close();
  }
}
