/**
 * The control socket protocol: newline-delimited JSON over a unix stream socket (mode 0600 in a 0700 directory).
 *
 * A client writes one request object per line and reads one response line per request, in order:
 *   → {"verb":"status"}
 *   ← {"ok":true,"result":{...DaemonStatus}}
 *   → {"verb":"status-path","path":"/home/me/Box/report.pdf"}
 *   ← {"ok":true,"result":{...PathStatus}}
 *   → {"verb":"pause","path":"..."?} | {"verb":"resume","path":"..."?} (a path: the one folder pair holding it) | {"verb":"sync-now"} | {"verb":"confirm-guard","id":"..."} | {"verb":"retry","path":"..."?}
 *   ← {"ok":true,"result":{"message":"..."}}
 *   → {"verb":"sync-once","fullRescan":false?,"confirm":["mass-delete:..."]?}   (`sync --once` while the daemon runs: lifecycle/session.ts)
 *   ← {"ok":true,"result":{...SyncOnceResult}}   (once the pass that looked after every change made before it is over)
 *   → {"verb":"item","request":{"command":"info","path":"/home/me/Box/report.pdf"}}   (see item-protocol.ts)
 *   ← {"ok":true,"result":{...ItemInfoResult}}
 *   → {"verb":"selective","action":"exclude","path":"/home/me/Box/Archive","freeSpace":false}   (or "include"; selective-command.ts)
 *   ← {"ok":true,"result":{"message":"...","outcome":"applied"}}
 *   → {"verb":"bwlimit","rate":"500K"|"off"} | {"verb":"notifications","on":false}   (live, not persisted: lifecycle/live-controls.ts)
 *   ← {"ok":true,"result":{"message":"..."}}
 *   → {"verb":"ui-login"}   (`boxsync ui`: a one-time login link to the daemon's web page, src/daemon/ui/)
 *   ← {"ok":true,"result":{"url":"http://127.0.0.1:8385/login?t=..."}}
 * A malformed line, an unknown verb or a failed verb answers {"ok":false,"error":"<what happened; what next>"}
 * (item commands add "code": the ItemErrorKind that picks the CLI's exit code) and leaves the connection open. Nothing on this socket ever carries a Box
 * token (the web page's one-time login link is the only secret, and only the socket's owner can ask for it).
 */
import { z } from 'zod';
import type { RelPath, RootId } from '../../core/model.js';
import type { EngineEvents, RunSummary, StatusReport } from '../../engine/types.js';
import type { WatcherHealth } from '../../ports/local-watcher.js';
import type { StreamType } from '../../ports/remote-changes.js';
import { itemRequestSchema, type LockView } from './item-protocol.js';
import type { PathState } from './path-state.js';

export const controlRequestSchema = z.discriminatedUnion('verb', [
  z.strictObject({ verb: z.literal('status') }),
  z.strictObject({ verb: z.literal('status-path'), path: z.string().min(1) }),
  z.strictObject({ verb: z.literal('pause'), path: z.string().min(1).optional() }),
  z.strictObject({ verb: z.literal('resume'), path: z.string().min(1).optional() }),
  z.strictObject({ verb: z.literal('sync-now') }),
  z.strictObject({ verb: z.literal('sync-once'), fullRescan: z.boolean().optional(), confirm: z.array(z.string().min(1).max(400)).max(100).optional() }),
  z.strictObject({ verb: z.literal('confirm-guard'), id: z.string().min(1) }),
  z.strictObject({ verb: z.literal('retry'), path: z.string().min(1).optional() }),
  z.strictObject({ verb: z.literal('item'), request: itemRequestSchema }),
  z.strictObject({ verb: z.literal('selective'), action: z.enum(['exclude', 'include']), path: z.string().min(1), freeSpace: z.boolean().optional() }),
  z.strictObject({ verb: z.literal('ui-login') }),
  z.strictObject({ verb: z.literal('bwlimit'), rate: z.string().min(1).max(40) }),
  z.strictObject({ verb: z.literal('notifications'), on: z.boolean() }),
]);

export type ControlRequest = z.output<typeof controlRequestSchema>;

export type ControlResponse<T = unknown> =
  | { readonly ok: true; readonly result: T }
  | { readonly ok: false; readonly error: string; readonly code?: string };

/** How the daemon hears about remote changes right now. */
export interface RemoteStreamStatus {
  /** The stream configured; `effective` is what is consumed (after a fallback from 'sync' to 'changes'). */
  readonly configured: StreamType;
  readonly effective: StreamType;
  readonly state: 'starting' | 'listening' | 'reconnecting' | 'stopped';
  /** Why the effective stream differs from the configured one, or why the loop is reconnecting. */
  readonly note: string | null;
  readonly lastEventAtMs: number | null;
  readonly nextRetryAtMs: number | null;
}

export interface WatcherStatus {
  readonly root: RootId;
  readonly localPath: string;
  readonly kind: string;
  readonly health: WatcherHealth;
  readonly lastFallbackScanAtMs: number | null;
}

