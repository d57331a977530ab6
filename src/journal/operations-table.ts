/**
 * The operation history: one row per operation the engine finished (or failed), with its reason, for
 * `boxsync history` and the "last operation" of `boxsync info` / `status PATH`. Bounded: the oldest rows go once
 * the table holds more than MAX_ROWS (checked every PRUNE_EVERY inserts).
 */
import type { Database, Statement } from 'better-sqlite3';
import { asRelPath, asRootId, type RelPath, type RootId } from '../core/model.js';
import type { OperationQuery, OperationRecord } from '../ports/journal.js';

interface OperationRow {
  readonly seq: number;
  readonly root: string;
  readonly path: string;
  readonly kind: string;
  readonly reason: string;
  readonly ok: number;
  readonly error: string | null;
  readonly at_ms: number;
}

export const MAX_OPERATION_ROWS = 100_000;
const PRUNE_EVERY = 1_000;

const fromRow = (r: OperationRow): OperationRecord => ({
  seq: r.seq,
  root: asRootId(r.root),
  path: asRelPath(r.path),
  kind: r.kind,
  reason: r.reason,
  ok: r.ok === 1,
  error: r.error,
  atMs: r.at_ms,
});

export class OperationsTable {
  readonly #db: Database;
  readonly #insert: Statement<[string, string, string, string, number, string | null, number]>;
  readonly #last: Statement<[string, string], OperationRow>;
  readonly #prune: Statement<[number]>;
  #sincePrune = 0;

  constructor(db: Database) {
    this.#db = db;
    this.#insert = db.prepare(`INSERT INTO operations (root, path, kind, reason, ok, error, at_ms) VALUES (?, ?, ?, ?, ?, ?, ?)`);
    this.#last = db.prepare(`SELECT * FROM operations WHERE root = ? AND path = ? ORDER BY seq DESC LIMIT 1`);
    this.#prune = db.prepare(`DELETE FROM operations WHERE seq <= (SELECT max(seq) FROM operations) - ?`);
  }

  record(op: Omit<OperationRecord, 'seq'>): void {
    // A problem the planner reports is reported again on every run while it lasts: keep one row for it.
    if (op.kind === 'report') {
      const last = this.#last.get(op.root, op.path);
      if (last && last.kind === op.kind && last.reason === op.reason && last.error === op.error) return;
    }
    this.#insert.run(op.root, op.path, op.kind, op.reason, op.ok ? 1 : 0, op.error, Math.trunc(op.atMs));
    if (++this.#sincePrune >= PRUNE_EVERY) {
      this.#sincePrune = 0;
      this.#prune.run(MAX_OPERATION_ROWS);
    }
  }

  last(root: RootId, path: RelPath): OperationRecord | undefined {
    const r = this.#last.get(root, path);
    return r ? fromRow(r) : undefined;
  }

  /** Newest first. `under` (with `path`) takes the path and everything below it. */
  query(q: OperationQuery): readonly OperationRecord[] {
    const where: string[] = [];
    const args: (string | number)[] = [];
    if (q.root !== undefined) {
      where.push('root = ?');
      args.push(q.root);
    }
    if (q.path !== undefined && q.path !== '') {
      // The subtree range (the conventions of journal/migrations.ts): '0' is the byte after '/'.
      where.push(q.under === false ? 'path = ?' : `(path = ? OR (path > ? || '/' AND path < ? || '0'))`);
      args.push(...(q.under === false ? [q.path] : [q.path, q.path, q.path]));
    }
    if (q.sinceMs !== undefined) {
      where.push('at_ms >= ?');
      args.push(Math.trunc(q.sinceMs));
    }
    const sql = `SELECT * FROM operations ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY seq DESC LIMIT ?`;
    return (this.#db.prepare(sql).all(...args, q.limit ?? 1000) as OperationRow[]).map(fromRow);
  }
}
