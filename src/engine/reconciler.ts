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
import { InFlight, type BusyPaths } from './live-lane.js';
import { SyncError } from '../core/errors.js';
import type { RelPath, RemoteEntry, RemoteId, RootId, Snapshot, SyncRoot } from '../core/model.js';
import { ancestorsOf, joinPath } from '../core/paths.js';
import { assertNever, opPath, pathsTouched, type Operation, type OperationKind } from '../core/operations.js';
import { plan } from '../core/plan.js';
import type { Clock } from '../ports/clock.js';
import type { Journal } from '../ports/journal.js';
import type { LocalFs } from '../ports/local-fs.js';
import type { PrefetchFile, RemoteStore } from '../ports/remote-store.js';
import type { Logger } from 'pino';
import { CommitBatch } from './commit-batch.js';
import { commitOutcome } from './commit.js';
import { checkMassDelete, rootSideEmpty } from './delete-guard.js';
import { execute, toSyncError, type Executor, type OpResult, type Outcome } from './executor.js';
import { createsFolder, followUps } from './follow-ups.js';
import type { IsIgnored } from './observe-local.js';
import { reobserve } from './reobserve.js';
import { buildSnapshotSliced, type SnapshotScope } from './snapshot.js';
import { timeSlicer } from './time-slice.js';
import { runSliced } from '../core/slices.js';
import { caseTwinsOnTheWaySteps, DEFAULT_WINDOW_ENTRIES, fitsOneWindow, planWindows } from './windows.js';
import { WindowPrefetch } from './window-prefetch.js';
import { WindowRows } from './window-rows.js';
import { remoteAtPath, remoteFilesBelow, type RemoteChildren } from './remote-tree.js';
import { holdsWhole, snapshotChildren } from './snapshot-rows.js';
import { deferredPaths, recordOpFailure } from './failures.js';
import { probedLocally } from '../core/park-class.js';
import type { StatusTracker } from './status-tracker.js';
import { DOWNLOAD_GROUP, SMALL_FILE_BYTES, type QueueTask, type TransferQueue } from './transfer-queue.js';
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
  /**
   * Called between the windows of a windowed full pass (the journal is consistent then: no transfer of the pass
   * is in flight): the engine syncs what changed meanwhile (the daemon's hints) before the next window, so a
   * live change does not wait for the whole pass.
   */
  readonly betweenWindows?: () => Promise<void>;
  /** While a batch has only big transfers in flight, the engine syncs live hints meanwhile (live-lane.ts). */
  readonly liveLane?: (batch: Promise<unknown>, inFlight: InFlight) => Promise<void>;
  /** A live sync's paths busy with a big transfer: operations on them are not run (`skipped` says one was). */
  readonly busy?: { readonly paths: BusyPaths; skipped: boolean };
  /** What carries out the operations (default: the executor); the dry run swaps in a recorder. */
  readonly executor?: Executor;
  /** An operation that wrote to Box was committed (its event comes back as an echo: engine.ts echoesLikely). */
  readonly onBoxWrite?: () => void;
}

/** The operations that write to Box: each comes back in Box's event stream as an echo. */
const BOX_WRITES: ReadonlySet<OperationKind> = new Set<OperationKind>(['upload', 'upload-version', 'create-remote-folder', 'remote-move', 'remote-trash', 'remote-restore', 'conflict-copy']);

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
  windows: number;
  reported: number;
  fatal: SyncError | null;
}

export function newTally(): Tally {
  return { ops: {}, uploadedBytes: 0, downloadedBytes: 0, conflicts: 0, passes: 0, windows: 0, reported: 0, fatal: null };
}

export type RootOutcome = 'converged' | 'guard' | 'fatal' | 'stalled';

const signature = (op: Operation): string => `${op.kind}:${opPath(op)}`;

/** What one run remembers across the passes and the windows of a root. */
interface RunState {
  readonly failedThisRun: Set<string>;
  readonly replans: Map<string, number>;
  readonly foundByReplans: RelPath[];
  deletesConfirmed: boolean;
}

