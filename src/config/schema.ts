/**
 * The configuration schema, in one place. Every key is documented in config/README.md (a test checks that each
 * key below appears there) and shown in config/config.example.json.
 *
 * This is the *file* shape: objects are strict (an unknown key is an error, so a typo never silently falls back
 * to a default), and defaults that do not depend on the environment are filled in here. Defaults that do
 * (stateDir, socketPath, auth.tokenFile) and checks across keys (overlapping roots) live in resolve.ts.
 *
 * Paths must be absolute; a leading `~/` is expanded to $HOME. Relative paths are refused because a daemon's
 * working directory is not the user's.
 */
import { isAbsolute } from 'node:path';
import { validate as isValidCron } from 'node-cron';
import { z } from 'zod';

export const DEFAULT_REMOTE = {
  apiUrl: 'https://api.box.com/2.0',
  uploadUrl: 'https://upload.box.com/api/2.0',
  tokenUrl: 'https://api.box.com/oauth2/token',
  authorizeUrl: 'https://account.box.com/api/oauth2/authorize',
} as const;

export const DEFAULT_SCHEDULES = {
  fullRescan: '0 3 * * *',
  uploadSessionCleanup: '17 * * * *',
  localTrashPurge: '30 4 * * *',
} as const;

/** Schedules only the daemon runs (the shared ones are in DEFAULT_SCHEDULES). */
export const DEFAULT_DAEMON_ONLY_SCHEDULES = {
  journalMaintenance: '45 4 * * *',
  tokenRefresh: '*/30 * * * *',
} as const;

/**
 * Upper bound of `daemon.shutdownTimeoutSec`. By default a stop takes at most 4 s plus one for closing (SIGTERM
 * ends the daemon within 5 s in every state: transfers in flight are checkpointed, never waited for long); a
 * user who prefers transfers to finish may raise it, below the unit's TimeoutStopSec (the bound plus a margin).
 */
export const MAX_SHUTDOWN_TIMEOUT_SEC = 600;
export const DEFAULT_SHUTDOWN_TIMEOUT_SEC = 4;

const pathString = z
  .string()
  .min(1, 'expected an absolute path, got an empty string')
  .refine((p) => isAbsolute(p) || p === '~' || p.startsWith('~/'), 'expected an absolute path (or one starting with ~/)');

const httpUrl = z
  .string()
  .refine((s) => URL.canParse(s) && /^https?:$/.test(new URL(s).protocol), 'expected an http:// or https:// URL')
  .transform((s) => s.replace(/\/+$/, ''));

const cron = z.string().refine((s) => isValidCron(s), 'expected a cron expression like "0 3 * * *"');

const remoteSchema = z
  .strictObject({
    apiUrl: httpUrl.default(DEFAULT_REMOTE.apiUrl),
    uploadUrl: httpUrl.default(DEFAULT_REMOTE.uploadUrl),
    tokenUrl: httpUrl.default(DEFAULT_REMOTE.tokenUrl),
    authorizeUrl: httpUrl.default(DEFAULT_REMOTE.authorizeUrl),
  })
  .prefault({});

export const developerTokenAuthSchema = z.strictObject({
  developerToken: z.string().min(1, 'expected a non-empty token'),
});

export const oauthAuthSchema = z.strictObject({
  clientId: z.string().min(1, 'expected the OAuth client id'),
  clientSecret: z.string().min(1, 'expected the OAuth client secret'),
  tokenFile: pathString.optional(),
});

const boxFolderId = z.string().regex(/^\d+$/, 'expected a Box folder id (digits, "0" for the whole account)');

const folderSchema = z.strictObject({
  remoteId: boxFolderId,
  localPath: pathString,
  exclude: z.array(z.string().min(1, 'expected a gitignore pattern, got an empty string')).default([]),
  direction: z.enum(['two-way', 'download-only', 'upload-only']).default('two-way'),
  // Selective sync: Box subfolders of this pair that are not kept on this disk, as paths relative to
  // the pair ("Archive/2019"); `boxsync selective exclude|include` edit this list.
  selective: z
    .strictObject({
      unselected: z.array(z.string().min(1, 'expected a folder path relative to the folder pair, got an empty string')).default([]),
      // A new folder appearing at the top of the pair on Box: synced (the default), or left unselected (added to
      // `unselected`, the user told once).
      newFolders: z.enum(['sync', 'skip']).default('sync'),
    })
    .prefault({}),
});

/**
 * The daemon's own settings (`boxsync daemon` only; `sync --once` ignores them). Each field is also exported so
 * that the environment overrides (BOXSYNC_DAEMON_STREAM, ...) are checked by the very same rules.
 */
export const daemonFields = {
  streamType: z.enum(['sync', 'changes', 'all']),
  watcher: z.enum(['inotify', 'dirs', 'chokidar']),
  maxWatches: z.int().positive().nullable(),
  fallbackScanSec: z.int().min(1).max(86_400),
  shutdownTimeoutSec: z.int().min(1).max(MAX_SHUTDOWN_TIMEOUT_SEC),
  syncCheckSec: z.int().min(1).max(600),
  uploadGrowingEverySec: z.int().min(1).max(86_400),
  notifications: z.boolean(),
  uiEnabled: z.boolean(),
  /** The local web page's loopback port (src/daemon/ui/); 0 = a free port, written to the state dir's ui-port file. */
  uiPort: z.int().min(0).max(65_535),
} as const;

/** `daemon.ui.port` by default: near Syncthing's 8384, not taken by anything common. */
export const DEFAULT_UI_PORT = 8385;

