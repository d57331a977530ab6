/**
 * Validation of Box's answers at the boundary (zod), for exactly the fields boxsync reads. Box is untrusted
 * input: a malformed item must become a clear, per-item error, never a crash deeper in (SQLite binding, string
 * methods on non-strings), and a hostile name must never become a path.
 *
 * The shapes follow Box's API reference, https://developer.box.com/reference/ (File/Folder/WebLink mini and
 * full, Items, Events, User):
 * - ids are strings of digits in Box (`"0"` is the root); JSON numbers are accepted when they are safe integers
 *   (json.ts keeps bigger integers as decimal strings, so nothing is rounded);
 * - `etag`, `sequence_id`: string, or null where the spec says nullable (the root folder);
 * - `size`: an integer number of bytes, 0 ≤ size < 2^53 (the spec's int64; beyond 2^53 it cannot be held exactly);
 * - `sha1`: 40 hex digits (files), empty or null when unknown;
 * - `parent`: a Folder mini object or null; `file_version`: a FileVersion mini or null;
 * - `name`: a string Box itself would accept (core/names.checkBoxName) and that a Linux filesystem can hold
 *   (at most 255 bytes in UTF-8). Anything else would be a path, not a name (`..`, `docs/x`, `/abs`).
 *
 * `checkItem` never throws: it returns the decoded entry or the first problem, with the field that caused it.
 */
import { z } from 'zod';
import { checkBoxName } from '../../core/names.js';
import { escapeText } from '../../core/escape.js';
import { asRemoteId, type RemoteEntry, type RemoteKind } from '../../core/model.js';
import { decodeTime, kindOfWire } from './wire-fields.js';
import { remoteError } from './error-codes.js';
import type { SyncError } from '../../core/errors.js';

/** Bytes a Linux file name may take (NAME_MAX). */
export const MAX_NAME_BYTES = 255;

const idSchema = z.union([
  z.string().regex(/^[0-9A-Za-z_-]{1,64}$/, 'an id must be 1-64 letters, digits, "_" or "-"'),
  z.number().refine((n) => Number.isSafeInteger(n) && n >= 0, 'a numeric id must be a whole number below 2^53'),
]);

const tokenish = z.union([z.string().max(256), z.number().refine(Number.isFinite)]).nullish();

const sizeSchema = z
  .union([
    z.number(),
    z.string().regex(/^[0-9]{1,20}(\.[0-9]+)?([eE][+-]?[0-9]{1,3})?$/, 'size must be a number of bytes').transform(Number),
  ])
  .refine((n) => Number.isSafeInteger(n) && n >= 0, 'size must be a whole number of bytes between 0 and 2^53')
  .nullish();

const sha1Schema = z.union([z.string().regex(/^([0-9a-fA-F]{40})?$/, 'sha1 must be 40 hexadecimal digits'), z.null()]).optional();

const miniSchema = z.object({ id: idSchema }).loose();

export const itemSchema = z
  .object({
    type: z.string().max(64),
    id: idSchema,
    etag: tokenish,
    sequence_id: tokenish,
    name: z.string().max(4096).optional(),
    sha1: sha1Schema,
    size: sizeSchema,
    modified_at: z.string().max(64).nullish(),
    content_modified_at: z.string().max(64).nullish(),
    parent: z.union([miniSchema, z.null()]).optional(),
    file_version: z.union([z.object({ id: idSchema, sha1: sha1Schema }).loose(), z.null()]).optional(),
    item_status: z.string().max(32).nullish(),
    url: z.string().max(8192).nullish(),
  })
  .loose();

type WireItem = z.infer<typeof itemSchema>;

const ID_TEXT = /^[0-9A-Za-z_-]{1,64}$/;
const SHA1_TEXT = /^([0-9a-fA-F]{40})?$/;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isId = (v: unknown): boolean => (typeof v === 'string' ? ID_TEXT.test(v) : typeof v === 'number' && Number.isSafeInteger(v) && v >= 0);
const isText = (v: unknown, max: number): boolean => v === undefined || v === null || (typeof v === 'string' && v.length <= max);
const isSha1 = (v: unknown): boolean => v === undefined || v === null || (typeof v === 'string' && SHA1_TEXT.test(v));

/**
 * The item as itemSchema would give it, for the items that need none of its transforms (all of Box's ordinary
 * answers), without its per-field work; undefined for anything else, which itemSchema then decides (with its
 * message). Each test accepts only what the schema's field accepts unchanged (test/remote/box/schemas.test.ts
 * checks the two against each other on random items).
 */
