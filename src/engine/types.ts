/**
 * The engine's public face: what the CLI (`sync --once`) and the daemon drive, and what `status` reports.
 * Built by the composition root (src/daemon/compose.ts) from adapters; the engine sees adapters only through ports.
 *
 *   hints (watcher, long poll) ──► observer ──► journal (remote / local / synced trees)
 *                                                  │
 *                                     planner (core/plan, pure) ◄─┘
 *                                                  │ batch of independent ops
 *                                     executor (guarded) via transfer queue (p-queue, rate limits)
 *                                                  │ outcome
 *                                     reconciler: commit outcome in one transaction, plan again until quiescent
 */
import type { Logger } from 'pino';
import type { RelPath, RemoteId, RootId, SyncRoot } from '../core/model.js';
import type { Clock } from '../ports/clock.js';
import type { Journal } from '../ports/journal.js';
import type { LocalFs } from '../ports/local-fs.js';
import type { RemoteChanges, RemoteHint, StreamType } from '../ports/remote-changes.js';
import type { RemoteStore } from '../ports/remote-store.js';
import type { OperationKind } from '../core/operations.js';
import type { UnsyncedRecord } from '../ports/journal.js';
import type { ScopeRules } from './scope-change.js';
import type { Executor } from './executor.js';

export interface EngineOptions {
  /** Stream consumed for remote hints: the config's for sync --once; the daemon's may change it (Engine.useStream). */
  readonly streamType: StreamType;
  /** Concurrent transfers (default 4). */
  readonly transferConcurrency: number;
  /**
   * The daemon's: a file that only grew in place is uploaded as the prefix it held when opened (engine/executor.ts
   * growingUpload), since its watcher hints it again as it grows. Off for `sync --once`, whose one run must upload
   * a file's final content (a file that changes during its upload is read again in the same run).
   */
  readonly growingUploads?: boolean;
  /**
   * Mass-delete guard: stop (exit 3 / a held guard in the daemon) when a pass would trash more than this many
   * items AND more than `maxDeleteFraction` of the root. Default 100 and 0.5.
   */
  readonly maxDeletes: number;
  /** Selective sync: remove a deselected folder's local copy instead of moving it to the local trash (selective-free.ts). */
  readonly freeSpace?: boolean;
  readonly maxDeleteFraction: number;
  /**
   * A full pass over a root bigger than this many rows is planned in windows of about this size, so its memory
   * is bounded by the window, not the tree (windows.ts). Default DEFAULT_WINDOW_ENTRIES.
   */
  readonly windowEntries?: number;
  /**
   * A hinted pass defers a synced path it finds gone with no move in sight for this long, so the watcher can
   * report where it went (hinted-scope.ts); the caller hints it again after (takeUnsettled). 0 turns this off.
   * Default SETTLE_GONE_MS.
   */
  readonly settleGoneMs?: number;
  /**
   * `safety.rootMarker`: a file boxsync puts in each root when it first syncs it; once there, a root without it is
   * refused as missing (root-guard.ts). Default null (none).
   */
  readonly rootMarker?: string | null;
}

export interface EngineDeps {
  readonly journal: Journal;
  readonly remote: RemoteStore;
  readonly changes: RemoteChanges;
  readonly roots: readonly SyncRoot[];
  readonly localFsFor: (root: SyncRoot) => LocalFs;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly options: EngineOptions;
  /**
   * The ignore rules of a root (built-in defaults plus root.exclude, from src/local). Applied to the local scan
   * and to the remote tree alike, so an excluded remote folder is neither downloaded nor deleted. Required: the
   * engine keeps no ignore list of its own (one list, src/local/ignore.ts, for tests and production alike).
   */
  readonly isIgnoredFor: (root: SyncRoot) => (path: RelPath, isDir: boolean) => boolean;
  /**
   * What the ignore rules of a root are made of (a fingerprint of the exclude list and the `.boxsyncignore` lines)
   * and which of them excludes a path: a change of them is a change of scope (scope-change.ts). Optional: without
   * it only `root.exclude` counts.
   */
  readonly scopeRulesFor?: (root: SyncRoot) => ScopeRules;
  /**
   * Everything that decides which entries of a local listing isIgnoredFor(root) reports (local/ignore.ts
   * ignoreSalt), as one string that changes whenever any of it does. With it, a full scan skips the folders whose
   * listing is the one their journal rows were last found equal to (the listing marks: observe-local.ts); without
   * it (or undefined for a root), every folder is compared.
   */
  readonly listingSaltFor?: (root: SyncRoot) => string | undefined;
  /**
   * `selective.newFolders: "skip"`: leave a new top-level Box folder of `root` unselected (the matcher ignores it
   * from now on, the config records it); returns what to tell the user, once (selective.ts newTopFolders).
   */
  readonly skipNewFolder?: (root: SyncRoot, name: string) => Promise<string>;
  /** What carries out the plan's operations (default: the executor); `sync --dry-run` passes a recorder (dry-run.ts). */
  readonly executor?: Executor;
}