/**
 * How long a commit waits for more outcomes while operations of its pass still run. Each commit writes its
 * pages to the WAL and fsyncs the folders of its renames: outcomes trickled in 1-8 a commit, and commits of up
 * to 64 took a tenth off a 2,000-file first mirror. The last outcome of a pass never waits. With the commits into
 * place on the file worker threads, a window's 300 small downloads end within a few hundred ms: a commit gathers
 * up to 256 of them for up to 250 ms, about one transaction a window.
 */
const COMMIT_GATHER_MS = 250;
const COMMIT_GATHER_COUNT = 256;

/** A window whose first plan deletes something waits until every window was planned (the guard sees them all). */
type ScopeOutcome = RootOutcome | { readonly held: readonly Operation[] };

const isHeld = (o: ScopeOutcome): o is { readonly held: readonly Operation[] } => typeof o === 'object';
const isTrash = (op: Operation): boolean => op.kind === 'remote-trash' || op.kind === 'local-trash';

export async function reconcileRoot(ctx: ReconcileContext, rc: RootContext, initialScope: SnapshotScope, tally: Tally): Promise<RootOutcome> {
  const state: RunState = { failedThisRun: new Set(), replans: new Map(), foundByReplans: [], deletesConfirmed: false };
  const windowEntries = ctx.options.windowEntries ?? DEFAULT_WINDOW_ENTRIES;
  if (initialScope.kind === 'full' && !fitsOneWindow(ctx.journal, rc.root, windowEntries)) return reconcileWindows(ctx, rc, windowEntries, tally, state);
  const out = await reconcileScope(ctx, rc, initialScope, tally, state, { window: false });
  return isHeld(out) ? 'guard' : out;
}

/**
 * A full pass over a big root, window by window (windows.ts). A window whose first plan trashes anything is
 * held back; when every window was planned, the mass-delete guard judges all the held deletions together (as a
 * full pass would), and only then do the held windows run.
 */
async function reconcileWindows(ctx: ReconcileContext, rc: RootContext, windowEntries: number, tally: Tally, state: RunState): Promise<RootOutcome> {
  const held: { bases: RelPath[]; trash: readonly Operation[] }[] = [];
  const outcomes: RootOutcome[] = [];
  let windows = 0;
  // Each remote folder read once a window, by the lookahead, the snapshots and the follow-ups (window-rows.ts).
  const rows = new WindowRows(ctx.journal);
  const runWindow = async (bases: RelPath[], holdDeletes: boolean): Promise<ScopeOutcome> => {
    windows += 1;
    tally.windows += 1;
    return reconcileScope(ctx, rc, { kind: 'hinted', localPaths: bases, remoteIds: [], closeMoves: true }, tally, state, { window: true, holdDeletes, rows });
  };
  // The next window's downloads are announced while this one runs (window-prefetch.ts): its archive is ready in time.
  const ahead = new WindowPrefetch({ journal: ctx.journal, root: rc.root, isIgnored: rc.isIgnored, remote: ctx.remote, windowEntries, remoteRows: rows, ...(ctx.signal ? { signal: ctx.signal } : {}) });
  try {
    let downloading = true;
    for (const bases of planWindows(ctx.journal, rc.root, rc.isIgnored, windowEntries)) {
      ctx.signal?.throwIfAborted();
      // Before the first window too: what changed during the listing and the scan does not wait for its window.
      await ctx.betweenWindows?.();
      if (tally.fatal) return 'fatal';
      const index = windows;
      const before = tally.ops.download ?? 0;
      rows.startWindow(index);
      ahead.beforeWindow(index, downloading);
      const out = await runWindow(bases, true);
      ahead.afterWindow(index);
      rows.endWindow(index);
      downloading = (tally.ops.download ?? 0) > before;
      if (isHeld(out)) held.push({ bases, trash: out.held });
      else if (out === 'fatal') return 'fatal';
      else outcomes.push(out);
    }
  } finally {
    ahead.close();
    rows.clear();
  }
  if (held.length > 0) {
    const trash = distinctTrash(held.flatMap((h) => h.trash));
    const verdict = massDeleteVerdict(ctx, rc, trash);
    if (verdict && ctx.allowedGuards.delete(verdict.id)) state.deletesConfirmed = true;
    if (verdict && !state.deletesConfirmed) {
      holdGuard(ctx, rc, verdict, trash);
      return 'guard';
    }
    for (const h of held) {
      ctx.signal?.throwIfAborted();
      const out = await runWindow(h.bases, false);
      if (isHeld(out)) return 'guard';
      if (out === 'fatal') return 'fatal';
      outcomes.push(out);
    }
  }
  ctx.logger.debug({ root: rc.root.id, windows, windowEntries }, 'full pass planned in windows');
  for (const worst of ['guard', 'stalled'] as const) if (outcomes.includes(worst)) return worst;
  clearResolvedFailures(ctx.journal, rc.root, deferredPaths(ctx.journal, rc.root.id, ctx.clock.now()));
  return 'converged';
}

