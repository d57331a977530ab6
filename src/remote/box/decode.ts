/**
 * Box JSON -> core/model, at the edge. Defensive on purpose: ids and sequence ids become strings whatever
 * their JSON type, `size` tolerates exponent notation and strings, `content_modified_at` falls back to
 * `modified_at`, web links become kind 'weblink' with their target URL.
 */
import { asRemoteId, type RemoteEntry, type RemoteKind } from '../../core/model.js';
import type { WireId, WireItem } from './wire-types.js';
import { decodeItemStrict } from './schemas.js';

export { decodeTime, kindOfWire } from './wire-fields.js';

export const ITEM_FIELDS = [
  'type',
  'id',
  'etag',
  'sequence_id',
  'name',
  'sha1',
  'size',
  'modified_at',
  'content_modified_at',
  'parent',
  'file_version',
  'item_status',
  'url',
] as const;

export const ITEM_FIELDS_PARAM = ITEM_FIELDS.join(',');

export function idString(id: WireId | null | undefined): string {
  if (id === null || id === undefined) throw new Error('Box item without an id');
  return String(id);
}

export function wireType(kind: RemoteKind): 'file' | 'folder' | 'web_link' {
  switch (kind) {
    case 'file':
      return 'file';
    case 'folder':
      return 'folder';
    case 'weblink':
      return 'web_link';
  }
}

/** Plural URL segment for an item kind: /files, /folders, /web_links. */
export function collectionOf(kind: RemoteKind): 'files' | 'folders' | 'web_links' {
  return `${wireType(kind)}s` as 'files' | 'folders' | 'web_links';
}

export function decodeSize(size: number | string | null | undefined): number {
  if (size === null || size === undefined) return 0;
  const n = typeof size === 'number' ? size : Number(size);
  return Number.isFinite(n) && n >= 0 ? Math.round(n) : 0;
}

/**
 * Validate and decode one item of an answer about that item (see schemas.ts): a malformed answer throws
 * SyncError `malformed_response` naming the endpoint and the field.
 */
export function decodeItem(w: WireItem | unknown, endpoint = 'an item request'): RemoteEntry {
  return decodeItemStrict(w, endpoint);
}

/** Box wants RFC 3339 with whole seconds. */
export function encodeTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
