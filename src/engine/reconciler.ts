/**
 * The reconciler: the loop of one root.
 *
 *   snapshot (journal) ─► plan (core/plan, pure) ─► mass-delete guard ─► transfer queue ─► executor
 *         ▲                                                                                  │ outcome
 *         └──── commit: ONE journal transaction per outcome  ◄── or failures table / re-observe ┘
 *
 * Each pass plans from the journal, runs the batch (its operations are independent), commits every success in
 * its own transaction and routes every failure by disposition: retry/skip go to the failures table (the planner
 * then sees the path as deferred, so one bad file never blocks the rest), replan re-observes what the operation
 * touched, fatal stops the run. Passes repeat until the plan is empty; a bounded number of passes catches a
 * plan that never settles, and an operation that failed once in a run is not tried again in the same run.
 */
import type { SyncError } from '../core/errors.js';
import type { RelPath, RemoteEntry, RootId, SyncRoot } from '../core/model.js';
import { assertNever, opPath, pathsTouched, type Operation, type OperationKind } from '../core/operations.js';
import { plan } from '../core/plan.js';
import type { Clock } from '../ports/clock.js';
import type { Journal } from '../ports/journal.js';
import type { LocalFs } from '../ports/local-fs.js';
import type { RemoteStore } from '../ports/remote-store.js';
import type { Logger } from 'pino';
import { commitOutcome } from './commit.js';
import { checkMassDelete } from './delete-guard.js';
import { execute, toSyncError, type Outcome } from './executor.js';
import { recordOpFailure } from './failures.js';
import type { IsIgnored } from './observe-local.js';
import { reobserve } from './reobserve.js';
import { buildSnapshot, type SnapshotScope } from './snapshot.js';
import type { StatusTracker } from './status-tracker.js';
import type { QueueTask, TransferQueue } from './transfer-queue.js';
import type { EngineEvents, EngineOptions } from './types.js';

export const MAX_PASSES = 50;
/** Replans of one operation within a run before it is parked in the failures table for a while. */
const MAX_REPLANS = 3;

export interface ReconcileContext {
  readonly journal: Journal;
  readonly remote: RemoteStore;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly options: EngineOptions;
  readonly queue: TransferQueue;
  readonly status: StatusTracker;
  readonly events: EngineEvents;
  readonly allowedGuards: Set<string>;
  readonly random: () => number;
  readonly signal?: AbortSignal;
}

export interface RootContext {
  readonly root: SyncRoot;
  readonly fs: LocalFs;
  readonly isIgnored: IsIgnored;
}

/** Counters of one run, shared by every root. */
export interface Tally {
  readonly ops: Partial<Record<OperationKind, number>>;
  uploadedBytes: number;
  downloadedBytes: number;
  conflicts: number;
  passes: number;
  reported: number;
  fatal: SyncError | null;
}

export function newTally(): Tally {
  return { ops: {}, uploadedBytes: 0, downloadedBytes: 0, conflicts: 0, passes: 0, reported: 0, fatal: null };
}

export type RootOutcome = 'converged' | 'guard' | 'fatal' | 'stalled';

const signature = (op: Operation): string => `${op.kind}:${opPath(op)}`;

