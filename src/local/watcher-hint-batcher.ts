/**
 * HintBatcher: turns raw file system events into the debounced, batched hints the LocalWatcher port promises.
 * Shared by every watcher implementation so they behave the same.
 *
 * Contract:
 * - `touch(path)` records a write/create/metadata event. The path is hinted only once no event arrived for it
 *   during `settleMs` (a file still being written keeps re-arming its timer, so a half-written file is never
 *   hinted as stable), or once it has been written without such a pause for `maxSettleMs`: a file that keeps
 *   growing (a log) is hinted at least that often, and uploaded as the prefix it holds then (engine/executor.ts
 *   growingUpload).
 * - `remove(path)` records a delete or a move-away. It is held for `deleteHoldMs` (>= settleMs) so that the
 *   create half of a move lands in the same batch; whenever a batch carries a write, every pending delete rides
 *   along with it when no other write or probe is still pending, which pairs the two halves of a rename.
 * - `probe(path)` records a rename event whose lstat has not answered yet (created or gone); deletes wait for it.
 * - `rescan(path)` asks for a re-walk of a subtree ('' = the whole root); it is emitted with the next batch.
 * - Batches are emitted at most every `minBatchIntervalMs`, so a burst of 10,000 creates becomes a handful of
 *   arrays, not 10,000 callbacks. Duplicate events for one path collapse into one hint.
 *
 * Cost: linear in the number of events. An event costs O(1) (its own due time can only bring the timer forward;
 * a delete's pairing question is answered by an index of pending writes by first-seen time and a count of
 * probes), and each timer firing walks the pending paths once; firings are at least `minBatchIntervalMs` apart
 * while anything is pending. (Scanning every pending path on each event made a package manager's 10,000
 * creates, deletes and re-creates cubic: 13 minutes at 100 % CPU with the event loop blocked.)
 */
import { asRelPath, type RelPath } from '../core/model.js';
import type { WatchHint } from '../ports/local-watcher.js';

export interface HintBatcherOptions {
  /** Quiet time after the last event on a path before it is hinted (default 150 ms). */
  readonly settleMs?: number;
  /** Longest a write keeps re-arming its quiet time before it is hinted anyway (default 60 s: daemon.uploadGrowingEverySec). */
  readonly maxSettleMs?: number;
  /** How long a delete waits for its matching create (default 600 ms). */
  readonly deleteHoldMs?: number;
  /** Minimum spacing between two emitted batches (default 100 ms). */
  readonly minBatchIntervalMs?: number;
}

/**
 * 150 ms: most of a saved file's local -> Box latency when idle. A file still being written keeps re-arming it;
 * one written with longer pauses may be uploaded early and again when done (the upload re-checks its source, so
 * a file that changes during the upload is never recorded as synced with the wrong content).
 */
export const DEFAULT_SETTLE_MS = 150;
export const DEFAULT_DELETE_HOLD_MS = 600;
export const DEFAULT_MAX_SETTLE_MS = 60_000;
export const DEFAULT_MIN_BATCH_INTERVAL_MS = 100;

/** How long an unanswered probe holds its own hint, and the most a delete waits past its hold for its create half. */
const PROBE_BOUND_MS = 5_000;

interface Pending {
  readonly kind: 'write' | 'delete' | 'probe';
  readonly lastEventAtMs: number;
  /** When this path was first seen while pending: a probe that turns out a write keeps its probe's time. */
  readonly firstAtMs: number;
}

export class HintBatcher {
  private readonly settleMs: number;
  private readonly maxSettleMs: number;
  private readonly deleteHoldMs: number;
  private readonly minBatchIntervalMs: number;
  private readonly pending = new Map<string, Pending>();
  /** Pending writes by first-seen time, and the number of pending probes: mayPair without a scan. */
  private readonly writes = new WriteIndex();
  private probes = 0;
  /** Pending entries looked at so far (tests read it to show the work grows linearly with the events). */
  examined = 0;
  private readonly rescans = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private timerAtMs = 0;
  private lastFlushAtMs = 0;
  private closed = false;

