/**
 * `sync --once --dry-run`: what the next real run would do, computed without doing any of it.
 *
 *   the real engine (observe, plan, guards, windows, held deletes, follow-ups, commit) ──► journal COPY
 *                      │ each operation
 *                      ▼
 *   RecordingExecutor (recording-executor.ts): records it, answers what its success would produce
 *
 * There is no second reconciler: the dry run is `createEngine` run once with the executor swapped for a recorder,
 * so it plans exactly as the real run does, pass by pass. What must not happen does not:
 * - the journal: the caller hands in a throw-away copy (an online backup in a private temp folder, sync-dry-run.ts):
 *   the run observes and commits there as a real run would; the real journal and its event cursor stay as they
 *   were, so the next real run observes the same changes. (A rolled-back transaction cannot hold a run of many
 *   commits; a copy can, and it is dropped whole.)
 * - Box: only read (readOnlyRemoteStore refuses every write; no prefetch of downloads);
 * - the disk: only read (readOnlyLocalFs: a scan that leaves partial downloads where they are, every write refused:
 *   no temp file, no local trash, no root folder or marker), and the root guard judges without writing.
 * What only the real run can know (a failure, a 412 that makes it re-plan, what a Box folder restored from the
 * trash holds, a conflict copy's name, which takes the time of the pass) is the limit of the prediction.
 */
import { SyncError } from '../core/errors.js';
import { escapeText } from '../core/escape.js';
import type { RelPath, RemoteId, RootId } from '../core/model.js';
import { opPath, type OperationKind, type ProblemCode } from '../core/operations.js';
import type { LocalFs } from '../ports/local-fs.js';
import type { RemoteStore } from '../ports/remote-store.js';
import { createEngine } from './engine.js';
import { deferredPaths } from './failures.js';
import { parseGuardId } from './guard-id.js';
import { RecordingExecutor, type RecordedOperation } from './recording-executor.js';
import type { EngineDeps } from './types.js';

export interface PlannedOperation {
  /** The pass of the real run this operation belongs to (1 = the first batch). */
  readonly pass: number;
  readonly kind: Exclude<OperationKind, 'report'>;
  /** The path the operation acts on (a move's destination), as the real run's operation lines show it. */
  readonly path: RelPath;
  /** A move's source. */
  readonly from: RelPath | null;
  readonly reason: string;
}

export interface PlannedReport {
  readonly path: RelPath;
  readonly problem: ProblemCode;
  readonly reason: string;
}

export interface DryRunRoot {
  readonly root: RootId;
  readonly localPath: string;
  readonly remoteId: string;
  readonly ops: readonly PlannedOperation[];
  /** Items the planner refuses to sync (names Box refuses, symlinks...): recorded and skipped by the real run. */
  readonly reports: readonly PlannedReport[];
  /** Paths waiting for their backoff (failures table): the real run leaves them alone too. */
  readonly deferred: number;
  /** A safety guard that would stop the real run for this root, or null. */
  readonly guard: { readonly id: string; readonly message: string } | null;
  /** What else the real run would do or could not be predicted (a local root folder created, a simulation limit). */
  readonly notes: readonly string[];
}

export interface DryRunReport {
  readonly roots: readonly DryRunRoot[];
  /** Operations over every root. */
  readonly total: number;
  /** True when some root would be stopped by a safety guard (sync --once would exit 3). */
  readonly guarded: boolean;
}

/**
 * A LocalFs that can only look: its full scan keeps temp files (and finds a root folder not made yet empty, as
 * the real run's first scan after creating it does), and every write throws.
 */
export function readOnlyLocalFs(fs: LocalFs): LocalFs {
  const refuse = (what: string) => (): never => {
    throw new Error(`dry run: refused to ${what} on disk`);
  };
  return {
    rootPath: fs.rootPath,
    abs: (p) => fs.abs(p),
    scan: async function* (opts) {
      if (await fs.rootExists()) yield* fs.scan({ ...opts, removeTemps: false });
    },
    ...(fs.probe ? { probe: (p: RelPath | '') => fs.probe!(p) } : {}),
    stat: (p) => fs.stat(p),
    hash: (p) => fs.hash(p),
    // Reading is looking; the store it would go to refuses every upload.
    openForUpload: (p, expect) => fs.openForUpload(p, expect),
    tempPathFor: (p) => fs.tempPathFor(p),
    childNames: (p, o) => fs.childNames(p, o),
    rootExists: () => fs.rootExists(),
    rootState: (marker) => fs.rootState(marker),
    writeRootMarker: refuse('write the root marker'),
    mkdir: refuse('create a folder'),
    openTemp: refuse('create a temp file'),
    discardTemp: refuse('remove a temp file'),
    createRoot: refuse('create the root folder'),
    commitTemp: refuse('write a file'),
    move: refuse('move'),
    copyInto: refuse('copy a file'),
    // Reached by a deselected folder's freeing only (selective-free.ts), which then says the copy is kept.
    trash: refuse('trash'),
    removeTree: refuse('remove'),
    writeSmallFile: refuse('write a file'),
    // Nothing was written: nothing to make durable.
    durable: async () => undefined,
  };
}