export function plainItem(raw: unknown): WireItem | undefined {
  if (!isObject(raw)) return undefined;
  const { type, id, etag, sequence_id: seq, name, sha1, size, parent, file_version: version } = raw;
  if (typeof type !== 'string' || type.length > 64 || !isId(id)) return undefined;
  if (!((etag === undefined || etag === null || (typeof etag === 'string' ? etag.length <= 256 : typeof etag === 'number' && Number.isFinite(etag))) && (seq === undefined || seq === null || (typeof seq === 'string' ? seq.length <= 256 : typeof seq === 'number' && Number.isFinite(seq))))) return undefined;
  if ((name !== undefined && (typeof name !== 'string' || name.length > 4096)) || (sha1 !== undefined && !isSha1(sha1))) return undefined;
  if (!(size === undefined || size === null || (typeof size === 'number' && Number.isSafeInteger(size) && size >= 0))) return undefined;
  if (!isText(raw.modified_at, 64) || !isText(raw.content_modified_at, 64) || !isText(raw.item_status, 32) || !isText(raw.url, 8192)) return undefined;
  if (parent !== undefined && parent !== null && !(isObject(parent) && isId(parent.id))) return undefined;
  if (version !== undefined && version !== null && !(isObject(version) && isId(version.id) && (version.sha1 === undefined || isSha1(version.sha1)))) return undefined;
  return raw as WireItem;
}

export type CheckedItem =
  | { readonly ok: true; readonly entry: RemoteEntry }
  /** `unknownType`: an item of a type boxsync does not sync (not an error: skipped silently). */
  | { readonly ok: false; readonly unknownType: true }
  | {
      readonly ok: false;
      readonly unknownType: false;
      readonly id: string | null;
      readonly name: string | null;
      readonly kind: RemoteKind | null;
      readonly field: string;
      readonly reason: string;
    };

/** The first problem of a local-filesystem or Box kind with a name, or null when it is fine. */
export function nameProblem(name: string): string | null {
  const box = checkBoxName(name);
  if (!box.ok) return box.message.replace(/; rename it to sync it$/, '');
  if (Buffer.byteLength(name, 'utf8') > MAX_NAME_BYTES) return `the name is longer than ${MAX_NAME_BYTES} bytes, which a Linux file system cannot hold`;
  return null;
}

function pathOf(issue: z.core.$ZodIssue): string {
  return issue.path.length === 0 ? '(item)' : issue.path.map(String).join('.');
}

/**
 * Validate and decode one item. `requireName` is true for listings and item reads (everything that becomes a
 * row of the remote tree); `listedIn` is the folder whose listing held it (its parent when `parent` is omitted).
 */
export function checkItem(raw: unknown, opts: { requireName: boolean; listedIn?: string }): CheckedItem {
  // What a problem names is read from the raw item only when there is one (most items have none).
  const bad = (field: string, reason: string): CheckedItem => {
    const rawObj = raw !== null && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : null;
    const rawId = rawObj && (typeof rawObj.id === 'string' || typeof rawObj.id === 'number') ? String(rawObj.id) : null;
    return {
      ok: false,
      unknownType: false,
      id: rawId !== null && /^[0-9A-Za-z_-]{1,64}$/.test(rawId) ? rawId : null,
      name: rawObj && typeof rawObj.name === 'string' ? escapeText(rawObj.name) : null,
      kind: rawObj && typeof rawObj.type === 'string' ? kindOfWire(rawObj.type) : null,
      field,
      reason,
    };
  };
  let w = plainItem(raw);
  if (w === undefined) {
    const parsed = itemSchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      return bad(pathOf(issue), issue.message);
    }
    w = parsed.data;
  }
  const kind = kindOfWire(w.type);
  if (kind === null) return { ok: false, unknownType: true };
  const id = String(w.id);
  if (opts.requireName || w.name !== undefined) {
    if (w.name === undefined) return bad('name', 'the item has no name');
    const problem = nameProblem(w.name);
    if (problem !== null) return bad('name', problem);
  }
  let parentId = w.parent ? String(w.parent.id) : null;
  if (opts.listedIn !== undefined) {
    if (parentId !== null && parentId !== opts.listedIn) return bad('parent.id', `the item names folder ${parentId} as its parent, not the folder being listed`);
    if (id === opts.listedIn) return bad('id', 'the folder lists itself as its own child');
    parentId = opts.listedIn;
  }
  if (parentId !== null && parentId === id) return bad('parent.id', 'the item is its own parent');
  const sha1 = kind === 'file' ? (w.sha1 || w.file_version?.sha1 || null)?.toLowerCase() ?? null : null;
  return {
    ok: true,
    entry: {
      id: asRemoteId(id),
      kind,
      parentId: parentId === null ? null : asRemoteId(parentId),
      name: w.name ?? '',
      etag: w.etag === null || w.etag === undefined ? '' : String(w.etag),
      sequenceId: w.sequence_id === null || w.sequence_id === undefined ? '' : String(w.sequence_id),
      sha1,
      sizeBytes: (w.size as number | null | undefined) ?? 0,
      modifiedAtMs: decodeTime(w.content_modified_at) ?? decodeTime(w.modified_at) ?? 0,
      versionId: kind === 'file' && w.file_version ? String(w.file_version.id) : null,
      url: kind === 'weblink' ? (w.url ?? null) : null,
      status: w.item_status === 'trashed' || w.item_status === 'deleted' ? w.item_status : 'active',
    },
  };
}

