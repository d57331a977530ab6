/**
 * The transfer queue: the rate layer of retry (ARCHITECTURE.md). A p-queue runs the operations of a batch with
 * bounded concurrency; metadata operations and small files go first (they finish fast and unblock the next
 * plan), big files last. On a 429 the whole queue pauses until Retry-After and the operation is tried again,
 * a few times, before it becomes an item failure. It also keeps what `status` shows: queued work, in-flight
 * transfers with their progress, and a transfer rate over a sliding window.
 */
import PQueue from 'p-queue';
import type { RelPath, RootId } from '../core/model.js';
import type { Clock } from '../ports/clock.js';
import type { TransferProgress } from '../ports/remote-store.js';
import type { Outcome } from './executor.js';
import type { TransferStatus } from './types.js';

export interface QueueTask {
  readonly root: RootId;
  readonly path: RelPath;
  /** 'up' / 'down' for transfers, null for metadata operations. */
  readonly direction: 'up' | 'down' | null;
  readonly totalBytes: number;
  readonly run: (onProgress: (p: TransferProgress) => void) => Promise<Outcome>;
}

const RATE_WINDOW_MS = 10_000;
const RATE_LIMIT_ATTEMPTS = 3;
const METADATA_PRIORITY = 100;

/** Higher runs sooner: metadata first, then files by increasing size (one step per doubling). */
export function priorityOf(task: Pick<QueueTask, 'direction' | 'totalBytes'>): number {
  if (task.direction === null) return METADATA_PRIORITY;
  return METADATA_PRIORITY - 1 - Math.floor(Math.log2(task.totalBytes + 1));
}

interface Live {
  status: TransferStatus;
}

export class TransferQueue {
  private readonly queue: PQueue;
  private readonly clock: Clock;
  private readonly live = new Set<Live>();
  private readonly pending = new Map<RootId, { ops: number; bytes: number }>();
  private readonly samples: { atMs: number; bytes: number }[] = [];
  private userPaused = false;
  private rateLimitedUntilMs = 0;
  private readonly onChange: () => void;

  constructor(opts: { concurrency: number; clock: Clock; onChange?: () => void }) {
    this.queue = new PQueue({ concurrency: Math.max(1, opts.concurrency) });
    this.clock = opts.clock;
    this.onChange = opts.onChange ?? (() => undefined);
  }

  /** Run a task through the queue; resolves with its outcome (never rejects for an operation failure). */
  async add(task: QueueTask): Promise<Outcome> {
    this.bumpPending(task.root, 1, task.totalBytes);
    try {
      for (let attempt = 1; ; attempt++) {
        const outcome = (await this.queue.add(() => this.runOne(task), { priority: priorityOf(task) })) as Outcome;
        const e = outcome.status === 'failed' ? outcome.error : null;
        if (!e || e.code !== 'rate_limited' || attempt >= RATE_LIMIT_ATTEMPTS) return outcome;
        await this.pauseFor(e.retryAfterMs ?? 1000);
      }
    } finally {
      this.bumpPending(task.root, -1, -task.totalBytes);
    }
  }

  private async runOne(task: QueueTask): Promise<Outcome> {
    const entry: Live = {
      status: { root: task.root, path: task.path, direction: task.direction ?? 'down', doneBytes: 0, totalBytes: task.totalBytes, startedAtMs: this.clock.now() },
    };
    if (task.direction !== null) this.live.add(entry);
    this.onChange();
    try {
      return await task.run((p) => {
        const delta = p.doneBytes - entry.status.doneBytes;
        if (delta > 0) this.samples.push({ atMs: this.clock.now(), bytes: delta });
        entry.status = { ...entry.status, doneBytes: p.doneBytes, totalBytes: p.totalBytes };
        this.trimSamples();
        this.onChange();
      });
    } finally {
      this.live.delete(entry);
      this.onChange();
    }
  }

  private bumpPending(root: RootId, ops: number, bytes: number): void {
    const cur = this.pending.get(root) ?? { ops: 0, bytes: 0 };
    this.pending.set(root, { ops: cur.ops + ops, bytes: cur.bytes + bytes });
  }

  private trimSamples(): void {
    const cutoff = this.clock.now() - RATE_WINDOW_MS;
    while (this.samples.length > 0 && this.samples[0]!.atMs < cutoff) this.samples.shift();
  }

  /** Pause everything until `ms` from now (429 Retry-After); a user pause still wins afterwards. */
  async pauseFor(ms: number): Promise<void> {
    const until = this.clock.now() + ms;
    if (until <= this.rateLimitedUntilMs) return this.clock.sleep(this.rateLimitedUntilMs - this.clock.now());
    this.rateLimitedUntilMs = until;
    this.queue.pause();
    await this.clock.sleep(ms);
    if (!this.userPaused && this.clock.now() >= this.rateLimitedUntilMs) this.queue.start();
  }

  pause(): void {
    this.userPaused = true;
    this.queue.pause();
  }

  resume(): void {
    this.userPaused = false;
    if (this.clock.now() >= this.rateLimitedUntilMs) this.queue.start();
  }

  get paused(): boolean {
    return this.userPaused;
  }

  inFlight(root?: RootId): TransferStatus[] {
    return [...this.live].map((l) => l.status).filter((s) => root === undefined || s.root === root);
  }

  /** Queued or running work of a root, bytes not yet transferred included. */
  queued(root: RootId): { ops: number; bytes: number } {
    const p = this.pending.get(root) ?? { ops: 0, bytes: 0 };
    const done = this.inFlight(root).reduce((n, s) => n + s.doneBytes, 0);
    return { ops: p.ops, bytes: Math.max(0, p.bytes - done) };
  }

  /** Bytes per second over the last few seconds. */
  rateBytesPerSec(): number {
    this.trimSamples();
    if (this.samples.length === 0) return 0;
    const bytes = this.samples.reduce((n, s) => n + s.bytes, 0);
    const spanMs = Math.max(1000, this.clock.now() - this.samples[0]!.atMs);
    return (bytes * 1000) / spanMs;
  }

  onIdle(): Promise<void> {
    return this.queue.onIdle();
  }
}