/** Two windows may hold the same deletion (a window also takes the far end of a move): count each item once. */
function distinctTrash(ops: readonly Operation[]): Operation[] {
  const byPath = new Map<string, Operation>();
  for (const op of ops) byPath.set(signature(op), op);
  const paths = new Set([...byPath.values()].map(opPath));
  return [...byPath.values()].filter((op) => !ancestorsOf(opPath(op)).some((a) => paths.has(a)));
}

function massDeleteVerdict(ctx: ReconcileContext, rc: RootContext, ops: readonly Operation[]) {
  return checkMassDelete({
    journal: ctx.journal,
    root: rc.root.id,
    localPath: rc.root.localPath,
    ops,
    maxDeletes: ctx.options.maxDeletes,
    maxDeleteFraction: ctx.options.maxDeleteFraction,
    sideEmpty: (side) => rootSideEmpty(ctx.journal, rc.root, rc.isIgnored, side),
  });
}

/** How many of the paths a held mass delete would delete `status` and the web page list. */
const GUARD_PATHS_SHOWN = 20;

function holdGuard(ctx: ReconcileContext, rc: RootContext, verdict: NonNullable<ReturnType<typeof massDeleteVerdict>>, trash: readonly Operation[]): void {
  const firstPaths = [...new Set(trash.filter(isTrash).map(opPath))].sort().slice(0, GUARD_PATHS_SHOWN);
  ctx.status.heldGuard = { id: verdict.id, message: verdict.message, deletes: verdict.deletes, firstPaths };
  ctx.events.onGuard?.({ id: verdict.id, message: verdict.message });
  ctx.logger.warn({ root: rc.root.id, deletes: verdict.deletes, total: verdict.totalItems }, verdict.message);
  ctx.status.emit(true);
}

/**
 * The paths a window already covers: its bases, everything below them, and their ancestors (which its snapshot
 * holds as context). What an operation touches outside them joins the window for its next pass.
 */
function coverage(bases: readonly RelPath[]): { covers: (p: RelPath) => boolean; add: (p: RelPath) => void } {
  const inside = new Set<RelPath>();
  const above = new Set<RelPath>();
  const add = (p: RelPath): void => {
    inside.add(p);
    for (const a of ancestorsOf(p)) above.add(a);
  };
  for (const b of bases) add(b);
  return { covers: (p) => inside.has(p) || above.has(p) || ancestorsOf(p).some((a) => inside.has(a)), add };
}

