/**
 * The live lane: small changes never wait behind a big transfer.
 *
 * The transfer queue already gives small files and metadata their own wide lane (transfer-queue.ts), but a pass
 * ends only when its last operation does, and the daemon runs one pass at a time (daemon/lifecycle/pass-runner.ts):
 * while a 500 MB upload ran, 100 saves of small files waited for it (up to 5.8 s, 8-28 s under --bwlimit 20M).
 *
 * So while a pass's batch has nothing left in flight but big transfers (files of SMALL_FILE_BYTES or more), the
 * engine syncs what was hinted meanwhile, in the same process and journal, as the windows of a big full pass do
 * between windows (engine.ts syncHintsNow): it plans the hinted paths and runs their operations in the small lane,
 * while the big ones go on. The rule that keeps it safe: a path never has two operations in flight. The paths of
 * the big transfers still running are busy: a hinted path on, above or below one is held back (with everything
 * that live sync took) and hinted again when the batch ends, and an operation planned on a busy path is not run.
 * The lane runs only during a batch, never past it: a pass still ends when its transfers do, so the journal,
 * the guards and the pass's own re-planning see what they saw before.
 */
import type { Operation } from '../core/operations.js';
import { pathsTouched } from '../core/operations.js';
import type { RelPath } from '../core/model.js';
import { SMALL_FILE_BYTES } from './transfer-queue.js';

/** How often the lane looks again while a batch runs (a hint also wakes it at once). */
const LANE_TICK_MS = 100;

/** Paths with an operation in flight: an operation on one of them, an ancestor or a descendant is not started. */
export class BusyPaths {
  constructor(private readonly paths: readonly RelPath[]) {}

  covers(p: RelPath): boolean {
    return this.paths.some((b) => b === p || p === '' || b.startsWith(`${p}/`) || p.startsWith(`${b}/`));
  }

  coversOp(op: Operation): boolean {
    return pathsTouched(op).some((p) => this.covers(p));
  }
}

/** The operations of a batch still in flight, with their sizes: the lane opens when only big transfers are left. */
export class InFlight {
  private readonly ops = new Map<Operation, { direction: 'up' | 'down' | null; totalBytes: number }>();

  add(op: Operation, t: { direction: 'up' | 'down' | null; totalBytes: number }): void {
    this.ops.set(op, t);
  }

  delete(op: Operation): void {
    this.ops.delete(op);
  }

  /** The busy paths when everything in flight is a big transfer, else null (small work finishes soon by itself). */
  bigOnly(): BusyPaths | null {
    if (this.ops.size === 0) return null;
    for (const t of this.ops.values()) if (t.direction === null || t.totalBytes < SMALL_FILE_BYTES) return null;
    return new BusyPaths([...this.ops.keys()].flatMap(pathsTouched));
  }
}

/**
 * Waits for `batch`, running `liveSync` whenever hints are pending and only big transfers are in flight. Bounded:
 * it ends when the batch does (each turn waits for the batch, a hint or a tick) and then waits for a live sync
 * still running, so nothing of the lane outlives the batch.
 */
export async function withLiveLane(
  batch: Promise<unknown>,
  opts: {
    readonly inFlight: InFlight;
    readonly hasHints: () => boolean;
    readonly nextHint: () => Promise<void>;
    readonly liveSync: (busy: BusyPaths) => Promise<void>;
    readonly signal?: AbortSignal;
  },
): Promise<void> {
  let done = false;
  const ended = batch.then(
    () => (done = true),
    () => (done = true),
  );
  while (!done && !opts.signal?.aborted) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([ended, opts.nextHint(), new Promise<void>((r) => (timer = setTimeout(r, LANE_TICK_MS)))]);
    clearTimeout(timer);
    if (done || !opts.hasHints()) continue;
    const busy = opts.inFlight.bigOnly();
    if (busy !== null) await opts.liveSync(busy);
  }
  await batch;
}