export type Phase = 'starting' | 'scanning' | 'listing' | 'planning' | 'transferring' | 'idle' | 'paused' | 'error';

export interface TransferStatus {
  readonly root: RootId;
  readonly path: RelPath;
  readonly direction: 'up' | 'down';
  readonly doneBytes: number;
  readonly totalBytes: number;
  readonly startedAtMs: number;
}

export interface RootStatus {
  readonly root: RootId;
  readonly localPath: string;
  readonly remoteId: RemoteId;
  readonly inSync: { readonly files: number; readonly folders: number; readonly bytes: number };
  readonly queued: { readonly ops: number; readonly bytes: number };
  readonly inFlight: readonly TransferStatus[];
  readonly rateBytesPerSec: number;
  readonly etaSec: number | null;
}

export interface ProblemStatus {
  readonly root: RootId;
  readonly path: RelPath;
  readonly code: string;
  readonly message: string;
  readonly nextRetryAtMs: number | null;
  /** Since when it has been failing (epoch ms; journal failures.first_failed_at_ms); null when recorded before boxsync kept it. */
  readonly sinceMs: number | null;
}

export interface HeldGuard {
  readonly id: string;
  readonly message: string;
  readonly deletes?: number;
  readonly firstPaths?: readonly string[];
}

export interface StatusReport {
  readonly phase: Phase;
  readonly roots: readonly RootStatus[];
  readonly conflicts: readonly { readonly root: RootId; readonly path: RelPath; readonly copy: RelPath; readonly atMs: number }[];
  readonly errors: readonly ProblemStatus[];
  /** Set while a safety guard holds the engine (e.g. a mass delete waiting for confirmation). */
  /** A safety guard holding the sync: its id (`confirm ID`), what it says and, for the mass-delete guard, how many
   *  items it would delete and the first of their paths (sorted). */
  readonly heldGuard: HeldGuard | null;
  readonly lastSuccessfulSyncAtMs: number | null;
  readonly fatal: { readonly code: string; readonly message: string } | null;
  /** Paths deliberately not synced (excluded after they were synced; their local copy stays), from the journal. */
  readonly unsynced?: readonly UnsyncedRecord[];
  /** Folders selected again (selective sync) still coming down: "downloading for selective sync". */
  readonly selecting?: readonly { readonly root: RootId; readonly path: string }[];
}

/** Totals of one run to quiescence (the one-line summary of `sync --once`). */
export interface RunSummary {
  readonly outcome: 'converged' | 'failed-items' | 'fatal' | 'guard';
  readonly ops: Readonly<Partial<Record<OperationKind, number>>>;
  readonly uploadedBytes: number;
  readonly downloadedBytes: number;
  readonly failedItems: number;
  /**
   * Items parked until they change ('skip' failures: a name Box refuses, an item Box sent malformed, no
   * permission...). Any parked item makes the outcome 'failed-items', on every run until it is fixed, so that
   * a cron job never reads "in sync" while files are not syncing.
   */
  readonly parkedItems: number;
  /**
   * The first items that failed or are parked (at most 50, failed first), for the end-of-run list. Paths and
   * messages are escaped.
   */
  readonly problems: readonly { readonly root: RootId; readonly path: string; readonly message: string; readonly parked: boolean }[];
  readonly conflicts: number;
  readonly passes: number;
  /** Planning windows of full passes over roots too big for one snapshot (0 when every root fitted). */
  readonly windows: number;
  readonly durationMs: number;
  readonly message: string;
  /** Why the run stopped short when no item caused it (an error of the run itself, a stop); absent otherwise. */
  readonly error?: string;
}

