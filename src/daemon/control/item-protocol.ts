/**
 * The item commands (`boxsync info|share|unshare|lock|unlock|versions|restore-version|history`): their requests,
 * as the control socket carries them ({"verb":"item","request":{...}}), their results, and their errors with
 * the exit codes the CLI maps them to. One implementation (item-commands.ts) serves the daemon's socket and the
 * CLI's direct path alike.
 *
 * Exit codes (README "Box Drive from the shell"):
 *   0 ok; 1 Box refused or the operation failed (the message says why); 2 fatal (config, journal, state dir held
 *   by another `sync --once`, bad arguments); 4 the path is outside every sync root; 5 the path is not synced
 *   (yet); 6 the item is locked by another user; 7 Box refused the credentials (revoked or expired token: run
 *   `boxsync login`); 8 the daemon holds the state dir but does not answer on its control socket.
 */
import { z } from 'zod';
import type { RelPath, RootId } from '../../core/model.js';
import type { OperationRecord } from '../../ports/journal.js';
import type { PathState } from './path-state.js';

const path = z.string().min(1).max(8192);
const when = z.number().int().positive();

export const itemRequestSchema = z.discriminatedUnion('command', [
  z.strictObject({ command: z.literal('info'), path }),
  z.strictObject({
    command: z.literal('share'),
    path,
    access: z.enum(['open', 'company', 'collaborators']).optional(),
    password: z.string().min(1).max(1024).optional(),
    expiresAtMs: when.optional(),
    noDownload: z.boolean().optional(),
  }),
  z.strictObject({ command: z.literal('unshare'), path }),
  z.strictObject({ command: z.literal('lock'), path, preventDownload: z.boolean().optional(), expiresAtMs: when.optional() }),
  z.strictObject({ command: z.literal('unlock'), path }),
  z.strictObject({ command: z.literal('versions'), path }),
  z.strictObject({ command: z.literal('restore-version'), path, versionId: z.string().min(1).max(64) }),
  z.strictObject({ command: z.literal('conflicts'), path: path.optional() }),
  z.strictObject({ command: z.literal('conflicts-resolve'), path, keep: z.enum(['local', 'remote', 'both']) }),
  z.strictObject({ command: z.literal('trash-list'), path: path.optional() }),
  z.strictObject({
    command: z.literal('trash-restore'),
    /** An absolute path (where the item was), a Box id (digits, or box:ID), or a local-trash id (local:..., desktop:...). */
    target: z.string().min(1).max(8192),
    to: path.optional(),
    name: z.string().min(1).max(1024).optional(),
  }),
  z.strictObject({ command: z.literal('history'), path: path.optional(), sinceMs: z.number().int().nonnegative().optional(), limit: z.number().int().positive().max(100_000).optional() }),
  /** The Box subfolders of a folder of a pair, a page of them, with their selection states (the web page's tree). */
  z.strictObject({ command: z.literal('selective-tree'), path, offset: z.number().int().nonnegative().max(10_000_000).optional(), limit: z.number().int().positive().max(1000).optional() }),
]);

export type ItemRequest = z.output<typeof itemRequestSchema>;
export type ItemCommandName = ItemRequest['command'];

export type ItemErrorKind = 'failed' | 'fatal' | 'outside-root' | 'not-synced' | 'locked-by-other' | 'auth' | 'daemon-missing';

export const EXIT_CODE_OF: Readonly<Record<ItemErrorKind, number>> = {
  failed: 1,
  fatal: 2,
  'outside-root': 4,
  'not-synced': 5,
  'locked-by-other': 6,
  auth: 7,
  'daemon-missing': 8,
};

const KINDS = new Set(Object.keys(EXIT_CODE_OF));

export function isItemErrorKind(s: unknown): s is ItemErrorKind {
  return typeof s === 'string' && KINDS.has(s);
}

/** An item command that failed, with the kind that picks its exit code. The message is for the user, escaped. */
export class ItemCommandError extends Error {
  constructor(
    readonly kind: ItemErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'ItemCommandError';
  }
}

