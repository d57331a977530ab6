/**
 * The hint ledger: what the next pass must look at, and when the engine next wants to run.
 *
 * It holds the hints fed in (local paths per root, Box ids), takes them out for a pass and gives them back when
 * the pass did not finish its work; it keeps what hinted passes found gone (hinted-scope.ts: since when, which
 * paths a pass deferred as still settling, which to hint again once settled); and it knows the two wake times
 * nothing else would act on: settling paths to hint again, and failed items whose backoff elapses (the failures
 * table). The daemon sleeps until nextWakeAtMs and then calls wake, which turns what is due into hints.
 */
import type { RelPath, RemoteId, RootId, SyncRoot } from '../../core/model.js';
import type { FailureRecord, Journal } from '../../ports/journal.js';
import { setSettlingPaths } from '../clean-mark.js';
import type { GoneSince } from '../hinted-scope.js';
import type { Unsettled } from '../types.js';

/** Settling paths are hinted again this long after they were deferred: just past the settle time. */
const REHINT_AFTER_SETTLE_MS = 200;

/** Hints one pass (or one live sync between windows) took out of the ledger, to give back if it did not finish. */
export interface TakenHints {
  readonly local: Map<RootId, RelPath[]>;
  remote: RemoteId[];
}

interface UnsettledBatch {
  readonly local: Map<RootId, Set<RelPath>>;
  readonly remoteIds: Set<RemoteId>;
  dueAtMs: number | null;
}

export class HintLedger {
  private readonly pendingLocal = new Map<RootId, Set<RelPath>>();
  /** Folder pairs the user paused (Engine.pauseRoot): their hints and failed items wait, and wake no pass. */
  readonly held = new Set<RootId>();
  private readonly pendingRemote = new Set<RemoteId>();
  /** Box said something changed (the long poll: no ids, the engine reads the events) since the ids were last taken. */
  private remoteNews = false;
  /** A caller that feeds hints (the daemon) gets hinted passes; a run without any hint rescans in full. */
  private hintedSinceRun = false;
  /** Per root: paths hinted passes found gone, and since when (hinted-scope.ts). */
  private readonly goneSince = new Map<RootId, GoneSince>();
  /**
   * Paths a hinted pass deferred as still settling (found gone, no move in sight), per root, until a pass takes
   * them up (its scope holds them and does not defer them again); kept in the journal too (clean-mark.ts
   * settlingPaths): the journal already says they are gone locally, so after a crash a run that planned only what
   * its scan sees change would never plan them, and the deletion would be lost.
   */
  private readonly deferred = new Map<RootId, Set<RelPath>>();
  /** Deferred paths (and the Box ids their pass consumed) to hint again once settled; the last one still filling. */
  private readonly unsettled: UnsettledBatch[] = [];

  constructor(
    private readonly journal: Journal,
    private readonly roots: readonly SyncRoot[],
    private readonly settleMs: number,
  ) {}

  hintLocal(root: RootId, paths: readonly RelPath[]): void {
    const set = this.pendingLocal.get(root) ?? new Set<RelPath>();
    for (const p of paths) set.add(p);
    this.pendingLocal.set(root, set);
    this.hintedSinceRun = true;
  }

  hintRemote(ids: readonly RemoteId[]): void {
    for (const id of ids) this.pendingRemote.add(id);
    this.remoteNews = true;
    this.hintedSinceRun = true;
  }

  hasHints(): boolean {
    return this.pendingRemote.size > 0 || [...this.pendingLocal].some(([root, s]) => s.size > 0 && !this.held.has(root));
  }

  /**
   * Box said something changed and no pass or live sync has read the stream since. Not a hint by itself (hasHints):
   * the daemon's long poll wakes a pass for it once it knows the news is not only our own writes (remote-side.ts),
   * while a pass running reads it beside a big transfer, between its windows and at its end.
   */
  get remoteNewsPending(): boolean {
    return this.remoteNews;
  }

  /** Were hints fed since the last pass began? */
  get hinted(): boolean {
    return this.hintedSinceRun;
  }

  /** A pass begins: whether hints came in since the last one (it may then be a hinted pass). */
  beginPass(): boolean {
    const hinted = this.hintedSinceRun;
    this.hintedSinceRun = false;
    return hinted;
  }

  /** The next pass stays a hinted one (cheap), not the full rescan a run without hints would be. */
  keepHinted(): void {
    this.hintedSinceRun = true;
  }

  /** Takes the pending Box ids out, into `taken`. */
  takeRemote(taken: TakenHints): RemoteId[] {
    const ids = [...this.pendingRemote];
    this.pendingRemote.clear();
    this.remoteNews = false;
    taken.remote = ids;
    return ids;
  }

  /** Takes the pending local paths of `root` out, into `taken`. */
  takeLocal(taken: TakenHints, root: RootId): RelPath[] {
    const paths = [...(this.pendingLocal.get(root) ?? [])];
    this.pendingLocal.delete(root);
    taken.local.set(root, paths);
    return paths;
  }