/**
 * Decode an item from an answer about one item (a read, an upload, a move): a malformed answer is a
 * `malformed_response` error for that operation (retried with backoff), never a partly decoded entry.
 */
export function decodeItemStrict(raw: unknown, endpoint: string, opts: { requireName?: boolean } = {}): RemoteEntry {
  const c = checkItem(raw, { requireName: opts.requireName ?? true });
  if (c.ok) return c.entry;
  if (c.unknownType) {
    const t = raw !== null && typeof raw === 'object' ? String((raw as { type?: unknown }).type) : typeof raw;
    throw malformed(endpoint, 'type', `the answer is a ${t}, not a file, folder or web link`);
  }
  // What the engine needs to park the item by its Box id: its escaped name and the parent Box named.
  const parent = raw !== null && typeof raw === 'object' ? (raw as { parent?: { id?: unknown } | null }).parent : undefined;
  const parentId = parent && (typeof parent.id === 'string' || typeof parent.id === 'number') && /^[0-9A-Za-z_-]{1,64}$/.test(String(parent.id)) ? String(parent.id) : null;
  throw malformed(endpoint, c.field, c.reason, { itemId: c.id, itemName: c.name, itemKind: c.kind, parentId });
}

export function malformed(endpoint: string, field: string, reason: string, item: Record<string, string | null> = {}): SyncError {
  return remoteError('malformed_response', `Box answered ${endpoint} with a malformed \`${field}\` (${escapeText(reason)})`, {
    details: { endpoint, field, ...item },
  });
}

/** A page of a folder listing: only its frame. Entries are checked one by one (checkItem). */
export const itemsPageSchema = z
  .object({
    entries: z.array(z.unknown()).max(100_000),
    next_marker: z.union([z.string().max(4096), z.null()]).optional(),
    total_count: z.number().refine((n) => Number.isSafeInteger(n) && n >= 0, 'total_count must be a whole number').optional(),
    offset: z.number().refine((n) => Number.isSafeInteger(n) && n >= 0, 'offset must be a whole number').optional(),
    limit: z.number().optional(),
  })
  .loose();

/** A stream position: a decimal integer (json.ts keeps the big ones as strings) or `now`. */
const positionSchema = z.union([
  z.string().regex(/^[0-9]{1,40}$/, 'next_stream_position must be a decimal number'),
  z.number().refine((n) => Number.isSafeInteger(n) && n >= 0, 'next_stream_position must be a whole number'),
]);

export const eventsPageSchema = z
  .object({
    chunk_size: z.number().refine((n) => Number.isSafeInteger(n) && n >= 0, 'chunk_size must be a whole number').optional(),
    next_stream_position: positionSchema,
    entries: z.array(z.unknown()).max(100_000),
  })
  .loose();

export const eventSchema = z
  .object({
    event_id: z.string().max(256).optional(),
    event_type: z.string().max(128).optional(),
    source: z.unknown().optional(),
  })
  .loose();

