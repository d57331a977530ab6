/**
 * "Before this journal writes anything": a run that finds nothing changed must not write the journal at all
 * (issue 29 point 7: the first write of a run costs the WAL's fsyncs, and two more come at close). But a run must
 * clear its roots' clean marks (engine/clean-mark.ts) before any observation it writes, so that a crash after that
 * write plans the whole root. So the clear is deferred to the first write: every write method of SqliteJournal
 * (and of its upload sessions) calls `before()` first, the one gate its writes pass, which runs the pending action,
 * inside the same transaction when the write is in one, or as its own commit just before it. The action runs once
 * and is dropped before it runs (its own writes do not call it again); `beforeNextWrite(null)` drops it unrun.
 * A method that writes only sometimes (a value set again is no write) calls it only when it writes.
 *
 * A transaction (or savepoint) of the journal that rolls back after the action ran inside it undid the action's
 * writes too: the action is pending again, for the next write (`undoable` wraps each of SqliteJournal's transactions).
 * The driver's objects (better-sqlite3's connection and statements) are not touched.
 */

export class FirstWrite {
  #pending: (() => void) | null = null;
  /** The action that ran last, and how many have run. */
  #last: (() => void) | null = null;
  #fired = 0;

  /** Runs `action` right before the next write of this journal; null drops the one pending. */
  beforeNextWrite(action: (() => void) | null): void {
    this.#pending = action;
  }

  /** Called by every write, before it: runs the pending action, if any. */
  before(): void {
    const action = this.#pending;
    if (action === null) return;
    this.#pending = null;
    this.#last = action;
    this.#fired += 1;
    try {
      action();
    } catch (e) {
      // Not done: still pending, and this write does not happen.
      this.#pending = action;
      throw e;
    }
  }

  /** Runs a transaction: when it throws (rolled back) after the action ran inside it, the action is pending again. */
  undoable<T>(tx: () => T): T {
    const at = this.#fired;
    try {
      return tx();
    } catch (e) {
      if (this.#fired > at) this.#pending = this.#last;
      throw e;
    }
  }
}