async function reconcileScope(
  ctx: ReconcileContext,
  rc: RootContext,
  initialScope: SnapshotScope,
  tally: Tally,
  state: RunState,
  mode: { readonly window: boolean; readonly holdDeletes?: boolean; readonly rows?: WindowRows },
): Promise<ScopeOutcome> {
  const { journal, status } = ctx;
  const { failedThisRun } = state;
  let scope = initialScope;
  const covered = mode.window && scope.kind === 'hinted' ? coverage(scope.localPaths) : null;
  // Operations of the current pass whose outcome is not known yet: while there are some, a commit gathers more.
  let running = 0;
  const commits = new CommitBatch({
    transactionEach: (writes) => journal.transactionEach(writes),
    beforeCommit: () => rc.fs.durable(),
    expectMore: () => running > 0,
    gatherMs: COMMIT_GATHER_MS,
    gatherCount: COMMIT_GATHER_COUNT,
  });
  // A big scope's snapshot lets the event loop in every 20 ms (status, the watcher): see buildSnapshotSliced.
  const slice = timeSlicer();
  for (let pass = 1; pass <= MAX_PASSES; pass++) {
    ctx.signal?.throwIfAborted();
    status.setPhase('planning');
    const nowMs = ctx.clock.now();
    const snapshot = await buildSnapshotSliced({ journal, root: rc.root, isIgnored: rc.isIgnored, nowMs, scope, ...(mode.rows ? { remoteRows: mode.rows } : {}) }, slice);
    const planned = plan(snapshot, { nowMs });
    tally.passes += 1;
    const ops = planned.ops.filter((op) => !snapshot.deferred.has(opPath(op)) && !failedThisRun.has(signature(op)) && !skipBusy(ctx, op));
    const work: Operation[] = [];
    for (const op of ops) {
      // A clash is re-checked against its folder (park-recheck.ts): a rename or delete of the twin changes it.
      if (op.kind === 'report') report(ctx, rc.root, op, tally, failedThisRun, probedLocally(op.problem) ? await rc.fs.probe?.(op.path) : undefined);
      else work.push(op);
    }
    if (work.length === 0) {
      // A window sees part of the root: the failures of the rest are cleared when every window converged.
      if (!mode.window) clearResolvedFailures(journal, rc.root, snapshot.deferred, scope.kind === 'hinted' ? plannedIn(journal, rc.root, scope, snapshot) : undefined);
      return 'converged';
    }
    if (pass === 1 && mode.holdDeletes === true && !state.deletesConfirmed && work.some(isTrash)) return { held: work.filter(isTrash) };

    const verdict = massDeleteVerdict(ctx, rc, work);
    // A confirmation covers the rest of this run for the root: a confirmed mass delete may take several passes.
    if (verdict && ctx.allowedGuards.delete(verdict.id)) state.deletesConfirmed = true;
    if (verdict && !state.deletesConfirmed) {
      holdGuard(ctx, rc, verdict, work);
      return 'guard';
    }

    status.setPhase('transferring');
    // The plan, and each new folder's follow-ups, announced as they start (the CLI's heap policy: cli/run-heap.ts).
    const announce = (ops: readonly Operation[]): void => ctx.events.onPlanned?.({ root: rc.root.id, ops: ops.length, bytes: ops.reduce((n, op) => n + transferOf(ctx, rc.root.id, op).totalBytes, 0) });
    announce(work);
    // Each outcome is committed as soon as its operation ends (with those that ended meanwhile: commit-batch.ts),
    // so progress survives a crash mid-batch.
    running = work.length;
    // The adapter may bring many of this pass's downloads at once (Box: zip archives of small files): the plan's
    // own, and the files below the folders it creates here, which follow-ups download in this pass.
    const announced = ctx.remote.prefetch === undefined ? [] : prefetchFiles(journal, rc, work, scope, snapshot);
    const prefetched = ctx.remote.prefetch?.(announced, ctx.signal);
    // Their temp files' writers start while the requests run (LocalFs.warmUp).
    if (announced.length > 0 || work.some((op) => op.kind === 'download')) rc.fs.warmUp?.(announced);
    const inFlight = new InFlight();
    try {
      const runOp = async (op: Operation): Promise<void> => {
        const task = taskFor(ctx, rc, op, tally.passes);
        inFlight.add(op, task);
        let final: Outcome;
        try {
          const outcome = await ctx.queue.add(task);
          running -= 1;
          commits.wake();
          final = outcome.status === 'done' ? await commit(ctx, commits, rc.root.id, op, outcome, tally) : outcome;
          if (final.status === 'done' && BOX_WRITES.has(op.kind)) ctx.onBoxWrite?.();
        } finally {
          // Busy until committed: a live sync beside the batch plans from the journal (live-lane.ts).
          inFlight.delete(op);
        }
        await afterOp(op, final);
      };
      const afterOp = async (op: Operation, final: Outcome): Promise<void> => {
        if (final.status === 'failed') await handleFailure(ctx, rc, op, final.error, { tally, failedThisRun, replans: state.replans, found: state.foundByReplans });
        else if (createsFolder(op) && !ctx.signal?.aborted) {
          // What the new folder allows inside it runs in this pass too (follow-ups.ts): a deep new tree in one pass.
          const next = followUps({ journal, root: rc.root, isIgnored: rc.isIgnored, nowMs: ctx.clock.now(), scope, folder: opPath(op), skip: (o) => failedThisRun.has(signature(o)), ...(mode.rows ? { remoteRows: mode.rows } : {}) });
          work.push(...next);
          running += next.length;
          if (next.length > 0) announce(next);
          await runOps(next);
        }
      };
      // Small downloads a prefetch holds (their bytes come from an archive on disk) run in groups: one queue task and
      // one commit call for up to DOWNLOAD_GROUP files, each file still through the executor's own download (its
      // temp file, checks and guards) and committed, or failed, alone.
      const runGroup = async (ops: readonly DownloadOp[]): Promise<void> => {
        const tasks = ops.map((op) => taskFor(ctx, rc, op, tally.passes));
        ops.forEach((op, k) => inFlight.add(op, tasks[k]!));
        let finals: Outcome[];
        try {
          const outcomes = await runGrouped(ctx, rc.root.id, ops, tasks);
          running -= ops.length;
          commits.wake();
          finals = await commitGroup(ctx, commits, rc.root.id, ops, outcomes, tally);
        } finally {
          for (const op of ops) inFlight.delete(op);
        }
        await Promise.all(ops.map((op, k) => afterOp(op, finals[k]!)));
      };
      const runOps = (ops: readonly Operation[]): Promise<unknown> => {
        const grouped: DownloadOp[] = [];
        const alone: Operation[] = [];
        for (const op of ops) (groupable(ctx, op) ? grouped : alone).push(op);
        if (grouped.length < 2) return Promise.all(ops.map(runOp));
        const groups: Promise<void>[] = [];
        for (let i = 0; i < grouped.length; i += DOWNLOAD_GROUP) groups.push(runGroup(grouped.slice(i, i + DOWNLOAD_GROUP)));
        return Promise.all([...alone.map(runOp), ...groups]);
      };
      const batch = runOps(work);
      await (ctx.liveLane ? ctx.liveLane(batch, inFlight) : batch);
    } finally {
      prefetched?.release();
    }
    if (tally.fatal) return 'fatal';
    if (scope.kind === 'hinted') {
      const more = [...work.flatMap(pathsTouched), ...state.foundByReplans.splice(0)];
      let added = more;
      if (covered) {
        // A window takes what its operations touched outside it, and the twins of those (see caseTwins).
        const outside = more.filter((p) => !covered.covers(p));
        const twins: RelPath[] = [];
        // In slices: a path beside a big folder's 20,000 siblings reads them in pages, with turns between them.
        for (const p of outside) {
          const r = await runSliced(caseTwinsOnTheWaySteps(journal, rc.root, p));
          if (r.done) twins.push(...r.value);
        }
        added = [...new Set([...outside, ...twins])].filter((p) => !covered.covers(p));
      }
      for (const p of added) covered?.add(p);
      scope = { ...scope, localPaths: [...scope.localPaths, ...added] };
    }
  }
  ctx.logger.warn({ root: rc.root.id, passes: MAX_PASSES }, 'the plan did not settle; stopping this run, the next run continues');
  return 'stalled';
}

