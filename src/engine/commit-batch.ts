/**
 * Group commit of finished operations.
 *
 * Each operation's outcome is written to the journal as soon as it ends (progress survives a crash mid-batch),
 * but a journal commit per operation cost more than many of the operations (a small download's commit wrote its
 * pages to the WAL by itself). Outcomes that end while a commit is being prepared wait for the next one, so one
 * transaction holds every outcome that ended meanwhile (Journal.transactionEach): a write that fails is rolled
 * back alone and fails only its operation. A write may run twice (when another of its batch fails), so it holds
 * journal writes only; whatever else an outcome does (telling listeners) comes after its commit.
 *
 * Before each commit `beforeCommit` runs: the local adapter makes the renames of those operations durable (it
 * fsyncs their folders once per commit instead of once per file), so the journal never records as synced a file
 * a power cut could still take away. While the operations of a pass still run (`expectMore`), a commit waits a
 * little (`gatherMs`) for more outcomes, so that one commit holds tens of them; a lone outcome, or the last of
 * its pass, commits on the next turn of the event loop. A crash meanwhile loses only records: the files are in
 * place, and the next run links them to Box by SHA-1 without transferring them again.
 */
export interface CommitBatchOptions {
  readonly transactionEach: (writes: readonly (() => void)[]) => (unknown | undefined)[];
  readonly beforeCommit: () => Promise<void>;
  /** The most outcomes one transaction holds (default 256). */
  readonly maxPerCommit?: number;
  /**
   * More outcomes are on their way (operations of the pass still running). While it says so, a commit waits up
   * to `gatherMs` for `gatherCount` outcomes; the last outcome of a pass, or a lone one, commits at once.
   */
  readonly expectMore?: () => boolean;
  /** Default 0: no waiting. */
  readonly gatherMs?: number;
  /** Default 64. */
  readonly gatherCount?: number;
}

interface Pending {
  readonly write: () => void;
  readonly resolve: () => void;
  readonly reject: (e: unknown) => void;
}

export class CommitBatch {
  readonly #o: CommitBatchOptions;
  #pending: Pending[] = [];
  #draining = false;
  #wake: (() => void) | undefined;
  /** Commits made so far (tests read it). */
  commits = 0;

  constructor(o: CommitBatchOptions) {
    this.#o = o;
  }

  /** Resolves when `write` is committed; rejects with its error (or the whole commit's) when it is not. */
  add(write: () => void): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#pending.push({ write, resolve, reject });
      this.#kick();
    });
  }

  /** Pending writes were added: wake a gathering drain, or start one. */
  #kick(): void {
    this.wake();
    if (!this.#draining) {
      this.#draining = true;
      setImmediate(() => void this.#drain());
    }
  }

  async #drain(): Promise<void> {
    try {
      while (this.#pending.length > 0) {
        await this.#gather();
        const items = this.#pending.splice(0, this.#o.maxPerCommit ?? 256);
        let errors: (unknown | undefined)[];
        try {
          await this.#o.beforeCommit();
          errors = this.#o.transactionEach(items.map((i) => i.write));
          this.commits += 1;
        } catch (e) {
          for (const i of items) i.reject(e);
          continue;
        }
        items.forEach((item, k) => (errors[k] === undefined ? item.resolve() : item.reject(errors[k])));
      }
    } finally {
      this.#draining = false;
    }
  }

  /**
   * `add` for several writes at once (a group of small downloads): one promise for them all, resolved with each
   * write's error (undefined: committed) in order, never rejected.
   */
  addAll(writes: readonly (() => void)[]): Promise<(unknown | undefined)[]> {
    if (writes.length === 0) return Promise.resolve([]);
    return new Promise((resolve) => {
      const errors: (unknown | undefined)[] = new Array<unknown>(writes.length).fill(undefined);
      let left = writes.length;
      const settle = (k: number, e: unknown): void => {
        errors[k] = e;
        if (--left === 0) resolve(errors);
      };
      writes.forEach((write, k) => this.#pending.push({ write, resolve: () => settle(k, undefined), reject: (e) => settle(k, e ?? new Error('the commit failed')) }));
      this.#kick();
    });
  }

  /** Something `expectMore` reads changed (an operation ended without an outcome to commit): look again. */
  wake(): void {
    this.#wake?.();
  }

  async #gather(): Promise<void> {
    const { expectMore, gatherMs = 0, gatherCount = 64 } = this.#o;
    if (expectMore === undefined || gatherMs <= 0) return;
    const until = performance.now() + gatherMs;
    while (this.#pending.length < gatherCount && expectMore() && performance.now() < until) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          this.#wake = undefined;
          resolve();
        };
        const timer = setTimeout(done, until - performance.now());
        this.#wake = done;
      });
    }
  }
}