  /** A pass that did not finish its work gives back the hints it took, so the next hinted pass sees them again. */
  giveBack(taken: TakenHints): void {
    for (const [root, paths] of taken.local) if (paths.length > 0) this.hintLocal(root, paths);
    if (taken.remote.length > 0) this.hintRemote(taken.remote);
  }

  /** The record of paths found gone in `root` that hintedScope keeps up to date. */
  goneSinceOf(root: RootId): GoneSince {
    let g = this.goneSince.get(root);
    if (g === undefined) this.goneSince.set(root, (g = new Map()));
    return g;
  }

  /** The paths this process deferred as settling in `root` and no pass has taken up since. */
  deferredOf(root: RootId): ReadonlySet<RelPath> {
    return this.deferred.get(root) ?? new Set();
  }

  /**
   * A hinted scope was built: the paths it holds are taken up, the ones it defers wait (in memory and in the
   * journal), and are hinted again once settled, with the Box ids the pass consumed: a folder deleted here and
   * renamed on Box must be seen from both ends by the pass that takes it up again.
   */
  recordScope(root: SyncRoot, localPaths: readonly RelPath[], unsettled: readonly RelPath[] | undefined, remoteIds: readonly RemoteId[]): void {
    const deferred = this.deferred.get(root.id) ?? new Set<RelPath>();
    const before = deferred.size;
    for (const p of localPaths) deferred.delete(p);
    for (const p of unsettled ?? []) deferred.add(p);
    this.deferred.set(root.id, deferred);
    if (deferred.size > 0 || before > 0) setSettlingPaths(this.journal, root, [...deferred]);
    if (unsettled === undefined) return;
    let batch = this.unsettled.at(-1);
    if (batch === undefined || batch.dueAtMs !== null) this.unsettled.push((batch = { local: new Map(), remoteIds: new Set(), dueAtMs: null }));
    const set = batch.local.get(root.id) ?? new Set<RelPath>();
    for (const p of unsettled) set.add(p);
    batch.local.set(root.id, set);
    for (const id of remoteIds) batch.remoteIds.add(id);
  }

  /** A pass ended: what it deferred is hinted again once it has settled (by then the watcher has said where it went). */
  endPass(nowMs: number): void {
    for (const b of this.unsettled) b.dueAtMs ??= nowMs + this.settleMs + REHINT_AFTER_SETTLE_MS;
  }

  /** What hinted passes deferred as still settling and not yet hinted again, for a caller that hints it itself. */
  takeUnsettled(): Unsettled {
    const local = new Map<RootId, Set<RelPath>>();
    const remoteIds = new Set<RemoteId>();
    for (const b of this.unsettled.splice(0)) {
      for (const [root, paths] of b.local) local.set(root, new Set([...(local.get(root) ?? []), ...paths]));
      for (const id of b.remoteIds) remoteIds.add(id);
    }
    return { local: [...local].map(([root, paths]) => ({ root, paths: [...paths] })), remoteIds: [...remoteIds] };
  }

  /** When the engine next wants to run with no new hint: settling paths due again, or a failed item's backoff. */
  nextWakeAtMs(): number | null {
    const times = this.unsettled.flatMap((b) => (b.dueAtMs === null ? [] : [b.dueAtMs]));
    const retries = this.retryable();
    if (retries.length > 0) times.push(Math.min(...retries.map((f) => f.nextRetryAtMs)));
    return times.length === 0 ? null : Math.min(...times);
  }

  /**
   * Turns what is due at `nowMs` into hints: settling paths whose time came, and failed items whose backoff
   * elapsed (read now, so a failure recorded since the wake time was set is not left behind). A root that could
   * not be listed (parked at '') gets its full scan from the pass itself.
   */
  wake(nowMs: number): void {
    for (let i = this.unsettled.length - 1; i >= 0; i--) {
      const b = this.unsettled[i]!;
      if (b.dueAtMs === null || b.dueAtMs > nowMs) continue;
      this.unsettled.splice(i, 1);
      for (const [root, paths] of b.local) this.hintLocal(root, [...paths]);
      if (b.remoteIds.size > 0) this.hintRemote([...b.remoteIds]);
    }
    const ready = this.retryable().filter((f) => f.nextRetryAtMs <= nowMs);
    for (const root of this.roots) {
      const paths = ready.filter((f) => f.root === root.id && f.path !== '').map((f) => f.path);
      if (paths.length > 0) this.hintLocal(root.id, paths);
    }
  }

  /**
   * Failed items that wait for their nextRetryAtMs: every disposition but a park waiting for the item itself;
   * parks on a condition that can clear are re-checked when their backoff elapses (park-recheck.ts).
   */
  private retryable(): FailureRecord[] {
    const ours = new Set(this.roots.map((r) => r.id));
    return this.journal.failures().filter((f) => ours.has(f.root) && !this.held.has(f.root) && (f.disposition !== 'skip' || f.parkClass === 'condition'));
  }
}
