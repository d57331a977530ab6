/**
 * The journal schema, written once: the steps below, by `PRAGMA user_version`. A fresh journal (user_version 0,
 * no tables) runs them all; an older journal runs, in order, every step whose `toVersion` is above its version;
 * either in one transaction. Each table's meaning is said in the step that creates it, a later column's in the
 * step that adds it. Steps are history: never edit the SQL of one that shipped (comments aside); add a step.
 * test/journal/migrations.test.ts checks that step 1 still makes the structure version 1 shipped with (frozen
 * in its fixtures), and that such a journal brought forward has exactly the structure of a fresh one, rows kept.
 */
import type { Database } from 'better-sqlite3';

export interface Migration {
  readonly toVersion: number;
  readonly description: string;
  readonly sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    toVersion: 1,
    description: 'the trees, the stream cursors and the trashed ids',
    sql: `
-- Conventions of every step: every table is STRICT. Paths are relative to their sync root, '/'-separated, no
-- leading or trailing slash, compared with the BINARY collation, so that the rows of a subtree p are exactly those
-- with path = p OR (path > p || '/' AND path < p || '0') ('0' is the byte after '/'): one indexed range scan.
-- Times are epoch milliseconds (REAL where the file system gives fractions). Sizes are bytes. Box ids and
-- sequence ids are TEXT (opaque, and sequence ids and stream positions can exceed 2^53).

-- Key/value facts about the journal and the account: schema facts, last successful sync time, account id.
-- Values are strings; callers encode anything else.
CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT, WITHOUT ROWID;

-- The remote tree: the last observed state of each Box item, keyed by Box id alone (two roots never contain the
-- same item, so the rows of all roots share this table). Items hang off their parent by id, never by path, so a
-- remote folder rename is one row update; paths are derived by walking parent_id up to the root's folder.
-- status is 'active' for anything a listing returned; events may record 'trashed' or 'deleted'.
CREATE TABLE remote_items (
  id             TEXT PRIMARY KEY,
  kind           TEXT NOT NULL CHECK (kind IN ('file', 'folder', 'weblink')),
  parent_id      TEXT,
  name           TEXT NOT NULL,
  etag           TEXT NOT NULL,
  sequence_id    TEXT NOT NULL,
  sha1           TEXT,
  size_bytes     INTEGER NOT NULL,
  modified_at_ms INTEGER NOT NULL,
  version_id     TEXT,
  url            TEXT,
  status         TEXT NOT NULL CHECK (status IN ('active', 'trashed', 'deleted'))
) STRICT, WITHOUT ROWID;
-- Children of a folder (listing order is by name), and the recursive walk of deleteRemoteSubtree.
CREATE INDEX remote_items_parent ON remote_items (parent_id, name);

-- The local tree: the last observed state of each disk entry of each root, keyed by (root, path). sha1 is NULL
-- for folders, symlinks, special files, and files not hashed yet. The inode index finds the old path of a moved
-- file or folder (move detection).
CREATE TABLE local_entries (
  root       TEXT NOT NULL,
  path       TEXT NOT NULL,
  kind       TEXT NOT NULL CHECK (kind IN ('file', 'folder', 'symlink', 'other')),
  inode      INTEGER NOT NULL,
  size_bytes INTEGER NOT NULL,
  mtime_ms   REAL NOT NULL,
  sha1       TEXT,
  PRIMARY KEY (root, path)
) STRICT, WITHOUT ROWID;
CREATE INDEX local_entries_inode ON local_entries (root, inode);

-- The synced tree (merge base): for each path of each root, the state both sides agreed on after the last
-- successful operation: the remote side (remote_id, etag, sha1, version) and the local side (inode, mtime) so
-- that a change on either side is seen without hashing. A Box item is synced at one path at most per root
-- (unique index); writing it at a new path replaces its row at the old one.
CREATE TABLE synced_entries (
  root       TEXT NOT NULL,
  path       TEXT NOT NULL,
  remote_id  TEXT NOT NULL,
  kind       TEXT NOT NULL CHECK (kind IN ('file', 'folder', 'weblink')),
  etag       TEXT NOT NULL,
  sha1       TEXT,
  version_id TEXT,
  size_bytes INTEGER NOT NULL,
  inode      INTEGER NOT NULL,
  mtime_ms   REAL NOT NULL,
  url        TEXT,
  PRIMARY KEY (root, path)
) STRICT, WITHOUT ROWID;
CREATE UNIQUE INDEX synced_entries_remote_id ON synced_entries (root, remote_id);

-- Event stream cursors, one per stream type ('changes', 'sync'), as the lossless decimal string Box sent. Saved
-- in the same transaction as the observations the events led to.
CREATE TABLE stream_cursors (
  name     TEXT PRIMARY KEY,
  position TEXT NOT NULL
) STRICT, WITHOUT ROWID;

-- Box ids observed in the Box trash, so that an edit against a trashed item restores it (keeping its id,
-- versions and shared links) instead of uploading a new file.
CREATE TABLE trashed_remote_ids (
  id TEXT PRIMARY KEY
) STRICT, WITHOUT ROWID;
`,
  },
  {
    toVersion: 2,
    description: 'per-path failures with backoff, and resumable upload sessions',
    sql: `
-- Per-path failures with backoff (the "item" retry layer): one row per failing path of a root. attempts counts
-- consecutive failures; next_retry_at_ms says when the planner may try the path again. 'skip' rows wait for the
-- item to change; 'retry' rows back off; 'replan' rows are re-observed. A success clears the row.
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

-- Resumable Box upload sessions, keyed by the caller's resume key (usually "<root>:<path>"), saved as soon as
-- the session is created so a new process can resume it. endpoints_json is the session_endpoints object.
-- source_sha1 / source_mtime_ms identify the file the session was started for: a changed file cannot resume.
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

-- The parts of an upload session the server confirmed, one row per part (by byte offset); dropped with their
-- session.
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
-- The operation history: one row per operation the engine finished or failed, with its reason, newest by seq.
-- Read by 'boxsync history' (by time, or by path and its subtree) and 'boxsync info' (the last one of a path).
-- Bounded: the oldest rows are pruned once it holds more than 100,000.
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
-- The base row a local entry had before a local move (the windowed planner finds both ends of a move by it).
CREATE INDEX synced_entries_inode ON synced_entries (root, inode);
`,
  },
  {
    toVersion: 5,
    description: 'why a path is not synced (a change of scope forgets its merge base instead of deleting it)',
    sql: `
-- Paths of a root deliberately left out of syncing, and why: a change of what is synced is never a
-- delete. When a path that was in the merge base becomes excluded, its synced rows are forgotten and a row here
-- says why, in the same transaction; when it is included again the row goes and the path is synced afresh (a first
-- sync: both sides kept, nothing deleted). reason: 'config-exclude' (folders[].exclude), 'ignore-file'
-- (.boxsyncignore), 'built-in' (boxsync's default ignore rules), 'not-selected' (selective sync: reserved).
-- kind is what the path was when it left ('file', 'folder', 'weblink').
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
-- park_class: what a park waits for ('item': the item to change; 'condition': a cause that can clear, re-checked;
-- see core/park-class.ts). probe: the look at the item and its folder a condition park is re-checked against.
ALTER TABLE failures ADD COLUMN park_class TEXT NOT NULL DEFAULT 'condition' CHECK (park_class IN ('item', 'condition'));
ALTER TABLE failures ADD COLUMN probe TEXT;
`,
  },
  {
    toVersion: 7,
    description: 'the Box id of a parked item, so that a change of that item finds its park by id',
    sql: `
-- remote_id: the Box id of the item a failure is about, when the failure names one (an item Box sent that cannot
-- be synced is parked under its name or its id, not under a path the remote tree knows). A change of that item
-- clears the park, found by this index. Parks recorded before this step said the id only in their message text
-- ("(Box id N)"): it is copied out of there.
ALTER TABLE failures ADD COLUMN remote_id TEXT;
CREATE INDEX failures_remote_id ON failures (remote_id) WHERE remote_id IS NOT NULL;
UPDATE failures
   SET remote_id = substr(message, instr(message, '(Box id ') + 8, instr(substr(message, instr(message, '(Box id ') + 8), ')') - 1)
 WHERE code = 'remote_item_invalid' AND instr(message, '(Box id ') > 0;
`,
  },
  {
    toVersion: 8,
    description: 'since when an item has been failing (kept across its retries, gone with its failure)',
    sql: `
-- first_failed_at_ms: when the item's current run of failures began (epoch ms). A retry that fails again keeps it;
-- it goes with the row when the failure clears. Rows recorded before this step have none (NULL) until their next
-- attempt records one.
ALTER TABLE failures ADD COLUMN first_failed_at_ms INTEGER;
`,
  },
  {
    toVersion: 9,
    description: "listing marks: a folder's listing as a full scan last found it equal to the journal's rows",
    sql: `
-- A listing mark (local/scan.ts, engine/observe-local.ts): the digest of one folder's whole listing (every name,
-- kind, size, mtime and inode, as the native walk reads them) when a full scan found every entry of it equal to its
-- row here, and how many entries it reported. A later full scan that reads the same listing and finds the mark
-- skips comparing that folder's rows (it still walks its subfolders). Any write of a row of the folder drops the
-- mark (the triggers below), so a mark only stands while the rows are those the listing matched. The parent of a
-- path is rtrim(rtrim(p, <p without its slashes>), '/'): 'a/b/c' -> 'a/b', 'c' -> ''.
CREATE TABLE local_listing_marks (
  root    TEXT NOT NULL,
  dir     TEXT NOT NULL,
  mark    TEXT NOT NULL,
  entries INTEGER NOT NULL,
  PRIMARY KEY (root, dir)
) STRICT, WITHOUT ROWID;
CREATE TRIGGER local_entries_insert_unmarks AFTER INSERT ON local_entries BEGIN
  DELETE FROM local_listing_marks WHERE root = NEW.root AND dir = rtrim(rtrim(NEW.path, replace(NEW.path, '/', '')), '/');
END;
CREATE TRIGGER local_entries_update_unmarks AFTER UPDATE ON local_entries BEGIN
  DELETE FROM local_listing_marks WHERE root = OLD.root AND dir = rtrim(rtrim(OLD.path, replace(OLD.path, '/', '')), '/');
  DELETE FROM local_listing_marks WHERE root = NEW.root AND dir = rtrim(rtrim(NEW.path, replace(NEW.path, '/', '')), '/');
END;
CREATE TRIGGER local_entries_delete_unmarks AFTER DELETE ON local_entries BEGIN
  DELETE FROM local_listing_marks WHERE root = OLD.root AND dir = rtrim(rtrim(OLD.path, replace(OLD.path, '/', '')), '/');
END;
`,
  },
];

/** The user_version a journal has once the steps ran: the last step's. */
export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.toVersion;

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
    }
    for (const m of MIGRATIONS.filter((x) => x.toVersion > fromVersion)) db.exec(m.sql);
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  });
  run();
  return { fromVersion, toVersion: SCHEMA_VERSION };
}