export interface ScheduleStatus {
  readonly name: string;
  readonly cron: string;
  readonly lastRunAtMs: number | null;
  readonly lastError: string | null;
  /** The job is under way (the journal's maintenance: its integrity check runs on a thread of its own). */
  readonly running?: boolean;
}

/** How long the daemon's event loop was blocked (measured by lifecycle/event-loop-watch.ts). */
export interface EventLoopStatus {
  /** The longest block since the daemon started, in ms. */
  readonly maxDelayMs: number;
  /** The longest block in the current window (about the last minute), in ms. */
  readonly recentMaxDelayMs: number;
  /** The 99th percentile of the delays since the daemon started, in ms. */
  readonly p99DelayMs: number;
}

/** The idle check of the journal for paths out of sync (lifecycle/convergence-watch.ts), read in slices. */
export interface IdleCheckStatus {
  /** A check is under way (between two of its slices, or paused while a pass runs). */
  readonly running: boolean;
  /** Slices the running check has read so far (0 when none runs). */
  readonly slices: number;
  /** Times the running check waited for a pass asked for meanwhile (a live change goes first). */
  readonly pauses: number;
  /** Checks finished since the daemon started. */
  readonly done: number;
}

export interface DaemonStatus {
  readonly pid: number;
  readonly startedAtMs: number;
  readonly configFile: string;
  /** True while SIGTERM/SIGINT handling is checkpointing transfers. */
  readonly stopping: boolean;
  readonly engine: StatusReport;
  /** Engine passes started since the daemon (or the last SIGHUP reload) started: bursts are batched into few. */
  readonly passes: number;
  readonly watchers: readonly WatcherStatus[];
  readonly remoteStream: RemoteStreamStatus;
  readonly schedules: readonly ScheduleStatus[];
  /** Human sentences worth showing first (fallbacks, degraded watchers, held guards). */
  readonly notices: readonly string[];
  /** How long the event loop was blocked (nothing else answers meanwhile, `status` included). */
  readonly eventLoop: EventLoopStatus;
  /** The idle check of the journal (absent before the daemon's parts are up). */
  readonly idleCheck?: IdleCheckStatus;
  /** The settings changed live by the `bwlimit` and `notifications` verbs. */
  readonly controls: LiveControlsStatus;
}

export interface LiveControlsStatus {
  /** The folder pairs paused on their own (`boxsync pause PATH`), by their local path. */
  readonly pausedPairs: readonly string[];
  /** The transfer cap for uploads and downloads together, or null for none. */
  readonly bandwidthBytesPerSec: number | null;
  /** `on`: the user wants them; `available`: a desktop session and notify-send exist, so they can be shown. */
  readonly notifications: { readonly on: boolean; readonly available: boolean };
}

export type { PathState };

export interface PathStatus {
  readonly path: string;
  readonly root: RootId | null;
  readonly relPath: RelPath | null;
  readonly state: PathState;
  /** A sentence: why the path is in that state. */
  readonly detail: string;
  readonly lastOperation: {
    readonly kind: string;
    readonly reason: string;
    readonly ok: boolean;
    readonly error: string | null;
    readonly atMs: number;
  } | null;
  readonly failure: { readonly code: string; readonly message: string; readonly attempts: number; readonly nextRetryAtMs: number } | null;
  /** The Box lock of a synced file, asked from Box when the daemon answers (absent when it could not ask). */
  readonly lock?: LockView | null;
}

export interface UiLoginResult {
  /** Opens the page once (the login token in it works once, for two minutes). */
  readonly url: string;
}

export interface VerbResult {
  readonly message: string;
}

/**
 * The `selective` verb's answer: `applied` (the daemon runs with the new selection: the folder was freed, or its
 * download started), `unchanged` (nothing to do), `held` (exclude refused: files there have content Box lacks),
 * `kept` (not selected, but the local copy stays; the message says why), `pending` (applied, but the daemon's
 * first pass with it had not got that far within the bound).
 */
export interface SelectiveResult extends VerbResult {
  readonly outcome: 'applied' | 'unchanged' | 'held' | 'kept' | 'pending';
}

/** One operation of the pass a `sync-once` waited for, as `sync --once` prints it (engine onOperation). */
export type PassOperation = Parameters<NonNullable<EngineEvents['onOperation']>>[0];

/**
 * The `sync-once` verb's answer: what the daemon did while the request waited (the pass under way when it came, then
 * the pass with every change made before it), and what it did instead of what was asked.
 */
export interface SyncOnceResult {
  /** Those passes together (lifecycle/session.ts passesTogether): what moved adds up, the outcome is the last one's. */
  readonly summary: RunSummary;
  /** Their operations, in order; at most SYNC_ONCE_OPERATIONS_KEPT, the rest counted in `operationsLeftOut`. */
  readonly operations: readonly PassOperation[];
  readonly operationsLeftOut: number;
  /** Sentences for the user: a folder scanned in full because its watcher could not confirm it reported everything. */
  readonly notes: readonly string[];
}

export const SYNC_ONCE_OPERATIONS_KEPT = 2_000;
