/**
 * Asking for the next window's downloads while the current window runs (issue 29 point 4).
 *
 * A windowed full pass (windows.ts) plans and runs one window at a time, and each window announces its downloads
 * to the adapter (RemoteStore.prefetch; Box: zip archives of its small files) only once it is planned, that is when
 * the window before it has ended. Box then builds the archive and the window's first extraction waits for it: on a
 * first mirror of 20,000 small files that wait was about a third of each window. So while window k runs, the files
 * window k+1 will most likely download are announced too, and its archive is on disk when its turn comes.
 *
 * Which window comes next is known only once window k has been reconciled (planWindows reads the journal as it is
 * then); a second walk (the "shadow", the same generator over the same journal) runs one window ahead to guess it.
 * On a first mirror the guess is exact (a window's size is the largest of its rows on the three trees, and the
 * remote rows are all there from the start); elsewhere a wrong guess costs only bytes: the files of the announced
 * window that the real window does not download are dropped with its archive, and downloaded later as usual.
 *
 * What is announced: the files below the window's bases with a SHA-1 that the journal does not hold as synced with
 * that same SHA-1 (new or changed on Box); the adapter takes only the small ones. At most `LOOKAHEAD_FILES` of them.
 *
 * Bounds: one window ahead. An announcement is released (its archives closed, their scratch files removed) when
 * the window it guessed has ended, or when the pass ends, is cancelled or fails. So at most two windows' archives
 * are held at a time (the current window's and the next one's), each announcement's archives fetched one at a time.
 * A window that downloaded nothing stops the lookahead until a window downloads again (a daemon's full pass over a
 * synced tree walks its windows once, not twice).
 */
import type { RelPath, RemoteEntry, SyncRoot } from '../core/model.js';
import type { Journal } from '../ports/journal.js';
import type { PrefetchFile, PrefetchHandle, RemoteStore } from '../ports/remote-store.js';
import type { IsIgnored } from './observe-local.js';
import { prefetchFileOf, remoteAtPath, walkRemote, type RemoteChildren } from './remote-tree.js';
import { syncedByRemoteIds } from './snapshot-rows.js';
import { planWindows } from './windows.js';

/** Most files announced for one window ahead (a window holds about DEFAULT_WINDOW_ENTRIES rows). */
export const LOOKAHEAD_FILES = 10_000;
/** Files whose base rows are looked up in one statement. */
const CHECK_PAGE = 500;

export interface WindowPrefetchDeps {
  readonly journal: Journal;
  readonly root: SyncRoot;
  readonly isIgnored: IsIgnored;
  readonly remote: Pick<RemoteStore, 'prefetch'>;
  readonly windowEntries: number;
  readonly signal?: AbortSignal;
  /** Where remote folders are walked: the pass's rows (window-rows.ts), so the window after reads them once. */
  readonly remoteRows?: RemoteChildren;
}

export class WindowPrefetch {
  #shadow: Generator<RelPath[]> | null;
  /** Windows the shadow has yielded so far. */
  #shadowAt = 0;
  /** Announcements by the index of the window they guessed. */
  readonly #held = new Map<number, PrefetchHandle>();

  constructor(private readonly deps: WindowPrefetchDeps) {
    this.#shadow = deps.remote.prefetch === undefined ? null : planWindows(deps.journal, deps.root, deps.isIgnored, deps.windowEntries);
  }

  /**
   * Window `index` (from 0) is about to run: announce window index + 1's files, unless told the lookahead does not
   * pay (`active` false: the window before downloaded nothing).
   */
  beforeWindow(index: number, active: boolean): void {
    const next = index + 1;
    if (this.#shadow === null || !active || this.#held.has(next) || this.deps.signal?.aborted === true) return;
    let bases: RelPath[] | undefined;
    while (this.#shadowAt <= next) {
      const r = this.#shadow.next();
      if (r.done === true) {
        this.#shadow = null;
        return;
      }
      this.#shadowAt += 1;
      bases = r.value;
    }
    if (bases === undefined) return;
    const files = this.#files(bases);
    if (files.length === 0) return;
    const handle = this.deps.remote.prefetch?.(files, this.deps.signal);
    if (handle !== undefined) this.#held.set(next, handle);
  }

  /** Window `index` has ended: what was announced for it (or before it) is released. */
  afterWindow(index: number): void {
    for (const [i, h] of this.#held) {
      if (i > index) continue;
      this.#held.delete(i);
      h.release();
    }
  }

  /** The pass ended (or failed, or was cancelled): everything is released. */
  close(): void {
    this.#shadow?.return(undefined);
    this.#shadow = null;
    this.afterWindow(Number.POSITIVE_INFINITY);
  }

  /** The files below `bases` that Box holds and the journal does not hold as synced with the same content. */
  #files(bases: readonly RelPath[]): PrefetchFile[] {
    const { journal, root, isIgnored } = this.deps;
    const out: PrefetchFile[] = [];
    // Files with a SHA-1, asked of the journal a page at a time (one statement each: snapshot-rows.ts), in walk order.
    let page: RemoteEntry[] = [];
    const flush = (): void => {
      const synced = syncedByRemoteIds(journal, root, page.map((e) => e.id));
      for (const e of page) {
        if (out.length >= LOOKAHEAD_FILES) break;
        if (synced.get(e.id)?.sha1 !== e.sha1) out.push(prefetchFileOf(e));
      }
      page = [];
    };
    const consider = (e: RemoteEntry): void => {
      if (e.kind !== 'file' || e.sha1 === null) return;
      page.push(e);
      if (page.length >= CHECK_PAGE) flush();
    };
    for (const base of bases) {
      if (out.length >= LOOKAHEAD_FILES) break;
      const top = remoteAtPath(journal, root, base);
      if (top === undefined) continue;
      if (top.kind === 'folder') {
        for (const { entry } of walkRemote(this.deps.remoteRows ?? journal, top.id, base, (p, e) => !isIgnored(p, e.kind === 'folder'))) {
          consider(entry);
          if (out.length >= LOOKAHEAD_FILES) break;
        }
      } else if (!isIgnored(base, false)) consider(top);
    }
    flush();
    return out;
  }
}