/** In a live sync (live-lane.ts): an operation on a path a big transfer holds waits for the next pass. */
function skipBusy(ctx: ReconcileContext, op: Operation): boolean {
  if (ctx.busy === undefined || !ctx.busy.paths.coversOp(op)) return false;
  ctx.busy.skipped = true;
  return true;
}

/** Rows walked below the folders a pass creates here, looking for the files it will download into them. */
const PREFETCH_WALK_ROWS = 50_000;

/**
 * The downloads a pass is about to run: its plan's, and the files below each folder it creates here (those come
 * down in the same pass as follow-ups, planned only once their folder exists). Ignored paths are left out.
 */
function prefetchFiles(journal: Journal, rc: RootContext, work: readonly Operation[], scope: SnapshotScope, snapshot: Snapshot): PrefetchFile[] {
  const out: PrefetchFile[] = [];
  let budget = PREFETCH_WALK_ROWS;
  let held: RemoteChildren | undefined;
  for (const op of work) {
    if (op.kind === 'download') out.push({ id: op.remoteId, name: op.path.slice(op.path.lastIndexOf('/') + 1), sha1: op.expect.sha1, sizeBytes: op.expect.sizeBytes });
    if (op.kind !== 'create-local-folder' || budget <= 0) continue;
    // The snapshot's own rows where it holds the folder's subtree whole (snapshot-rows.ts), else the journal's.
    const rows = holdsWhole(scope, op.path) ? (held ??= snapshotChildren(snapshot.remote)) : journal;
    const below = remoteFilesBelow(rows, { id: op.remoteId, path: op.path }, rc.isIgnored, { maxRows: budget, maxFiles: budget });
    budget -= below.rows;
    for (const f of below.files) out.push(f);
  }
  return out;
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

function taskFor(ctx: ReconcileContext, rc: RootContext, op: Operation, pass: number): QueueTask {
  const executor: Executor = ctx.executor ?? { execute };
  return {
    root: rc.root.id,
    path: opPath(op),
    ...transferOf(ctx, rc.root.id, op),
    run: (onProgress) =>
      executor.execute(op, {
        journal: ctx.journal,
        remote: ctx.remote,
        fs: rc.fs,
        root: rc.root,
        logger: ctx.logger,
        onProgress,
        pass,
        growingUploads: ctx.options.growingUploads === true,
        ...(ctx.signal ? { signal: ctx.signal } : {}),
      }),
  };
}

type DownloadOp = Extract<Operation, { kind: 'download' }>;

/** A download run in a group (reconcileScope's runGroup): a small file a prefetch holds. */
function groupable(ctx: ReconcileContext, op: Operation): op is DownloadOp {
  return op.kind === 'download' && op.expect.sizeBytes < SMALL_FILE_BYTES && ctx.remote.prefetched?.(op.remoteId) === true;
}

/**
 * The downloads of a group as one queue task (QueueTask.files): each runs its own task (the executor's download)
 * at once inside it, the group's progress is the sum of theirs; an outcome each. A group the queue did not run (a
 * failed outcome of its own) gives that outcome to each of its files.
 */
async function runGrouped(ctx: ReconcileContext, root: RootId, ops: readonly DownloadOp[], tasks: readonly QueueTask[]): Promise<Outcome[]> {
  const outcomes: (Outcome | undefined)[] = new Array<Outcome | undefined>(ops.length);
  const totalBytes = tasks.reduce((n, t) => n + t.totalBytes, 0);
  const group: Outcome = await ctx.queue.add({
    root,
    path: opPath(ops[0]!),
    direction: 'down',
    totalBytes,
    files: ops.length,
    run: async (onProgress) => {
      const done = new Array<number>(ops.length).fill(0);
      let sum = 0;
      await Promise.all(
        tasks.map(async (t, k) => {
          outcomes[k] = await t.run((p) => {
            sum += p.doneBytes - done[k]!;
            done[k] = p.doneBytes;
            onProgress({ doneBytes: sum, totalBytes });
          });
        }),
      );
      return { status: 'done', result: { bytes: sum } };
    },
  });
  return outcomes.map((o) => o ?? (group.status === 'failed' ? group : { status: 'failed', error: toSyncError(new Error('the group of downloads ended without this file')) }));
}

/** `commit` for a group's outcomes: their journal writes in one call (CommitBatch.addAll), then each told alone. */
async function commitGroup(ctx: ReconcileContext, commits: CommitBatch, root: RootId, ops: readonly Operation[], outcomes: readonly Outcome[], tally: Tally): Promise<Outcome[]> {
  const at: number[] = [];
  const events: OperationEvent[] = [];
  const writes: (() => void)[] = [];
  outcomes.forEach((outcome, k) => {
    if (outcome.status !== 'done') return;
    const op = ops[k]!;
    const event: OperationEvent = { root, kind: op.kind, path: opPath(op), reason: op.reason, ok: true };
    at.push(k);
    events.push(event);
    writes.push(commitWrite(ctx, root, op, outcome.result, event));
  });
  const finals = [...outcomes];
  const errors = await commits.addAll(writes);
  errors.forEach((e, i) => {
    const k = at[i]!;
    const outcome = outcomes[k] as Extract<Outcome, { status: 'done' }>;
    finals[k] = e === undefined ? committed(ctx, root, ops[k]!, outcome, tally, events[i]!) : { status: 'failed', error: toSyncError(e) };
  });
  return finals;
}

/**
 * An outcome's journal writes only (the batch may run a write twice: commit-batch.ts). The history row commits with
 * the operation, one transaction instead of two (10,000 small downloads spent 1.5 s in the second ones); the
 * listeners hear of it once it is committed.
 */
function commitWrite(ctx: ReconcileContext, root: RootId, op: Operation, result: OpResult, event: OperationEvent): () => void {
  return () => {
    commitOutcome(ctx.journal, root, op, result);
    ctx.journal.clearFailure(root, opPath(op));
    if (op.kind === 'local-move' || op.kind === 'remote-move') ctx.journal.clearFailure(root, op.from);
    recordHistory(ctx, event);
  };
}

async function commit(ctx: ReconcileContext, commits: CommitBatch, root: RootId, op: Operation, outcome: Extract<Outcome, { status: 'done' }>, tally: Tally): Promise<Outcome> {
  const event: OperationEvent = { root, kind: op.kind, path: opPath(op), reason: op.reason, ok: true };
  try {
    await commits.add(commitWrite(ctx, root, op, outcome.result, event));
  } catch (e) {
    return { status: 'failed', error: toSyncError(e) };
  }
  return committed(ctx, root, op, outcome, tally, event);
}

/** What follows an outcome's commit: the listeners, the tally, the log line. */
function committed(ctx: ReconcileContext, root: RootId, op: Operation, outcome: Extract<Outcome, { status: 'done' }>, tally: Tally, event: OperationEvent): Outcome {
  tell(ctx, event);
  tally.ops[op.kind] = (tally.ops[op.kind] ?? 0) + 1;
  if (op.kind === 'download') tally.downloadedBytes += outcome.result.bytes;
  if (op.kind === 'upload' || op.kind === 'upload-version') tally.uploadedBytes += outcome.result.bytes;
  if (op.kind === 'conflict-copy') {
    tally.conflicts += 1;
    ctx.status.addConflict({ root, path: op.path, copy: op.to, atMs: ctx.clock.now() });
  }
  ctx.logger.info({ root, op: op.kind, path: opPath(op), reason: op.reason }, `${op.kind} ${opPath(op)}`);
  return outcome;
}

type OperationEvent = Parameters<NonNullable<ReconcileContext['events']['onOperation']>>[0];

/** The operation's row in the journal's history (`boxsync history`). A history write that fails is logged and never fails the operation. */
function recordHistory(ctx: ReconcileContext, o: OperationEvent): void {
  try {
    ctx.journal.recordOperation({ root: o.root, path: o.path, kind: o.kind, reason: o.reason, ok: o.ok, error: o.error ?? null, atMs: ctx.clock.now() });
  } catch (e) {
    ctx.logger.warn({ err: e }, 'could not record the operation in the history');
  }
}

/** Tell the listeners about an operation; a listener that throws is logged and changes nothing. */
function tell(ctx: ReconcileContext, o: OperationEvent): void {
  try {
    ctx.events.onOperation?.(o);
  } catch (e) {
    ctx.logger.warn({ err: e }, `an operation listener failed: ${e instanceof Error ? e.message : String(e)}`);
  }
}

function report(ctx: ReconcileContext, root: SyncRoot, op: Extract<Operation, { kind: 'report' }>, tally: Tally, failedThisRun: Set<string>, probe?: string): void {
  failedThisRun.add(signature(op));
  tally.reported += 1;
  const message = `${op.reason}; skipped until it changes`;
  // A clash is re-checked by the daemon with backoff (recordOpFailure), never at every pass.
  const error = new SyncError({ code: op.problem, disposition: 'skip', message });
  recordOpFailure(ctx.journal, { root: root.id, path: op.path, error, nowMs: ctx.clock.now(), random: ctx.random(), probe: probe ?? null });
  ctx.logger.warn({ root: root.id, path: op.path, problem: op.problem }, message);
  const event: OperationEvent = { root: root.id, kind: 'report', path: op.path, reason: op.reason, ok: false, error: message };
  recordHistory(ctx, event);
  tell(ctx, event);
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
  const event: OperationEvent = { root, kind: op.kind, path, reason: op.reason, ok: false, error: error.message };
  recordHistory(ctx, event);
  tell(ctx, event);
  switch (error.disposition) {
    case 'fatal':
      run.tally.fatal ??= error;
      ctx.logger.error({ root, op: op.kind, path, code: error.code }, error.message);
      return;
    case 'retry':
    case 'skip':
      // A park on a condition remembers how the item and its folder looked, to be re-checked (park-recheck.ts).
      park(ctx, root, path, error, run.failedThisRun, op, error.disposition === 'skip' && probedLocally(error.code) ? await rc.fs.probe?.(path) : undefined);
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

function park(ctx: ReconcileContext, root: RootId, path: RelPath, error: SyncError, failedThisRun: Set<string>, op: Operation, probe?: string): void {
  failedThisRun.add(signature(op));
  const rec = recordOpFailure(ctx.journal, { root, path, error, nowMs: ctx.clock.now(), random: ctx.random(), probe: probe ?? null });
  ctx.logger.warn({ root, op: op.kind, path, code: error.code, nextRetryAtMs: rec.nextRetryAtMs }, error.message);
}

/**
 * At quiescence, a retry/replan failure whose backoff has elapsed needs nothing any more (the plan for its path
 * is empty): the item was fixed, synced another way, or went away. Parked 'skip' rows stay until the item changes.
 */
function clearResolvedFailures(journal: Journal, rootEntry: SyncRoot, deferred: ReadonlySet<RelPath>, planned?: (path: RelPath) => boolean): void {
  const root = rootEntry.id;
  // Also resolved: a retry whose path no longer names anything in any of the three trees (the item was renamed
  // or its folder moved while the failing operation ran); the item is planned again under its new path.
  const gone = (path: RelPath): boolean =>
    path !== '' && journal.getLocal(root, path) === undefined && journal.getSynced(root, path) === undefined && remoteAtPath(journal, rootEntry, path) === undefined;
  // A hinted pass that did not plan a path knows nothing of it: its failure stays, and the engine's wake time
  // hints the path (its backoff has elapsed), so the pass that plans it clears it or does the work. Clearing it
  // here left a file saved during its upload off Box until the nightly rescan.
  const resolved = journal.failures(root).filter(
    (f) => f.disposition !== 'skip' && (!deferred.has(f.path) ? planned?.(f.path) !== false : f.code !== 'listing_incomplete' && gone(f.path)),
  );
  if (resolved.length === 0) return;
  journal.transaction(() => {
    for (const f of resolved) journal.clearFailure(root, f.path);
  });
}

/** Did a hinted pass plan this path: hinted (or below a hinted path), or held by its snapshot on any of the three trees? */
function plannedIn(journal: Journal, root: SyncRoot, scope: Extract<SnapshotScope, { kind: 'hinted' }>, snapshot: Snapshot): (path: RelPath) => boolean {
  let hinted: Set<RelPath> | undefined;
  return (path) => {
    hinted ??= new Set(scope.localPaths);
    if (hinted.has(path) || ancestorsOf(path).some((a) => hinted!.has(a))) return true;
    if (snapshot.local.has(path) || snapshot.synced.has(path)) return true;
    const r = remoteAtPath(journal, root, path);
    return r !== undefined && snapshot.remote.has(r.id);
  };
}