export async function reconcileRoot(ctx: ReconcileContext, rc: RootContext, initialScope: SnapshotScope, tally: Tally): Promise<RootOutcome> {
  const { journal, status } = ctx;
  const failedThisRun = new Set<string>();
  const replans = new Map<string, number>();
  const foundByReplans: RelPath[] = [];
  let scope = initialScope;
  let deletesConfirmed = false;
  for (let pass = 1; pass <= MAX_PASSES; pass++) {
    ctx.signal?.throwIfAborted();
    status.setPhase('planning');
    const nowMs = ctx.clock.now();
    const snapshot = buildSnapshot({ journal, root: rc.root, isIgnored: rc.isIgnored, nowMs, scope });
    const planned = plan(snapshot, { nowMs });
    tally.passes += 1;
    const ops = planned.ops.filter((op) => !snapshot.deferred.has(opPath(op)) && !failedThisRun.has(signature(op)));
    const work: Operation[] = [];
    for (const op of ops) {
      if (op.kind === 'report') report(ctx, rc.root, op, tally, failedThisRun);
      else work.push(op);
    }
    if (work.length === 0) {
      clearResolvedFailures(journal, rc.root, snapshot.deferred);
      return 'converged';
    }

    const verdict = checkMassDelete({
      journal,
      root: rc.root.id,
      localPath: rc.root.localPath,
      ops: work,
      maxDeletes: ctx.options.maxDeletes,
      maxDeleteFraction: ctx.options.maxDeleteFraction,
    });
    // A confirmation covers the rest of this run for the root: a confirmed mass delete may take several passes.
    if (verdict && ctx.allowedGuards.delete(verdict.id)) deletesConfirmed = true;
    if (verdict && !deletesConfirmed) {
      status.heldGuard = { id: verdict.id, message: verdict.message };
      ctx.logger.warn({ root: rc.root.id, deletes: verdict.deletes, total: verdict.totalItems }, verdict.message);
      status.emit(true);
      return 'guard';
    }

    status.setPhase('transferring');
    // Each outcome is committed as soon as its operation ends, so progress survives a crash mid-batch.
    await Promise.all(
      work.map(async (op) => {
        const outcome = await ctx.queue.add(taskFor(ctx, rc, op));
        const final = outcome.status === 'done' ? commit(ctx, rc.root.id, op, outcome, tally) : outcome;
        if (final.status === 'failed') await handleFailure(ctx, rc, op, final.error, { tally, failedThisRun, replans, found: foundByReplans });
      }),
    );
    if (tally.fatal) return 'fatal';
    if (scope.kind === 'hinted') {
      const more = [...work.flatMap(pathsTouched), ...foundByReplans.splice(0)];
      scope = { ...scope, localPaths: [...scope.localPaths, ...more] };
    }
  }
  ctx.logger.warn({ root: rc.root.id, passes: MAX_PASSES }, 'the plan did not settle; stopping this run, the next run continues');
  return 'stalled';
}

function transferOf(ctx: ReconcileContext, root: RootId, op: Operation): Pick<QueueTask, 'direction' | 'totalBytes'> {
  switch (op.kind) {
    case 'download':
      return { direction: 'down', totalBytes: op.expect.sizeBytes };
    case 'upload':
    case 'upload-version':
      return { direction: 'up', totalBytes: op.guard.state === 'file' ? op.guard.sizeBytes : (ctx.journal.getLocal(root, op.path)?.sizeBytes ?? 0) };
    default:
      return { direction: null, totalBytes: 0 };
  }
}

function taskFor(ctx: ReconcileContext, rc: RootContext, op: Operation): QueueTask {
  return {
    root: rc.root.id,
    path: opPath(op),
    ...transferOf(ctx, rc.root.id, op),
    run: (onProgress) =>
      execute(op, {
        journal: ctx.journal,
        remote: ctx.remote,
        fs: rc.fs,
        root: rc.root,
        logger: ctx.logger,
        onProgress,
        ...(ctx.signal ? { signal: ctx.signal } : {}),
      }),
  };
}

function commit(ctx: ReconcileContext, root: RootId, op: Operation, outcome: Extract<Outcome, { status: 'done' }>, tally: Tally): Outcome {
  try {
    ctx.journal.transaction(() => {
      commitOutcome(ctx.journal, root, op, outcome.result);
      ctx.journal.clearFailure(root, opPath(op));
      if (op.kind === 'local-move' || op.kind === 'remote-move') ctx.journal.clearFailure(root, op.from);
    });
  } catch (e) {
    return { status: 'failed', error: toSyncError(e) };
  }
  tally.ops[op.kind] = (tally.ops[op.kind] ?? 0) + 1;
  if (op.kind === 'download') tally.downloadedBytes += outcome.result.bytes;
  if (op.kind === 'upload' || op.kind === 'upload-version') tally.uploadedBytes += outcome.result.bytes;
  if (op.kind === 'conflict-copy') {
    tally.conflicts += 1;
    ctx.status.addConflict({ root, path: op.path, copy: op.to, atMs: ctx.clock.now() });
  }
  ctx.logger.info({ root, op: op.kind, path: opPath(op), reason: op.reason }, `${op.kind} ${opPath(op)}`);
  ctx.events.onOperation?.({ root, kind: op.kind, path: opPath(op), reason: op.reason, ok: true });
  return outcome;
}