export const userSchema = z
  .object({
    id: idSchema,
    login: z.string().max(1024).optional(),
    name: z.string().max(1024).optional(),
    space_amount: z.union([z.number(), z.string().max(32)]).nullish(),
    space_used: z.union([z.number(), z.string().max(32)]).nullish(),
    max_upload_size: z.union([z.number(), z.string().max(32)]).nullish(),
  })
  .loose();

/** Validate a frame; a failure is a `malformed_response` naming the endpoint and the field. */
export function parseFrame<T>(schema: z.ZodType<T>, raw: unknown, endpoint: string): T {
  const r = schema.safeParse(raw);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  throw malformed(endpoint, pathOf(issue), issue.message);
}

const wholeNumber = (what: string, max = Number.MAX_SAFE_INTEGER) =>
  z.number().refine((n) => Number.isSafeInteger(n) && n >= 0 && n <= max, `${what} must be a whole number between 0 and ${max}`);

/** An upload session as created (POST .../upload_sessions): what the client persists in the journal. */
export const uploadSessionSchema = z
  .object({
    id: idSchema,
    part_size: wholeNumber('part_size', 1024 * 1024 * 1024).refine((n) => n > 0, 'part_size must be positive'),
    total_parts: wholeNumber('total_parts', 100_000).refine((n) => n > 0, 'total_parts must be positive'),
    session_expires_at: z.string().max(64).optional(),
    session_endpoints: z.record(z.string().max(64), z.string().max(8192)).optional(),
  })
  .loose();

/** One part the server confirmed. */
export const partSchema = z
  .object({
    part_id: z.string().min(1).max(128),
    offset: wholeNumber('offset'),
    size: wholeNumber('size'),
    sha1: z.string().max(128),
  })
  .loose();

export const partsPageSchema = z
  .object({
    entries: z.array(partSchema).max(100_000).optional(),
    total_count: wholeNumber('total_count').optional(),
  })
  .loose();

const timeText = z.string().max(64).nullish();

/** A file lock (`fields=lock`). */
export const lockSchema = z
  .object({
    id: idSchema.optional(),
    created_at: timeText,
    expired_at: timeText,
    expires_at: timeText,
    is_download_prevented: z.boolean().nullish(),
    created_by: z.object({ id: idSchema.optional() }).loose().nullish(),
  })
  .loose();

/** A shared link (`fields=shared_link`): the URLs must be http(s) URLs, they are printed and opened. */
export const sharedLinkSchema = z
  .object({
    url: z.string().max(8192).regex(/^https?:\/\//, 'url must be an http(s) URL'),
    download_url: z.string().max(8192).regex(/^https?:\/\//, 'download_url must be an http(s) URL').nullish(),
    access: z.string().max(64).nullish(),
    effective_access: z.string().max(64).nullish(),
    is_password_enabled: z.boolean().nullish(),
    unshared_at: timeText,
  })
  .loose();

/** A file version (GET /files/{id}/versions, promote). */
export const versionSchema = z
  .object({
    id: idSchema,
    sha1: sha1Schema,
    name: z.string().max(4096).optional(),
    size: sizeSchema,
    created_at: timeText,
    modified_at: timeText,
    trashed_at: timeText,
    modified_by: z.object({ id: idSchema.optional(), name: z.string().max(1024).nullish(), login: z.string().max(1024).nullish() }).loose().nullish(),
  })
  .loose();

export const versionsPageSchema = z
  .object({
    entries: z.array(versionSchema).max(100_000).optional(),
    total_count: z.number().refine((n) => Number.isSafeInteger(n) && n >= 0, 'total_count must be a whole number').optional(),
  })
  .loose();

/** The ancestors of an item (`fields=path_collection`). */
export const pathCollectionSchema = z.object({ entries: z.array(z.object({ id: idSchema, name: z.string().max(4096).optional() }).loose()).max(10_000).optional() }).loose();

/** One entry of `GET /folders/trash/items` (items trashed themselves): what `boxsync trash list` needs. */
export const trashEntrySchema = z
  .object({
    type: z.enum(['file', 'folder', 'web_link']),
    id: idSchema,
    name: z.string().max(4096).optional(),
    parent: z.object({ id: idSchema }).loose().nullish(),
    trashed_at: timeText,
    size: sizeSchema,
  })
  .loose();

export const trashPageSchema = z
  .object({
    entries: z.array(trashEntrySchema).max(100_000).optional(),
    total_count: z.number().refine((n) => Number.isSafeInteger(n) && n >= 0, 'total_count must be a whole number').optional(),
  })
  .loose();