export interface EngineEvents {
  /** Fired on phase changes and transfer progress (throttled), for progress bars and the status socket. */
  onStatus?: (s: StatusReport) => void;
  /** One line per completed operation (for non-TTY logs): op kind, path, reason. */
  onOperation?: (o: { root: RootId; kind: OperationKind; path: RelPath; reason: string; ok: boolean; error?: string }) => void;
  /** Something the user is told once (a change of scope: a path now excluded, included again; names escaped). */
  /** `kind` names the notices a daemon also shows as a desktop notification ('new-folder-skipped'). */
  onNotice?: (n: { root: RootId | null; text: string; kind?: 'new-folder-skipped' }) => void;
  /**
   * A pass's plan for a root, as its operations start: how many, and the bytes its transfers move (the CLI's heap
   * policy: cli/run-heap.ts).
   */
  onPlanned?: (p: { root: RootId; ops: number; bytes: number }) => void;
  /** A safety guard that stops a root this run (its id names the root: guard-id.ts), once per guard raised. */
  onGuard?: (g: { id: string; message: string }) => void;
}

/** Engine.takeUnsettled: local paths per root, and remote ids, to hint again. Empty when `local` is. */
export interface Unsettled {
  readonly local: readonly { readonly root: RootId; readonly paths: readonly RelPath[] }[];
  readonly remoteIds: readonly RemoteId[];
}

export interface Engine {
  /**
   * Observe (first run: take the stream position BEFORE the full listing, then list + scan; later runs: fetch
   * remote changes since the stored cursor and rescan locally), then plan/execute/commit until quiescent.
   */
  /** `confirm`: guard ids the user confirmed for this run (`sync --once --confirm ID`, `--accept-new-root ROOT`). */
  runOnce(opts?: { signal?: AbortSignal; fullRescan?: boolean; confirm?: readonly string[] }): Promise<RunSummary>;
  /** Daemon entry points: feed hints, then the next `runOnce` handles only what they touched (cost grows with the change). */
  hintLocal(root: RootId, paths: readonly RelPath[]): void;
  hintRemote(ids: readonly RemoteId[]): void;
  /**
   * Are these events (read from the stream, not stored) only the echoes of this process's own committed writes, or
   * none of our roots' business? The daemon's long poll then wakes no pass for them (remote-hints.ts onlyOwnEchoes).
   */
  onlyOwnEchoes?(hints: readonly RemoteHint[]): boolean;
  /** Did this process write to Box lately, so that news may be only our own echoes (worth the look above)? */
  echoesLikely?(): boolean;
  /** Box said something changed (hintRemote with no ids) and no pass has read the stream since. */
  hasRemoteNews?(): boolean;
  /**
   * What hinted passes deferred because they found it gone with no move in sight (hinted-scope.ts), and that
   * the engine has not hinted again yet: for a caller that hints it again itself (local paths and the remote ids
   * those passes consumed) once the watcher has had time to report where it went. Taken, wake() no longer does.
   */
  takeUnsettled(): Unsettled;
  /** Hints fed (or given back by a pass that did not finish its work) that no pass has taken yet. */
  hasHints(): boolean;
  /**
   * When (clock time) the engine next wants a pass with no new hint: paths a pass deferred as settling are due
   * again, or a failed item's backoff elapses (scope/hint-ledger.ts). Null when nothing waits. A caller that
   * runs passes on its own (the daemon) sleeps until then, calls wake(), and runs a hinted pass.
   */
  nextWakeAtMs(): number | null;
  /** Turns what is due now (settled paths, items whose backoff elapsed) into hints for the next pass. */
  wake(): void;
  /**
   * The daemon's long poll settled on this stream (`sync`, or `changes` after a fallback), before the first
   * pass: passes catch up from it from now on, so one process reads one stream.
   */
  /**
   * `since`: a position the caller took on that stream before the first pass (the daemon's long poll starts there).
   * The first full listing stores it as the cursor when none is stored, instead of the position it takes itself, so
   * what changed on Box between the two (the daemon starting) is read as events, not left to the listing's order.
   */
  useStream(stream: StreamType, since?: string): void;
  status(): StatusReport;
  /** Makes the counts status() would take in one call ready in slices (StatusTracker.countsReady); optional. */
  statusReady?(): Promise<void>;
  pause(): void;
  resume(): void;
  /**
   * Hold one folder pair (true) or release it: passes skip a held pair (its local hints wait, nothing of it is
   * planned or transferred; a pass already running for it finishes); resuming one wants a full pass, as what Box
   * said about it meanwhile was read and not planned.
   */
  pauseRoot(root: RootId, paused: boolean): void;
  pausedRoots(): readonly RootId[];
  /** Release a held safety guard (the user confirmed). */
  confirmGuard(id: string): boolean;
  /** Finish or checkpoint in-flight transfers, then stop. */
  close(): Promise<void>;
}
