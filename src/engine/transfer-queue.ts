/**
 * The transfer queue: the rate layer of retry (between BoxHttp's retries of one request and the failures
 * table's retries of one item, engine/failures.ts). Three p-queue lanes run the operations of a
 * batch: metadata operations and small uploads share a wide lane (they are bound by latency, fsync and round
 * trips, not bandwidth, so more of them in flight is what makes 10,000 small files fast), small downloads a wider
 * one of their own (SMALL_DOWNLOAD_LANE), big files a lane of `transferConcurrency`. Within a lane metadata goes first, then files by increasing size (they finish fast
 * and unblock the next plan). Rate limits belong to the Box adapter's pacer alone (remote/box/rate-limiter.ts): it
 * pauses and retries 429s itself, and a rate_limited failure that reaches this queue is an item failure like any
 * other (the item layer backs it off); nothing here retries it again. It also keeps what `status` shows: queued work, in-flight
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
  /**
   * Files the task carries: a group of small downloads (DOWNLOAD_GROUP at most) runs as one task of a lane of its
   * own, so the files in flight stay about SMALL_DOWNLOAD_LANE; default 1.
   */
  readonly files?: number;
  readonly run: (onProgress: (p: TransferProgress) => void) => Promise<Outcome>;
}

const RATE_WINDOW_MS = 10_000;
/**
 * Progress within this long of the latest sample is added to it: the window holds at most RATE_WINDOW_MS /
 * SAMPLE_BUCKET_MS samples. A sample per progress report held 25,000 of them through a first mirror of 100,000 small
 * files, and aging each out (an array shift over a backing store that big copies it) cost 1.3 s of main-thread CPU.
 */
const SAMPLE_BUCKET_MS = 100;
/** Files below this size travel in the wide lane. */
export const SMALL_FILE_BYTES = 1024 * 1024;
const SMALL_LANE_FACTOR = 4;
const SMALL_LANE_MIN = 8;
/**
 * Small downloads in flight at most (a lane of their own): a first mirror's small files come mostly out of zip
 * archives on disk, and the file worker threads make them durable together (local/worker-durable.ts: one syncfs(2)
 * for the files in flight on a thread); with the 16 of the shared lane a batch held about 10 files. Measured
 * (README, Performance): 64 in flight with syncfs against 16, 20,000 small files, lower CPU and wall.
 */
const SMALL_DOWNLOAD_LANE = 64;
/**
 * Small downloads run together as one task (engine/reconciler.ts, runGroup): one queue task, one progress entry and
 * one commit call for up to this many files instead of one each.
 */
export const DOWNLOAD_GROUP = 16;
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
  private readonly smallLane: PQueue;
  private readonly smallDownLane: PQueue;
  /** Groups of small downloads (QueueTask.files > 1): as many files in flight as the small-download lane. */
  private readonly groupLane: PQueue;
  private readonly largeLane: PQueue;
  private readonly clock: Clock;
  private readonly live = new Set<Live>();
  private readonly pending = new Map<RootId, { ops: number; bytes: number }>();
  private readonly samples: { atMs: number; bytes: number }[] = [];
  /** The bytes of `samples`, kept as they come and go (a sum per status report grew with the transfer rate). */
  private sampledBytes = 0;
  private userPaused = false;
  private readonly onChange: () => void;

  constructor(opts: { concurrency: number; clock: Clock; onChange?: () => void; smallConcurrency?: number }) {
    const large = Math.max(1, opts.concurrency);
    this.largeLane = new PQueue({ concurrency: large });
    const small = Math.max(1, opts.smallConcurrency ?? Math.max(SMALL_LANE_MIN, large * SMALL_LANE_FACTOR));
    this.smallLane = new PQueue({ concurrency: small });
    this.smallDownLane = new PQueue({ concurrency: opts.smallConcurrency === undefined ? Math.max(SMALL_DOWNLOAD_LANE, small) : small });
    this.groupLane = new PQueue({ concurrency: Math.max(1, Math.ceil(this.smallDownLane.concurrency / DOWNLOAD_GROUP)) });
    this.clock = opts.clock;
    this.onChange = opts.onChange ?? (() => undefined);
  }

  /** Run a task through the queue; resolves with its outcome (never rejects for an operation failure). */
  add(task: QueueTask): Promise<Outcome> {
    const files = task.files ?? 1;
    this.bumpPending(task.root, files, task.totalBytes);
    const lane =
      files > 1 ? this.groupLane : task.direction === 'down' && task.totalBytes < SMALL_FILE_BYTES ? this.smallDownLane : task.direction === null || task.totalBytes < SMALL_FILE_BYTES ? this.smallLane : this.largeLane;
    // A plain promise chain rather than an async function: one frame and one promise fewer a task (a first mirror
    // of 20,000 small files runs 20,400 tasks).
    return (lane.add(() => this.runOne(task), { priority: priorityOf(task) }) as Promise<Outcome>).finally(() => this.bumpPending(task.root, -files, -task.totalBytes));
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
        if (delta > 0) {
          const now = this.clock.now();
          const last = this.samples[this.samples.length - 1];
          if (last !== undefined && now - last.atMs < SAMPLE_BUCKET_MS) last.bytes += delta;
          else this.samples.push({ atMs: now, bytes: delta });
          this.sampledBytes += delta;
        }
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
    const cur = this.pending.get(root);
    if (cur === undefined) this.pending.set(root, { ops, bytes });
    else {
      cur.ops += ops;
      cur.bytes += bytes;
    }
  }

  private trimSamples(): void {
    const cutoff = this.clock.now() - RATE_WINDOW_MS;
    while (this.samples.length > 0 && this.samples[0]!.atMs < cutoff) this.sampledBytes -= this.samples.shift()!.bytes;
  }

  private stopLanes(): void {
    this.smallLane.pause();
    this.smallDownLane.pause();
    this.groupLane.pause();
    this.largeLane.pause();
  }

  private startLanes(): void {
    this.smallLane.start();
    this.smallDownLane.start();
    this.groupLane.start();
    this.largeLane.start();
  }

  pause(): void {
    this.userPaused = true;
    this.stopLanes();
  }

  resume(): void {
    this.userPaused = false;
    this.startLanes();
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
    const spanMs = Math.max(1000, this.clock.now() - this.samples[0]!.atMs);
    return (this.sampledBytes * 1000) / spanMs;
  }

  async onIdle(): Promise<void> {
    await Promise.all([this.smallLane.onIdle(), this.smallDownLane.onIdle(), this.groupLane.onIdle(), this.largeLane.onIdle()]);
  }
}