  constructor(
    private readonly emit: (hints: readonly WatchHint[]) => void,
    opts: HintBatcherOptions = {},
  ) {
    this.settleMs = opts.settleMs ?? DEFAULT_SETTLE_MS;
    this.maxSettleMs = opts.maxSettleMs ?? DEFAULT_MAX_SETTLE_MS;
    this.deleteHoldMs = Math.max(opts.deleteHoldMs ?? DEFAULT_DELETE_HOLD_MS, this.settleMs);
    this.minBatchIntervalMs = opts.minBatchIntervalMs ?? DEFAULT_MIN_BATCH_INTERVAL_MS;
  }

  touch(path: string): void {
    this.record(path, 'write');
  }

  remove(path: string): void {
    this.record(path, 'delete');
  }

  /**
   * An event whose kind is not known yet (a rename: created or gone, its lstat will say). Until `touch`, `remove`
   * or `drop` settles it, it is not hinted and no delete is sent: the two halves of a move are two events whose
   * lstats answer in any order, and a batch sent in between would carry a delete without its create half. Bounded:
   * a probe never settled is hinted (as a change to look at) after PROBE_BOUND_MS.
   */
  probe(path: string): void {
    if (this.pending.get(path)?.kind === 'delete') return;
    this.record(path, 'probe');
  }

  /** Forget a probed path (its event turned out to be for an ignored folder). */
  drop(path: string): void {
    if (this.pending.get(path)?.kind === 'probe') this.unset(path);
  }

  rescan(path: string): void {
    if (this.closed) return;
    this.rescans.add(path);
    this.schedule(Date.now());
  }

  /** Number of paths waiting to settle (status shows it as "settling"). */
  get size(): number {
    return this.pending.size + this.rescans.size;
  }

  /** Emit everything now, settled or not (used on close so nothing observed is dropped). */
  flushAll(): void {
    this.flush(Number.POSITIVE_INFINITY);
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.pending.clear();
    this.writes.clear();
    this.probes = 0;
    this.rescans.clear();
  }

  private record(path: string, kind: Pending['kind']): void {
    if (this.closed) return;
    const now = Date.now();
    const prev = this.pending.get(path);
    // A probe's time carries over to the kind its lstat finds; a write turned delete (or back) starts again.
    const firstAtMs = prev && (prev.kind === 'probe' || (prev.kind === 'delete') === (kind === 'delete')) ? prev.firstAtMs : now;
    const entry: Pending = { kind, lastEventAtMs: now, firstAtMs };
    this.set(path, entry);
    // Only this entry's due time is new: the timer set for the others stays valid (one that fires early finds
    // nothing due and is set again from a full walk).
    this.schedule(now, kind === 'delete' ? this.deleteDueAt(entry) : this.dueAt(entry));
  }

  /** The only ways into and out of `pending`: they keep the write index and the probe count in step. */
  private set(path: string, p: Pending): void {
    this.unset(path);
    this.pending.set(path, p);
    if (p.kind === 'write') this.writes.add(p.firstAtMs);
    else if (p.kind === 'probe') this.probes += 1;
  }

  private unset(path: string): void {
    const p = this.pending.get(path);
    if (!p) return;
    this.pending.delete(path);
    if (p.kind === 'write') this.writes.remove(p.firstAtMs);
    else if (p.kind === 'probe') this.probes -= 1;
  }

  /**
   * Could a pending create be the other half of this delete? A probe (kind not known yet), or a write first seen
   * about when the delete was (a rename's two events come together; a file written since long before is no
   * candidate). Then the delete waits for it, up to PROBE_BOUND_MS past its hold.
   */
  private mayPair(d: Pending): boolean {
    if (this.probes > 0) return true;
    this.examined += 1;
    return this.writes.anyIn(d.firstAtMs - this.settleMs, d.lastEventAtMs + this.deleteHoldMs);
  }

  /** When a delete goes on its own: at the end of its hold, or later while a create may pair with it (bounded). */
  private deleteDueAt(d: Pending): number {
    return this.mayPair(d) ? d.lastEventAtMs + this.deleteHoldMs + PROBE_BOUND_MS : this.dueAt(d);
  }

  private dueAt(p: Pending): number {
    if (p.kind === 'write') return Math.min(p.lastEventAtMs + this.settleMs, p.firstAtMs + this.maxSettleMs);
    return p.lastEventAtMs + (p.kind === 'delete' ? this.deleteHoldMs : PROBE_BOUND_MS);
  }

