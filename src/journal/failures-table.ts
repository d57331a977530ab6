/** The per-path failures table (the "item" retry layer). */
import type { Database, Statement } from 'better-sqlite3';
import { asRelPath, asRemoteId, asRootId, type RelPath, type RemoteId, type RootId } from '../core/model.js';
import type { FailureRecord } from '../ports/journal.js';
import { parkClassOf, type ParkClass } from '../core/park-class.js';

interface FailureRow {
  readonly root: string;
  readonly path: string;
  readonly code: string;
  readonly message: string;
  readonly attempts: number;
  readonly next_retry_at_ms: number;
  readonly disposition: FailureRecord['disposition'];
  readonly park_class: ParkClass;
  readonly probe: string | null;
  readonly remote_id: string | null;
  readonly first_failed_at_ms: number | null;
}

const COLS = 'root, path, code, message, attempts, next_retry_at_ms, disposition, park_class, probe, remote_id, first_failed_at_ms';

const fromRow = (r: FailureRow): FailureRecord => ({
  root: asRootId(r.root),
  path: asRelPath(r.path),
  code: r.code,
  message: r.message,
  attempts: r.attempts,
  nextRetryAtMs: r.next_retry_at_ms,
  disposition: r.disposition,
  parkClass: r.park_class,
  probe: r.probe,
  remoteId: r.remote_id === null ? null : asRemoteId(r.remote_id),
  firstFailedAtMs: r.first_failed_at_ms,
});

export class FailuresTable {
  readonly #put: Statement<[FailureRow]>;
  readonly #get: Statement<[string, string], FailureRow>;
  readonly #clear: Statement<[string, string]>;
  readonly #all: Statement<[], FailureRow>;
  readonly #ofRoot: Statement<[string], FailureRow>;
  readonly #ofRemoteId: Statement<[string], FailureRow>;
  readonly #parked: Statement<[string], FailureRow>;

  constructor(db: Database) {
    // A failure recorded again for the same item keeps the time its run of failures began (first_failed_at_ms).
    this.#put = db.prepare(
      `INSERT INTO failures (${COLS}) VALUES (@root, @path, @code, @message, @attempts, @next_retry_at_ms, @disposition, @park_class, @probe, @remote_id, @first_failed_at_ms)
       ON CONFLICT (root, path) DO UPDATE SET code = excluded.code, message = excluded.message, attempts = excluded.attempts,
         next_retry_at_ms = excluded.next_retry_at_ms, disposition = excluded.disposition, park_class = excluded.park_class,
         probe = excluded.probe, remote_id = excluded.remote_id,
         first_failed_at_ms = coalesce(failures.first_failed_at_ms, excluded.first_failed_at_ms)`,
    );
    this.#get = db.prepare(`SELECT ${COLS} FROM failures WHERE root = ? AND path = ?`);
    this.#clear = db.prepare(`DELETE FROM failures WHERE root = ? AND path = ?`);
    this.#all = db.prepare(`SELECT ${COLS} FROM failures ORDER BY root, path`);
    this.#ofRoot = db.prepare(`SELECT ${COLS} FROM failures WHERE root = ? ORDER BY path`);
    this.#ofRemoteId = db.prepare(`SELECT ${COLS} FROM failures WHERE remote_id = ? ORDER BY root, path`);
    this.#parked = db.prepare(`SELECT ${COLS} FROM failures WHERE disposition = 'skip' OR code = ? ORDER BY root, path`);
  }

  /**
   * Replaces the path's previous record (the caller computes attempts and the next retry time), but for the time the
   * item began failing: a new row takes `firstFailedAtMs` (now when not given), a row already there keeps its own.
   */
  record(f: FailureRecord): void {
    this.#put.run({
      root: f.root,
      path: f.path,
      code: f.code,
      message: f.message,
      attempts: Math.max(1, Math.trunc(f.attempts)),
      next_retry_at_ms: Math.trunc(f.nextRetryAtMs),
      disposition: f.disposition,
      park_class: f.parkClass ?? parkClassOf(f.code),
      probe: f.probe ?? null,
      remote_id: f.remoteId ?? null,
      first_failed_at_ms: Math.trunc(f.firstFailedAtMs ?? Date.now()),
    });
  }

  get(root: RootId, path: RelPath): FailureRecord | undefined {
    const r = this.#get.get(root, path);
    return r === undefined ? undefined : fromRow(r);
  }

  clear(root: RootId, path: RelPath): void {
    this.#clear.run(root, path);
  }

  ofRemoteId(id: RemoteId): readonly FailureRecord[] {
    return this.#ofRemoteId.all(id).map(fromRow);
  }

  /** The 'skip' failures and those of `code`: what a changed item may clear (engine/remote-hints.ts). */
  parked(code: string): readonly FailureRecord[] {
    return this.#parked.all(code).map(fromRow);
  }

  list(root?: RootId): readonly FailureRecord[] {
    return (root === undefined ? this.#all.all() : this.#ofRoot.all(root)).map(fromRow);
  }
}
