/**
 * HintBatcher: turns raw file system events into the debounced, batched hints the LocalWatcher port promises.
 * Shared by every watcher implementation so they behave the same.
 *
 * Contract:
 * - `touch(path)` records a write/create/metadata event. The path is hinted only once no event arrived for it
 *   during `settleMs` (a file still being written keeps re-arming its timer, so a half-written file is never
 *   hinted as stable).
 * - `remove(path)` records a delete or a move-away. It is held for `deleteHoldMs` (>= settleMs) so that the
 *   create half of a move lands in the same batch; whenever a batch carries a write, every pending delete rides
 *   along with it, which pairs the two halves of a rename.
 * - `rescan(path)` asks for a re-walk of a subtree ('' = the whole root); it is emitted with the next batch.
 * - Batches are emitted at most every `minBatchIntervalMs`, so a burst of 10,000 creates becomes a handful of
 *   arrays, not 10,000 callbacks. Duplicate events for one path collapse into one hint.
 */
import { asRelPath, type RelPath } from '../core/model.js';
import type { WatchHint } from '../ports/local-watcher.js';

export interface HintBatcherOptions {
  /** Quiet time after the last event on a path before it is hinted (default 150 ms). */
  readonly settleMs?: number;
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
export const DEFAULT_MIN_BATCH_INTERVAL_MS = 100;

interface Pending {
  readonly kind: 'write' | 'delete';
  readonly lastEventAtMs: number;
}

export class HintBatcher {
  private readonly settleMs: number;
  private readonly deleteHoldMs: number;
  private readonly minBatchIntervalMs: number;
  private readonly pending = new Map<string, Pending>();
  private readonly rescans = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private lastFlushAtMs = 0;
  private closed = false;

  constructor(
    private readonly emit: (hints: readonly WatchHint[]) => void,
    opts: HintBatcherOptions = {},
  ) {
    this.settleMs = opts.settleMs ?? DEFAULT_SETTLE_MS;
    this.deleteHoldMs = Math.max(opts.deleteHoldMs ?? DEFAULT_DELETE_HOLD_MS, this.settleMs);
    this.minBatchIntervalMs = opts.minBatchIntervalMs ?? DEFAULT_MIN_BATCH_INTERVAL_MS;
  }

  touch(path: string): void {
    this.record(path, 'write');
  }

  remove(path: string): void {
    this.record(path, 'delete');
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
    this.rescans.clear();
  }

  private record(path: string, kind: Pending['kind']): void {
    if (this.closed) return;
    const now = Date.now();
    this.pending.set(path, { kind, lastEventAtMs: now });
    this.schedule(now);
  }

  private dueAt(p: Pending): number {
    return p.lastEventAtMs + (p.kind === 'write' ? this.settleMs : this.deleteHoldMs);
  }

  private schedule(now: number): void {
    if (this.timer || this.closed) return;
    let next = Number.POSITIVE_INFINITY;
    if (this.rescans.size > 0) next = now;
    for (const p of this.pending.values()) next = Math.min(next, this.dueAt(p));
    if (next === Number.POSITIVE_INFINITY) return;
    const at = Math.max(next, this.lastFlushAtMs + this.minBatchIntervalMs);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.flush(Date.now());
      this.schedule(Date.now());
    }, Math.max(0, at - now));
  }

  private flush(now: number): void {
    const hints: WatchHint[] = [];
    let carriesWrite = false;
    for (const [path, p] of this.pending) {
      if (p.kind === 'write' && this.dueAt(p) <= now) {
        hints.push({ path: asRelPath(path), type: 'change' });
        this.pending.delete(path);
        carriesWrite = true;
      }
    }
    for (const [path, p] of this.pending) {
      if (p.kind === 'delete' && (carriesWrite || this.dueAt(p) <= now)) {
        hints.push({ path: asRelPath(path), type: 'change' });
        this.pending.delete(path);
      }
    }
    for (const path of this.rescans) hints.push({ path: asRelPath(path) as RelPath, type: 'rescan' });
    this.rescans.clear();
    if (hints.length === 0) return;
    this.lastFlushAtMs = Date.now();
    this.emit(hints);
  }
}
