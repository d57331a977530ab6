/**
 * Each remote row read once per window (issue 29 point 4).
 *
 * A windowed full pass (reconciler.ts, windows.ts) walked the same remote folders four times a window: the lookahead
 * of the window before (window-prefetch.ts), the window's first snapshot, each new folder's follow-up snapshot
 * (follow-ups.ts), and the second snapshot that finds nothing left to do. Each walk read the folder's children from
 * SQLite again, as new objects. Now the walks of a windowed pass read a folder's children through this cache: the
 * first walk reads them from the journal and keeps them, the next ones take the same rows.
 *
 * Rows kept are the rows the journal holds, never older: the journal counts its writes of the remote tree
 * (Journal.remoteGeneration), and any write (an observation, a hint between windows, an operation's commit) drops
 * everything kept. So a snapshot built through the cache is the snapshot built from the journal: the plan stays a
 * pure function of the three trees as they are. A journal without the counter keeps nothing.
 *
 * Bounds: a folder is kept only when all its children fit in one page (FOLDER_ROWS: a bigger folder is read in pages
 * as before, so a step of a sliced build stays short); at most TOTAL_ROWS rows are kept; and what no walk of the
 * current or the previous window used is dropped when a window ends (the lookahead reads the next window's folders
 * during the current one).
 */
import type { RemoteEntry, RemoteId } from '../core/model.js';
import type { Journal } from '../ports/journal.js';
import type { RemoteChildren } from './remote-tree.js';

/** Largest folder kept (its children): one of the journal's pages. */
export const FOLDER_ROWS = 1000;
/** Most rows kept at once: a few windows' worth. */
export const TOTAL_ROWS = 20_000;

interface Kept {
  readonly rows: readonly RemoteEntry[];
  /** The window that used it last. */
  window: number;
}

export class WindowRows implements RemoteChildren {
  readonly #journal: Pick<Journal, 'remoteChildrenPaged' | 'remoteGeneration'>;
  readonly #kept = new Map<RemoteId, Kept>();
  #generation: number | undefined;
  #rows = 0;
  #window = 0;
  /** Folders whose children came from the cache (tests read it). */
  hits = 0;

  constructor(journal: Pick<Journal, 'remoteChildrenPaged' | 'remoteGeneration'>) {
    this.#journal = journal;
  }

  remoteChildrenPaged(parentId: RemoteId): Iterable<RemoteEntry> {
    const generation = this.#journal.remoteGeneration?.();
    if (generation === undefined) return this.#journal.remoteChildrenPaged(parentId);
    if (generation !== this.#generation) this.#dropAll(generation);
    const kept = this.#kept.get(parentId);
    if (kept !== undefined) {
      kept.window = this.#window;
      this.hits += 1;
      return kept.rows;
    }
    return this.#read(parentId, generation);
  }

  /** Window `index` starts: what its walks read is kept for it and the next one. */
  startWindow(index: number): void {
    this.#window = index;
  }

  /** Window `index` ended: what neither it nor the one before used is dropped. */
  endWindow(index: number): void {
    for (const [id, k] of this.#kept) {
      if (k.window >= index - 1) continue;
      this.#kept.delete(id);
      this.#rows -= k.rows.length;
    }
  }

  /** The pass ended: nothing is kept. */
  clear(): void {
    this.#dropAll(undefined);
  }

  #dropAll(generation: number | undefined): void {
    this.#kept.clear();
    this.#rows = 0;
    this.#generation = generation;
  }

  /** The journal's rows, passed on as they come; kept when the walk read them all, unchanged, and they fit. */
  *#read(parentId: RemoteId, generation: number): Generator<RemoteEntry> {
    const rows: RemoteEntry[] = [];
    let fits = true;
    for (const e of this.#journal.remoteChildrenPaged(parentId)) {
      if (fits) {
        if (rows.length < FOLDER_ROWS) rows.push(e);
        else {
          fits = false;
          rows.length = 0;
        }
      }
      yield e;
    }
    if (!fits || this.#journal.remoteGeneration?.() !== generation || this.#generation !== generation) return;
    if (this.#rows + rows.length > TOTAL_ROWS || this.#kept.has(parentId)) return;
    this.#kept.set(parentId, { rows, window: this.#window });
    this.#rows += rows.length;
  }
}