export interface LockView {
  /** True when the account boxsync uses holds the lock. */
  readonly ours: boolean;
  readonly byUserId: string | null;
  readonly expiresAtMs: number | null;
  readonly preventDownload: boolean;
}

export interface SharedLinkView {
  readonly url: string;
  readonly downloadUrl: string | null;
  readonly access: string | null;
  readonly passwordEnabled: boolean;
  readonly expiresAtMs: number | null;
}

export interface ItemInfoResult {
  readonly path: string;
  readonly root: RootId;
  readonly rootPath: string;
  readonly relPath: RelPath | '';
  readonly kind: 'file' | 'folder' | 'weblink';
  readonly boxId: string;
  readonly etag: string;
  readonly versionId: string | null;
  readonly sizeBytes: number;
  readonly sha1: string | null;
  readonly state: PathState;
  readonly stateDetail: string;
  readonly lock: LockView | null;
  readonly sharedLink: SharedLinkView | null;
  readonly webUrl: string;
  readonly lastOperation: OperationRecord | null;
}

export interface ShareResult {
  readonly path: string;
  readonly url: string;
  /** What was asked for: the link, or with --direct the direct-download URL. */
  readonly printed: string;
  readonly link: SharedLinkView;
}

export interface VersionView {
  readonly id: string;
  readonly current: boolean;
  readonly sizeBytes: number;
  readonly sha1: string | null;
  readonly modifiedAtMs: number | null;
  readonly by: string | null;
}

export interface VersionsResult {
  readonly path: string;
  readonly boxId: string;
  readonly versions: readonly VersionView[];
}

export interface MessageResult {
  readonly path: string;
  readonly message: string;
}

export interface HistoryEntry extends OperationRecord {
  /** The absolute local path. */
  readonly localPath: string;
}

export interface HistoryResult {
  readonly entries: readonly HistoryEntry[];
}

/** A folder's selection state (engine/selective.ts selectionState), or left out by an exclude rule of the config. */
export type SelectionStateView = 'synced' | 'not synced' | 'partly' | 'excluded';

export interface SelectiveFolderView {
  /** The folder's name on Box (unescaped: shown as text). */
  readonly name: string;
  /** Its local path (absolute; where it is or would be). */
  readonly path: string;
  readonly sizeBytes: number;
  readonly state: SelectionStateView;
}

export interface SelectiveTreeResult {
  /** The folder listed (absolute local path) and its own state. */
  readonly path: string;
  readonly state: SelectionStateView;
  /** Its subfolders on Box: this page of them, from `offset`, and how many there are in all. */
  readonly folders: readonly SelectiveFolderView[];
  readonly offset: number;
  readonly total: number;
}

export interface ConflictView {
  /** The conflict copy (the local version), absolute. */
  readonly copyPath: string;
  /** The name it conflicts with (the Box version took it), absolute. */
  readonly originalPath: string;
  /** When the copy was made (from its name). */
  readonly madeAtMs: number;
  readonly local: { readonly sizeBytes: number; readonly mtimeMs: number };
  /** The Box version at the original name, as last observed; null when nothing is there any more. */
  readonly remote: { readonly boxId: string; readonly sizeBytes: number; readonly modifiedAtMs: number } | null;
}

export interface ConflictsResult {
  readonly conflicts: readonly ConflictView[];
}

export interface TrashEntryView {
  /** 'box': the Box trash; 'local': boxsync's local trash (the state trash, or the desktop trash in freedesktop mode). */
  readonly source: 'box' | 'local';
  /** What `trash restore` takes: the Box id, or the local-trash id (local:..., desktop:...). */
  readonly id: string;
  /** Where it was, absolute. */
  readonly path: string;
  readonly kind: 'file' | 'folder' | 'weblink';
  readonly sizeBytes: number;
  readonly trashedAtMs: number | null;
}

export interface TrashListResult {
  readonly entries: readonly TrashEntryView[];
}
