/**
 * "Before this connection writes anything": a run that finds nothing changed must not write the journal at all
 * (issue 29 point 7: the first write of a run costs the WAL's fsyncs, and two more come at close). But a run must
 * clear its roots' clean marks (engine/clean-mark.ts) before any observation it writes, so that a crash after that
 * write plans the whole root. So the clear is deferred to the first write: every statement that writes (better-
 * sqlite3's `reader` false) runs the pending action first, inside the same transaction when the write is in one, or
 * as its own commit just before it. The action runs once and is dropped before it runs (its own writes do not call
 * it again); `beforeNextWrite(null)` drops it unrun.
 *
 * The hook is on `db.prepare`, set before the tables prepare their statements, so no write statement escapes it
 * (a statement prepared later goes through it too). BEGIN and COMMIT are not statements of ours and call nothing.
 * A write that returns rows (RETURNING: a `reader`) or one through `db.exec` would pass unseen: the journal has
 * none outside its migrations, which run before this is set (keep it so).
 * A transaction (or savepoint) that rolls back after the action ran inside it undid the action's writes too: the
 * action is pending again, for the next write (`db.transaction` is wrapped for that).
 */
import type { Database, Statement } from 'better-sqlite3';

export interface WriteWatch {
  /** Runs `action` right before the next write of this connection; null drops the one pending. */
  beforeNextWrite(action: (() => void) | null): void;
}

type Tx = ReturnType<Database['transaction']>;

export function watchWrites(db: Database): WriteWatch {
  let pending: (() => void) | null = null;
  /** The action that ran last, and how many have run. */
  let last: (() => void) | null = null;
  let fired = 0;
  const transaction = db.transaction.bind(db);
  (db as { transaction: (fn: (...a: unknown[]) => unknown) => Tx }).transaction = (fn) => {
    const tx = transaction(fn);
    const undone = (f: (...a: unknown[]) => unknown) => (...args: unknown[]): unknown => {
      const at = fired;
      try {
        return f(...args);
      } catch (e) {
        if (fired > at) pending = last;
        throw e;
      }
    };
    return Object.assign(undone(tx), { default: undone(tx.default), deferred: undone(tx.deferred), immediate: undone(tx.immediate), exclusive: undone(tx.exclusive) }) as Tx;
  };
  const prepare = db.prepare.bind(db) as (source: string) => Statement;
  (db as { prepare: (source: string) => Statement }).prepare = (source: string): Statement => {
    const stmt = prepare(source);
    if (stmt.reader) return stmt;
    const run = stmt.run.bind(stmt);
    stmt.run = ((...params: unknown[]) => {
      if (pending !== null) {
        const action = pending;
        pending = null;
        last = action;
        fired += 1;
        try {
          action();
        } catch (e) {
          // Not done: still pending, and this write does not happen.
          pending = action;
          throw e;
        }
      }
      return run(...params);
    }) as typeof stmt.run;
    return stmt;
  };
  return {
    beforeNextWrite(action) {
      pending = action;
    },
  };
}
