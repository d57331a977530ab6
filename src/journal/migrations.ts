/**
 * Schema migrations by `PRAGMA user_version`.
 *
 * A fresh journal (user_version 0, no tables) runs schema.sql whole and is stamped SCHEMA_VERSION. An older journal
 * runs, in order and in one transaction, every step whose `toVersion` is above its version. Steps are history:
 * never edit one that shipped; add a step, update schema.sql to the result, and bump SCHEMA_VERSION.
 * test/journal/migrations.test.ts checks that the steps lead to exactly the structure schema.sql creates.
 */
import type { Database } from 'better-sqlite3';
import { SCHEMA_VERSION, schemaSql } from './schema.js';

export interface Migration {
  readonly toVersion: number;
  readonly description: string;
  readonly sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    toVersion: 2,
    description: 'per-path failures with backoff, and resumable upload sessions',
    sql: `
CREATE TABLE failures (
  root             TEXT NOT NULL,
  path             TEXT NOT NULL,
  code             TEXT NOT NULL,
  message          TEXT NOT NULL,
  attempts         INTEGER NOT NULL CHECK (attempts >= 1),
  next_retry_at_ms INTEGER NOT NULL,
  disposition      TEXT NOT NULL CHECK (disposition IN ('retry', 'skip', 'replan')),
  PRIMARY KEY (root, path)
) STRICT, WITHOUT ROWID;
CREATE TABLE upload_sessions (
  key             TEXT PRIMARY KEY,
  session_id      TEXT NOT NULL,
  endpoints_json  TEXT NOT NULL,
  part_size_bytes INTEGER NOT NULL,
  total_parts     INTEGER NOT NULL,
  file_size_bytes INTEGER NOT NULL,
  source_sha1     TEXT,
  source_mtime_ms REAL NOT NULL,
  expires_at_ms   INTEGER NOT NULL,
  file_id         TEXT
) STRICT, WITHOUT ROWID;
CREATE TABLE upload_session_parts (
  key        TEXT NOT NULL REFERENCES upload_sessions (key) ON DELETE CASCADE,
  offset     INTEGER NOT NULL,
  part_id    TEXT NOT NULL,
  size_bytes INTEGER NOT NULL,
  sha1       TEXT NOT NULL,
  PRIMARY KEY (key, offset)
) STRICT, WITHOUT ROWID;
`,
  },
  {
    toVersion: 3,
    description: 'the operation history (boxsync history, boxsync info)',
    sql: `
CREATE TABLE operations (
  seq    INTEGER PRIMARY KEY,
  root   TEXT NOT NULL,
  path   TEXT NOT NULL,
  kind   TEXT NOT NULL,
  reason TEXT NOT NULL,
  ok     INTEGER NOT NULL CHECK (ok IN (0, 1)),
  error  TEXT,
  at_ms  INTEGER NOT NULL
) STRICT;
CREATE INDEX operations_path ON operations (root, path, seq);
CREATE INDEX operations_time ON operations (at_ms);
`,
  },
  {
    toVersion: 4,
    description: 'the merge base indexed by inode (the windowed planner finds both ends of a local move)',
    sql: `
CREATE INDEX synced_entries_inode ON synced_entries (root, inode);
`,
  },
  {
    toVersion: 5,
    description: 'why a path is not synced (a change of scope forgets its merge base instead of deleting it)',
    sql: `
CREATE TABLE unsynced_paths (
  root     TEXT NOT NULL,
  path     TEXT NOT NULL,
  reason   TEXT NOT NULL CHECK (reason IN ('config-exclude', 'ignore-file', 'built-in', 'not-selected')),
  kind     TEXT NOT NULL CHECK (kind IN ('file', 'folder', 'weblink')),
  since_ms INTEGER NOT NULL,
  PRIMARY KEY (root, path)
) STRICT, WITHOUT ROWID;
`,
  },
  {
    toVersion: 6,
    description: 'what a parked item waits for (the item, or a condition that can clear) and the look it is re-checked against',
    sql: `
ALTER TABLE failures ADD COLUMN park_class TEXT NOT NULL DEFAULT 'condition' CHECK (park_class IN ('item', 'condition'));
ALTER TABLE failures ADD COLUMN probe TEXT;
`,
  },
];

/** Why a journal cannot be used as it is; openJournal moves such a file aside and starts fresh. */
export class UnusableJournalError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnusableJournalError';
  }
}

export interface MigrationResult {
  readonly fromVersion: number;
  readonly toVersion: number;
}

export function migrate(db: Database): MigrationResult {
  const fromVersion = db.pragma('user_version', { simple: true }) as number;
  if (fromVersion > SCHEMA_VERSION) {
    throw new UnusableJournalError(`journal schema version ${fromVersion} is newer than this boxsync understands (${SCHEMA_VERSION})`);
  }
  if (fromVersion === SCHEMA_VERSION) return { fromVersion, toVersion: fromVersion };
  const run = db.transaction(() => {
    if (fromVersion === 0) {
      const tables = db.prepare(`SELECT count(*) AS n FROM sqlite_schema WHERE type = 'table'`).get() as { n: number };
      if (tables.n > 0) throw new UnusableJournalError('the file is a SQLite database with tables but no boxsync schema version');
      db.exec(schemaSql());
    } else {
      for (const m of MIGRATIONS.filter((x) => x.toVersion > fromVersion)) db.exec(m.sql);
    }
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  });
  run();
  return { fromVersion, toVersion: SCHEMA_VERSION };
}
