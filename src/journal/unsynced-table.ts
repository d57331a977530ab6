/**
 * The unsynced_paths table: why a path of a root is deliberately not synced. Also the one place that
 * forgets a whole root (a folder pair removed from the config): its merge base, local rows, failures and these.
 */
import type { Database, Statement } from 'better-sqlite3';
import { asRelPath, asRootId, type RootId } from '../core/model.js';
import type { UnsyncedRecord } from '../ports/journal.js';

interface UnsyncedRow {
  readonly root: string;
  readonly path: string;
  readonly reason: UnsyncedRecord['reason'];
  readonly kind: UnsyncedRecord['kind'];
  readonly since_ms: number;
}

const COLS = 'root, path, reason, kind, since_ms';

const fromRow = (r: UnsyncedRow): UnsyncedRecord => ({
  root: asRootId(r.root),
  path: asRelPath(r.path),
  reason: r.reason,
  kind: r.kind,
  sinceMs: r.since_ms,
});

export class UnsyncedTable {
  readonly #put: Statement<[UnsyncedRow]>;
  readonly #delete: Statement<[string, string]>;
  readonly #all: Statement<[], UnsyncedRow>;
  readonly #ofRoot: Statement<[string], UnsyncedRow>;
  readonly #nextRoot: Statement<[string], { root: string }>;
  readonly #forget: readonly Statement<[string]>[];

  constructor(db: Database) {
    this.#put = db.prepare(`INSERT OR REPLACE INTO unsynced_paths (${COLS}) VALUES (@root, @path, @reason, @kind, @since_ms)`);
    this.#delete = db.prepare(`DELETE FROM unsynced_paths WHERE root = ? AND path = ?`);
    this.#all = db.prepare(`SELECT ${COLS} FROM unsynced_paths ORDER BY root, path`);
    this.#ofRoot = db.prepare(`SELECT ${COLS} FROM unsynced_paths WHERE root = ? ORDER BY path`);
    // One index seek per root (the primary key starts with root), not a scan of every synced row.
    this.#nextRoot = db.prepare(`SELECT root FROM synced_entries WHERE root > ? ORDER BY root LIMIT 1`);
    this.#forget = ['synced_entries', 'local_entries', 'local_listing_marks', 'failures', 'unsynced_paths'].map((t) => db.prepare(`DELETE FROM ${t} WHERE root = ?`));
  }

  put(u: UnsyncedRecord): void {
    this.#put.run({ root: u.root, path: u.path, reason: u.reason, kind: u.kind, since_ms: u.sinceMs });
  }

  delete(root: RootId, path: string): void {
    this.#delete.run(root, path);
  }

  list(root?: RootId): UnsyncedRecord[] {
    return (root === undefined ? this.#all.all() : this.#ofRoot.all(root)).map(fromRow);
  }

  syncedRoots(): RootId[] {
    const out: RootId[] = [];
    for (let r = this.#nextRoot.get(''); r !== undefined && out.length < 100_000; r = this.#nextRoot.get(r.root)) out.push(asRootId(r.root));
    return out;
  }

  forgetRoot(root: RootId): void {
    for (const s of this.#forget) s.run(root);
  }
}