  /** Set the timer for the earliest due time: `due` when given (one new entry), else from a walk of everything pending. */
  private schedule(now: number, due?: number): void {
    if (this.closed) return;
    let next = due ?? Number.POSITIVE_INFINITY;
    if (this.rescans.size > 0) next = now;
    if (due === undefined) {
      for (const p of this.pending.values()) next = Math.min(next, p.kind === 'delete' ? this.deleteDueAt(p) : this.dueAt(p));
      this.examined += this.pending.size;
    }
    if (next === Number.POSITIVE_INFINITY) return;
    const at = Math.max(next, this.lastFlushAtMs + this.minBatchIntervalMs);
    // A timer already set for no later than that stays; one set for later (a probe's bound) is brought forward.
    if (this.timer) {
      if (this.timerAtMs <= at) return;
      clearTimeout(this.timer);
    }
    this.timerAtMs = at;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.flush(Date.now());
      this.schedule(Date.now());
    }, Math.max(0, at - now));
  }

  private flush(now: number): void {
    const hints: WatchHint[] = [];
    let carriesWrite = false;
    this.examined += this.pending.size;
    for (const [path, p] of this.pending) {
      if (p.kind !== 'delete' && this.dueAt(p) <= now) {
        hints.push({ path: asRelPath(path), type: 'change' });
        this.unset(path);
        carriesWrite = true;
      }
    }
    // A delete rides along with a write batch only when no write or probe is left pending: the create half of
    // its move may be one still settling (a folder moved just after an unrelated file was saved), and a delete
    // hinted without its create half reads as a deletion. On its own, a delete goes at the end of its hold, or
    // once nothing pending may be its create half (bounded: deleteDueAt).
    const ride = carriesWrite && this.writes.size === 0 && this.probes === 0;
    this.examined += this.pending.size;
    for (const [path, p] of this.pending) {
      if (p.kind === 'delete' && (ride || this.deleteDueAt(p) <= now)) {
        hints.push({ path: asRelPath(path), type: 'change' });
        this.unset(path);
      }
    }
    for (const path of this.rescans) hints.push({ path: asRelPath(path) as RelPath, type: 'rescan' });
    this.rescans.clear();
    if (hints.length === 0) return;
    this.lastFlushAtMs = Date.now();
    this.emit(hints);
  }
}

/** Bucket width of the write index, in ms: a range query looks at whole buckets, and into the two at its ends. */
const BUCKET_MS = 64;

/**
 * A multiset of times (ms) answering "is any in [from, to]?" in O((to - from) / BUCKET_MS + BUCKET_MS), whatever
 * the number of times held.
 */
class WriteIndex {
  private readonly buckets = new Map<number, { count: number; readonly times: Map<number, number> }>();
  size = 0;

  add(t: number): void {
    const k = Math.floor(t / BUCKET_MS);
    let b = this.buckets.get(k);
    if (!b) this.buckets.set(k, (b = { count: 0, times: new Map() }));
    b.count += 1;
    b.times.set(t, (b.times.get(t) ?? 0) + 1);
    this.size += 1;
  }

  remove(t: number): void {
    const k = Math.floor(t / BUCKET_MS);
    const b = this.buckets.get(k);
    const n = b?.times.get(t);
    if (!b || n === undefined) return;
    if (n > 1) b.times.set(t, n - 1);
    else b.times.delete(t);
    b.count -= 1;
    if (b.count === 0) this.buckets.delete(k);
    this.size -= 1;
  }

  anyIn(from: number, to: number): boolean {
    if (this.size === 0 || from > to) return false;
    const first = Math.floor(from / BUCKET_MS);
    const last = Math.floor(to / BUCKET_MS);
    // A wide range (a delete re-armed for a long time) walks the buckets that exist instead of the range.
    if (last - first > this.buckets.size) {
      for (const [k, b] of this.buckets) if (k >= first && k <= last && this.bucketHas(k, b, from, to, first, last)) return true;
      return false;
    }
    for (let k = first; k <= last; k++) {
      const b = this.buckets.get(k);
      if (b && this.bucketHas(k, b, from, to, first, last)) return true;
    }
    return false;
  }

  clear(): void {
    this.buckets.clear();
    this.size = 0;
  }

  private bucketHas(k: number, b: { readonly times: Map<number, number> }, from: number, to: number, first: number, last: number): boolean {
    if (k > first && k < last) return true;
    for (const t of b.times.keys()) if (t >= from && t <= to) return true;
    return false;
  }
}