const daemonSchema = z
  .strictObject({
    streamType: daemonFields.streamType.default('sync'),
    watcher: daemonFields.watcher.default('inotify'),
    maxWatches: daemonFields.maxWatches.default(null),
    fallbackScanSec: daemonFields.fallbackScanSec.default(60),
    shutdownTimeoutSec: daemonFields.shutdownTimeoutSec.default(DEFAULT_SHUTDOWN_TIMEOUT_SEC),
    syncCheckSec: daemonFields.syncCheckSec.default(5),
    uploadGrowingEverySec: daemonFields.uploadGrowingEverySec.default(60),
    notifications: daemonFields.notifications.default(true),
    ui: z
      .strictObject({
        enabled: daemonFields.uiEnabled.default(true),
        port: daemonFields.uiPort.default(DEFAULT_UI_PORT),
      })
      .prefault({}),
    schedules: z
      .strictObject({
        journalMaintenance: cron.default(DEFAULT_DAEMON_ONLY_SCHEDULES.journalMaintenance),
        tokenRefresh: cron.default(DEFAULT_DAEMON_ONLY_SCHEDULES.tokenRefresh),
      })
      .prefault({}),
  })
  .prefault({});

export const rawConfigSchema = z.strictObject({
  remote: remoteSchema,
  /** Validated by shape in resolve.ts (developer token or OAuth), so that errors name the right keys. */
  auth: z.record(z.string(), z.unknown(), 'expected an object: {"developerToken": ...} or {"clientId", "clientSecret", "tokenFile"}'),
  folders: z.array(folderSchema).min(1, 'expected at least one {"remoteId", "localPath"} pair'),
  stateDir: pathString.optional(),
  socketPath: pathString.optional(),
  streamType: z.enum(['changes', 'sync', 'all']).default('changes'),
  schedules: z
    .strictObject({
      fullRescan: cron.default(DEFAULT_SCHEDULES.fullRescan),
      uploadSessionCleanup: cron.default(DEFAULT_SCHEDULES.uploadSessionCleanup),
      localTrashPurge: cron.default(DEFAULT_SCHEDULES.localTrashPurge),
    })
    .prefault({}),
  rateLimit: z
    .strictObject({
      /** A ceiling on API calls per minute; none by default (the adaptive pacer follows Box's 429s). */
      apiCallsPerMinute: z.int().positive().optional(),
      /** A ceiling on upload requests per minute; none by default. */
      uploadsPerMinute: z.int().positive().optional(),
    })
    .prefault({}),
  /** Bounds on waiting for Box (docs/reliability.md): every wait ends. */
  http: z
    .strictObject({
      /** The longest Retry-After boxsync sits through; a longer one ends the request with a clear error. */
      maxRetryAfterSec: z.int().min(1).max(86_400).default(300),
      /** A request that receives no byte for this long is aborted and retried. */
      stallTimeoutSec: z.int().min(1).max(3600).default(60),
      /** A folder listing that takes longer than this ends as incomplete (nothing in it is deleted). */
      listingDeadlineSec: z.int().min(1).max(86_400).default(900),
      /** A download gets this long, plus its size at `downloadMinRateKiBps`; a slower one is stopped and retried later. */
      downloadDeadlineSec: z.int().min(1).max(86_400).default(300),
      /** The slowest rate a download is allowed beyond `downloadDeadlineSec`, in KiB/s. */
      downloadMinRateKiBps: z.int().min(1).max(1_000_000).default(64),
      /** Cap on the total transfer rate (uploads and downloads together), KiB/s; null: none. `--bwlimit` overrides it. */
      bwlimitKiBps: z.int().min(1).nullable().default(null),
      /**
       * Download many small files of a plan as Box zip archives (two API calls for up to 10,000 files) once at
       * least this many files of at most 1 MiB are to be downloaded; 0 turns zip downloads off.
       */
      zipMinFiles: z.int().min(0).max(10_000).default(40),
      /**
       * Worker threads that write download temp files (create, write, fsync, close) off the main thread
       * (src/local/file-workers.ts): "auto" sizes the pool to the machine (os.availableParallelism() - 1, at least
       * one), 0 turns them off.
       */
      fileWorkers: z.union([z.literal('auto'), z.int().min(0).max(64)]).default('auto'),
      /**
       * A pass that plans fewer downloads than this, of at most 10 MiB in all, writes them on the main thread
       * without starting the worker threads (a thread's start costs a small run more than it saves); 0: every pass
       * that downloads starts them.
       */
      fileWorkersMinFiles: z.int().min(0).max(1_000_000).default(100),
    })
    .prefault({}),
  transferConcurrency: z.int().min(1).max(32).default(4),
  /** Rows a full pass plans at a time (bigger roots are planned in windows of about this size). */
  planWindowEntries: z.int().min(1).max(10_000_000).default(300),
  safety: z
    .strictObject({
      maxDeletes: z.int().min(0).default(100),
      maxDeleteFraction: z.number().min(0).max(1).default(0.5),
      /**
       * A file boxsync puts in each root when it first syncs it (like abraunegg/onedrive's check_nomount): once
       * there, a root without it is refused as missing (a disk not mounted). Never synced. null: none.
       */
      rootMarker: z
        .string()
        .regex(/^(?!\.{1,2}$)[^/\0]{1,255}$/, 'a plain file name (no "/"), like ".boxsync-root"')
        .refine((n) => !n.startsWith('.boxsync-tmp-'), 'not a name boxsync uses for its temp files')
        .nullable()
        .default(null),
    })
    .prefault({}),
  localTrash: z
    .strictObject({
      mode: z.enum(['state', 'freedesktop']).default('state'),
      retentionDays: z.int().min(0).default(30),
    })
    .prefault({}),
  log: z
    .strictObject({
      level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    })
    .prefault({}),
  daemon: daemonSchema,
});

export type RawConfig = z.output<typeof rawConfigSchema>;