/** A RemoteStore that can only read Box. */
export function readOnlyRemoteStore(remote: RemoteStore): RemoteStore {
  const refuse = (what: string) => (): never => {
    throw new Error(`dry run: refused to ${what} on Box`);
  };
  return {
    account: () => remote.account(),
    getItem: (id, kind) => remote.getItem(id, kind),
    listFolder: (id, signal) => remote.listFolder(id, signal),
    ...(remote.pathIds ? { pathIds: (id: RemoteId) => remote.pathIds!(id) } : {}),
    download: refuse('download'),
    uploadNew: refuse('upload'),
    uploadVersion: refuse('upload'),
    createFolder: refuse('create a folder'),
    move: refuse('move'),
    trash: refuse('trash'),
    restore: refuse('restore'),
    setSyncState: refuse('mark a folder'),
  };
}

/**
 * Run the real engine once over `deps.journal` (which must be a copy) with the recorder as its executor.
 * `deps.remote` and `localFsFor` are wrapped read-only here, so a mistake cannot write anything.
 */
export async function planDryRun(deps: EngineDeps, opts: { fullRescan?: boolean; signal?: AbortSignal } = {}): Promise<DryRunReport> {
  const { journal, clock } = deps;
  const recorder = new RecordingExecutor(() => clock.now());
  const notices: { root: RootId | null; text: string }[] = [];
  const guards: { id: string; message: string }[] = [];
  const reported: { root: RootId; path: RelPath; reason: string }[] = [];
  const failed: { root: RootId; kind: OperationKind; path: RelPath; error?: string }[] = [];
  // Waiting for their backoff before the run: the real run leaves them alone too.
  const deferred = new Map(deps.roots.map((r) => [r.id, deferredPaths(journal, r.id, clock.now()).size]));
  const fsByRoot = new Map<RootId, LocalFs>();
  const fsFor = (root: EngineDeps['roots'][number]): LocalFs => {
    let fs = fsByRoot.get(root.id);
    if (!fs) fsByRoot.set(root.id, (fs = readOnlyLocalFs(deps.localFsFor(root))));
    return fs;
  };
  const engine = createEngine(
    { ...deps, remote: readOnlyRemoteStore(deps.remote), localFsFor: fsFor, executor: recorder },
    {
      onNotice: (n) => notices.push(n),
      onGuard: (g) => guards.push(g),
      onOperation: (o) => {
        if (o.kind === 'report') reported.push(o);
        else if (!o.ok) failed.push(o);
      },
    },
  );
  try {
    const summary = await engine.runOnce({ fullRescan: opts.fullRescan === true, ...(opts.signal ? { signal: opts.signal } : {}) });
    opts.signal?.throwIfAborted();
    // What stops the real run stops the plan: said as the real run says it (sync-dry-run.ts adds "nothing changed").
    const fatal = engine.status().fatal;
    if (fatal) throw new SyncError({ code: fatal.code, disposition: 'fatal', message: fatal.message });
    if (summary.error !== undefined) throw new SyncError({ code: 'dry_run_incomplete', disposition: 'retry', message: summary.error });
  } finally {
    await engine.close();
  }
  const roots: DryRunRoot[] = [];
  for (const root of deps.roots) {
    const guard = guards.find((g) => parseGuardId(g.id)?.root === root.id) ?? null;
    const notes = notices.filter((n) => n.root === root.id || (n.root === null && root === deps.roots[0])).map((n) => n.text);
    if (guard === null && !(await fsFor(root).rootExists())) notes.unshift(`the local folder ${escapeText(root.localPath)} does not exist yet; the real run creates it`);
    const mine = recorder.records.filter((r) => r.root === root.id);
    const stopped = mine.find((r) => r.unpredictable !== undefined);
    if (stopped) notes.push(`${escapeText(opPath(stopped.op))}: the rest of its plan depends on results only the real run sees (${stopped.unpredictable})`);
    for (const r of mine) {
      if (r.op.kind !== 'remote-restore') continue;
      // The journal keeps only Box's live tree: the recorder restores an item as it was last synced.
      const what = r.op.itemKind === 'folder' ? `${escapeText(r.op.path)}/ and what it holds` : escapeText(r.op.path);
      notes.push(`${what} come${r.op.itemKind === 'folder' ? '' : 's'} back from the Box trash as Box keeps ${r.op.itemKind === 'folder' ? 'them' : 'it'} there, which Box shows only once restored: the plan after the restore assumes what was last synced`);
    }
    if (!stopped) for (const f of failed.filter((x) => x.root === root.id)) notes.push(`${f.kind} ${escapeText(f.path)} could not be recorded (${f.error ?? 'failed'}); the rest of the plan may differ from the real run`);
    const failures = new Map(journal.failures(root.id).map((f) => [f.path, f.code]));
    roots.push({
      root: root.id,
      localPath: root.localPath,
      remoteId: root.remoteId,
      ops: plannedOps(mine),
      reports: reported.filter((r) => r.root === root.id).map((r) => ({ path: r.path, problem: failures.get(r.path) as ProblemCode, reason: r.reason })),
      deferred: deferred.get(root.id) ?? 0,
      guard: guard === null ? null : { id: guard.id, message: guard.message },
      notes,
    });
  }
  const total = roots.reduce((n, r) => n + r.ops.length, 0);
  return { roots, total, guarded: roots.some((r) => r.guard !== null) };
}

/** The records of one root as the report lists them: its passes numbered from 1 (the run counts over all roots). */
function plannedOps(records: readonly RecordedOperation[]): PlannedOperation[] {
  const passes = [...new Set(records.map((r) => r.pass))].sort((a, b) => a - b);
  return records.flatMap(({ op, pass }) =>
    op.kind === 'report'
      ? []
      : [{ pass: passes.indexOf(pass) + 1, kind: op.kind, path: opPath(op), from: op.kind === 'local-move' || op.kind === 'remote-move' ? op.from : null, reason: op.reason }],
  );
}