function report(ctx: ReconcileContext, root: SyncRoot, op: Extract<Operation, { kind: 'report' }>, tally: Tally, failedThisRun: Set<string>): void {
  failedThisRun.add(signature(op));
  tally.reported += 1;
  const message = `${op.reason}; skipped until it changes`;
  ctx.journal.recordFailure({ root: root.id, path: op.path, code: op.problem, message, attempts: 1, nextRetryAtMs: ctx.clock.now(), disposition: 'skip' });
  ctx.logger.warn({ root: root.id, path: op.path, problem: op.problem }, message);
  ctx.events.onOperation?.({ root: root.id, kind: 'report', path: op.path, reason: op.reason, ok: false, error: message });
}

async function handleFailure(
  ctx: ReconcileContext,
  rc: RootContext,
  op: Operation,
  error: SyncError,
  run: { tally: Tally; failedThisRun: Set<string>; replans: Map<string, number>; found: RelPath[] },
): Promise<void> {
  const root = rc.root.id;
  const path: RelPath = opPath(op);
  // Our own stop (Ctrl-C, SIGTERM) cut the operation short: the item did not fail, and the next run plans it
  // again from the trees. Recording it would make every interrupted transfer wait out a backoff.
  if (ctx.signal?.aborted) {
    ctx.logger.debug({ root, op: op.kind, path }, 'cancelled by stop; the next run continues it');
    return;
  }
  ctx.events.onOperation?.({ root, kind: op.kind, path, reason: op.reason, ok: false, error: error.message });
  switch (error.disposition) {
    case 'fatal':
      run.tally.fatal ??= error;
      ctx.logger.error({ root, op: op.kind, path, code: error.code }, error.message);
      return;
    case 'retry':
    case 'skip':
      park(ctx, root, path, error, run.failedThisRun, op);
      return;
    case 'replan': {
      const n = (run.replans.get(signature(op)) ?? 0) + 1;
      run.replans.set(signature(op), n);
      ctx.logger.info({ root, op: op.kind, path, code: error.code }, `${error.message} (re-observing)`);
      if (n >= MAX_REPLANS) park(ctx, root, path, error, run.failedThisRun, op);
      try {
        run.found.push(...await reobserve({ op, journal: ctx.journal, remote: ctx.remote, root: rc.root, fs: rc.fs, isIgnored: rc.isIgnored, logger: ctx.logger, ...(ctx.signal ? { signal: ctx.signal } : {}) }));
      } catch (e) {
        const again = toSyncError(e);
        if (again.disposition === 'fatal') run.tally.fatal ??= again;
        else park(ctx, root, path, again, run.failedThisRun, op);
      }
      return;
    }
    default:
      assertNever(error.disposition);
  }
}

function park(ctx: ReconcileContext, root: RootId, path: RelPath, error: SyncError, failedThisRun: Set<string>, op: Operation): void {
  failedThisRun.add(signature(op));
  const rec = recordOpFailure(ctx.journal, { root, path, error, nowMs: ctx.clock.now(), random: ctx.random() });
  ctx.logger.warn({ root, op: op.kind, path, code: error.code, nextRetryAtMs: rec.nextRetryAtMs }, error.message);
}

/**
 * At quiescence, a retry/replan failure whose backoff has elapsed needs nothing any more (the plan for its path
 * is empty): the item was fixed, synced another way, or went away. Parked 'skip' rows stay until the item changes.
 */
function clearResolvedFailures(journal: Journal, rootEntry: SyncRoot, deferred: ReadonlySet<RelPath>): void {
  const root = rootEntry.id;
  // Also resolved: a retry whose path no longer names anything in any of the three trees (the item was renamed
  // or its folder moved while the failing operation ran); the item is planned again under its new path.
  const gone = (path: RelPath): boolean =>
    path !== '' && journal.getLocal(root, path) === undefined && journal.getSynced(root, path) === undefined && remoteAtPath(journal, rootEntry, path) === undefined;
  const resolved = journal.failures(root).filter(
    (f) => f.disposition !== 'skip' && (!deferred.has(f.path) || (f.code !== 'listing_incomplete' && gone(f.path))),
  );
  if (resolved.length === 0) return;
  journal.transaction(() => {
    for (const f of resolved) journal.clearFailure(root, f.path);
  });
}

/** The remote row at a path under a root, by walking names from the root (undefined when nothing is there). */
function remoteAtPath(journal: Journal, root: SyncRoot, path: RelPath): RemoteEntry | undefined {
  let cur: RemoteEntry | undefined = journal.getRemote(root.remoteId);
  for (const name of path.split('/')) {
    if (!cur) return undefined;
    cur = journal.remoteChildNamed(cur.id, name);
  }
  return cur;
}
