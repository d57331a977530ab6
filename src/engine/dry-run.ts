/**
 * `sync --once --dry-run`: what the next real run would do, computed without doing any of it.
 *
 *   observe (Box listing/events, local scan) ──► journal COPY ──► snapshot ──► plan ─┐
 *                                                                   ▲                  │ each op's successful outcome,
 *                                                                   └── simulated ◄────┘ as core/apply.ts models it
 *
 * The caller hands in a journal that is a throw-away copy of the real one (the observations are written there,
 * the real journal and its event cursor stay as they were, so the next real run observes the same changes).
 * Box is only read, and the local side goes through a read-only LocalFs: a scan that leaves partial downloads
 * where they are, and every write refused. Then each root is planned pass by pass as the reconciler would: the
 * reconciler's filters (deferred paths, reports once per run) and the mass-delete guard apply, and each pass's
 * batch is applied to an in-memory world with `applyOutcome` (the executable model of a successful operation)
 * until the plan is quiescent. So the printed plan is the real run's operations when every operation succeeds;
 * what only the real run can know (a failure, a 412 that makes it re-plan, a conflict copy's name, which takes
 * the time of the pass) is the limit of the prediction.
 */
import { applyOutcome, type Allocator, type World } from '../core/apply.js';
import { asRemoteId, type LocalEntry, type RelPath, type RootId, type Snapshot, type SyncedEntry } from '../core/model.js';
import { opPath, type Operation, type OperationKind, type ProblemCode } from '../core/operations.js';
import { isAncestorOrSelf } from '../core/paths.js';
import { plan } from '../core/plan.js';
import type { LocalFs } from '../ports/local-fs.js';
import type { RemoteStore } from '../ports/remote-store.js';
import { checkMassDelete, type DeleteGuardVerdict } from './delete-guard.js';
import { checkLocalRoot } from './root-guard.js';
import { guardIdText } from './guard-id.js';
import { localRootExists, scanLocal } from './observe-local.js';
import { observeRemote } from './observe-remote.js';
import { MAX_PASSES } from './reconciler.js';
import { createsFolder, creationsInside } from './follow-ups.js';
import { buildSnapshot } from './snapshot.js';
import { applyScopeChange, configOnlyRules, forgetRemovedRoots } from './scope-change.js';
import { dryRunSkips } from './selective.js';
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

/** A LocalFs that can only look: its full scan keeps temp files, and every write throws. */
export function readOnlyLocalFs(fs: LocalFs): LocalFs {
  const refuse = (what: string) => (): never => {
    throw new Error(`dry run: refused to ${what} on disk`);
  };
  return {
    rootPath: fs.rootPath,
    abs: (p) => fs.abs(p),
    scan: (opts) => fs.scan({ ...opts, removeTemps: false }),
    stat: (p) => fs.stat(p),
    hash: (p) => fs.hash(p),
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
 * Observe into `deps.journal` (which must be a copy) and plan every root to quiescence in simulation.
 * `deps.remote` and `localFsFor` are wrapped read-only here as well, so a mistake cannot write anything.
 */
export async function planDryRun(deps: EngineDeps, opts: { fullRescan?: boolean; signal?: AbortSignal } = {}): Promise<DryRunReport> {
  const { journal, logger, clock } = deps;
  const remote = readOnlyRemoteStore(deps.remote);
  const observed = await observeRemote(
    { journal, remote, changes: deps.changes, roots: deps.roots, streamType: deps.options.streamType, logger },
    { full: opts.fullRescan === true, extraIds: [], relistParked: true, ...(opts.signal ? { signal: opts.signal } : {}) },
  );
  const roots: DryRunRoot[] = [];
  const removed = forgetRemovedRoots(journal, deps.roots);
  for (const root of deps.roots) {
    const base = { root: root.id, localPath: root.localPath, remoteId: root.remoteId };
    const refusal = observed.refusals.find((r) => r.root === root.id);
    if (refusal) {
      roots.push({ ...base, ops: [], reports: [], deferred: 0, guard: { id: guardIdText({ kind: refusal.code, root: root.id }), message: refusal.message }, notes: [] });
      continue;
    }
    const fs = readOnlyLocalFs(deps.localFsFor(root));
    const isIgnored = deps.isIgnoredFor(root);
    // A pair that left the config is forgotten (scope-change.ts); said with the first root.
    const notes: string[] = root === deps.roots[0] ? [...removed] : [];
    const verdict = await checkLocalRoot(
      { journal, root, fs, isIgnored: isIgnored as (p: string, isDir: boolean) => boolean, marker: deps.options.rootMarker ?? null },
      { acceptNew: false, allowEmpty: false, checkEmpty: true, emptyGuard: deps.options.maxDeleteFraction < 1, readOnly: true },
    );
    if (!verdict.ok) {
      roots.push({ ...base, ops: [], reports: [], deferred: 0, guard: { id: verdict.id, message: verdict.message }, notes });
      continue;
    }
    if (await localRootExists(fs)) {
      await scanLocal({ journal, root, fs, isIgnored }, undefined, opts.signal);
      // As the real run does (on this copy of the journal): a change of scope is never a delete.
      notes.push(...applyScopeChange({ journal, root, rules: deps.scopeRulesFor?.(root) ?? configOnlyRules(root), isIgnored, nowMs: clock.now() }).notices);
    } else {
      if (verdict.note !== undefined) notes.push(verdict.note);
      journal.transaction(() => {
        for (const e of [...journal.localUnder(root.id, '')]) journal.deleteLocal(root.id, e.path);
      });
    }
    // selective.newFolders "skip": what the real run leaves unselected is left out here too, and said.
    const skips = deps.skipNewFolder === undefined ? { isIgnored, notes: [] } : dryRunSkips(journal, root, isIgnored);
    roots.push(simulateRoot(deps, base, skips.isIgnored, [...notes, ...skips.notes], clock.now()));
  }
  const total = roots.reduce((n, r) => n + r.ops.length, 0);
  return { roots, total, guarded: roots.some((r) => r.guard !== null) };
}

function simulateRoot(
  deps: EngineDeps,
  base: { root: RootId; localPath: string; remoteId: string },
  isIgnored: (p: RelPath, isDir: boolean) => boolean,
  notes: string[],
  nowMs: number,
): DryRunRoot {
  const rootCfg = deps.roots.find((r) => r.id === base.root)!;
  const first = buildSnapshot({ journal: deps.journal, root: rootCfg, isIgnored, nowMs, scope: { kind: 'full' } });
  const world: World = {
    remote: new Map(first.remote),
    local: new Map(first.local),
    synced: new Map(first.synced),
    remoteTrashed: new Set(first.remoteTrashed),
    localTrash: [],
    remoteVersions: new Map(),
  };
  let n = 0;
  const alloc: Allocator = {
    remoteId: () => asRemoteId(`dry-run-${++n}`),
    etag: () => `dry-run-${++n}`,
    // Negative: never the inode of a real file.
    inode: () => -++n,
    weblinkSha1: (url) => `dry-run-link:${url}`,
    nowMs: () => nowMs,
  };
  const ops: PlannedOperation[] = [];
  const reports: PlannedReport[] = [];
  const seen = new Set<string>();
  let guard: DeleteGuardVerdict | null = null;
  for (let pass = 1; ; pass++) {
    if (pass > MAX_PASSES) {
      notes.push(`the plan does not settle within ${MAX_PASSES} passes; the real run stops there and continues on the next one`);
      break;
    }
    const snapshot = pass === 1 ? first : snapshotOf(world, first);
    const planned = plan(snapshot, { nowMs });
    const work: Operation[] = [];
    for (const op of planned.ops) {
      const sig = `${op.kind}:${opPath(op)}`;
      if (first.deferred.has(opPath(op)) || seen.has(sig)) continue;
      if (op.kind === 'report') {
        seen.add(sig);
        reports.push({ path: op.path, problem: op.problem, reason: op.reason });
      } else work.push(op);
    }
    if (work.length === 0) break;
    // The real run counts against its journal, whose merge base follows the commits of earlier passes.
    const counts = pass === 1 ? deps.journal : syncedCounter(world);
    guard = checkMassDelete({
      journal: counts,
      root: base.root,
      localPath: base.localPath,
      ops: work,
      maxDeletes: deps.options.maxDeletes,
      maxDeleteFraction: deps.options.maxDeleteFraction,
      sideEmpty: (side) =>
        side === 'local'
          ? [...world.local.values()].every((l) => l.path.includes('/') || isIgnored(l.path, l.kind === 'folder'))
          : [...world.remote.values()].every((r) => r.parentId !== rootCfg.remoteId || isIgnored(r.name as RelPath, r.kind === 'folder')),
    });
    if (guard) break;
    try {
      for (const op of work) applyOutcome(world, op, alloc);
      // The real run follows each folder it creates with what that folder allows inside it, in the same pass.
      for (let made = work.filter(createsFolder).map(opPath); made.length > 0; ) {
        const more = creationsInside(plan(snapshotOf(world, first), { nowMs }).ops, made).filter((op) => !first.deferred.has(opPath(op)));
        for (const op of more) applyOutcome(world, op, alloc);
        work.push(...more);
        made = more.filter(createsFolder).map(opPath);
      }
    } catch (e) {
      notes.push(`after pass ${pass} the rest of the plan depends on results only the real run sees (${e instanceof Error ? e.message : String(e)})`);
      pushOps(ops, work, pass);
      break;
    }
    pushOps(ops, work, pass);
  }
  return {
    ...base,
    ops,
    reports,
    deferred: first.deferred.size,
    guard: guard ? { id: guard.id, message: guard.message } : null,
    notes,
  };
}

function pushOps(into: PlannedOperation[], work: readonly Operation[], pass: number): void {
  for (const op of work) {
    if (op.kind === 'report') continue;
    into.push({ pass, kind: op.kind, path: opPath(op), from: op.kind === 'local-move' || op.kind === 'remote-move' ? op.from : null, reason: op.reason });
  }
}

/**
 * The snapshot the observer would build after the simulated commits: like the scanner, a file whose stat
 * matches its base row is not re-hashed (SHA-1 null).
 */
function snapshotOf(w: World, first: Snapshot): Snapshot {
  const local = new Map<RelPath, LocalEntry>();
  for (const l of w.local.values()) {
    const s = w.synced.get(l.path);
    const unchanged = s !== undefined && s.inode === l.inode && s.mtimeMs === l.mtimeMs && s.sizeBytes === l.sizeBytes;
    local.set(l.path, { ...l, sha1: l.kind === 'file' && !unchanged ? l.sha1 : null });
  }
  return { root: first.root, remote: new Map(w.remote), local, synced: new Map(w.synced), remoteTrashed: new Set(w.remoteTrashed), deferred: first.deferred };
}

/** The two journal reads the mass-delete guard makes, over the simulated merge base. */
function syncedCounter(w: World): Parameters<typeof checkMassDelete>[0]['journal'] {
  const rows = (): SyncedEntry[] => [...w.synced.values()];
  return {
    syncedUnder: (_root, path) => rows().filter((s) => s.path !== path && (path === '' || isAncestorOrSelf(path, s.path))),
    countSynced: () => {
      const all = rows();
      const files = all.filter((s) => s.kind !== 'folder');
      return { files: files.length, folders: all.length - files.length, bytes: files.reduce((b, s) => b + s.sizeBytes, 0) };
    },
  };
}
