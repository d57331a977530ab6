/**
 * The event stream: which recorded events each stream type shows, pages of them from a stream position, the
 * enterprise (`admin_logs`) shape, and the chaos real Box shows (repeated events, pages out of order).
 * Positions are dense integers, sent as strings of digits; `next_stream_position` never goes backwards.
 */
import { BoxError } from './box-error.js';
import { isoTime, userMini } from './serialize.js';
import type { EventRec } from './state.js';
import type { Store } from './store.js';

export type StreamType = 'all' | 'changes' | 'sync' | 'admin_logs' | 'admin_logs_streaming';

const allOnly = new Set(['ITEM_DOWNLOAD', 'ITEM_PREVIEW', 'ITEM_SHARED_CREATE', 'ITEM_SHARED_UNSHARE', 'ITEM_SHARED', 'COMMENT_CREATE', 'COMMENT_DELETE', 'TAG_ITEM_CREATE']);

const enterpriseNames: Readonly<Record<string, string>> = {
  ITEM_UPLOAD: 'UPLOAD', ITEM_CREATE: 'UPLOAD', ITEM_MOVE: 'MOVE', ITEM_RENAME: 'RENAME', ITEM_COPY: 'COPY', ITEM_TRASH: 'DELETE',
  ITEM_UNDELETE_VIA_TRASH: 'UNDELETE', LOCK_CREATE: 'LOCK', LOCK_DESTROY: 'UNLOCK', ITEM_DOWNLOAD: 'DOWNLOAD',
  ITEM_MAKE_CURRENT_VERSION: 'FILE_VERSION_RESTORE', ITEM_SHARED_CREATE: 'SHARE', ITEM_SHARED_UNSHARE: 'UNSHARE', ITEM_MODIFY: 'EDIT',
};

export function parseStreamType(raw: string | null): StreamType {
  const t = raw ?? 'all';
  if (t === 'all' || t === 'changes' || t === 'sync' || t === 'admin_logs' || t === 'admin_logs_streaming') return t;
  throw new BoxError(400, 'bad_request', "'stream_type' must be all, changes, sync, admin_logs or admin_logs_streaming");
}

export function isEnterprise(t: StreamType): boolean {
  return t === 'admin_logs' || t === 'admin_logs_streaming';
}

export function visible(ev: EventRec, t: StreamType): boolean {
  switch (t) {
    case 'all':
    case 'admin_logs':
    case 'admin_logs_streaming':
      return true;
    case 'changes':
      return !allOnly.has(ev.eventType);
    case 'sync':
      return !allOnly.has(ev.eventType) && ev.inSynced;
  }
}

export function latestPosition(store: Store): number {
  return store.state.nextPosition - 1;
}

/** A stream position from the query: null/'0' = the beginning, 'now' = the latest, else digits. */
export function parsePosition(store: Store, raw: string | null, t: StreamType): number {
  if (raw === null || raw === '' || raw === '0') return 0;
  if (raw === 'now') {
    if (isEnterprise(t)) throw new BoxError(400, 'bad_request', "stream_position 'now' is only available for user stream types (all, changes, sync)");
    return latestPosition(store);
  }
  if (!/^\d+$/.test(raw)) throw new BoxError(400, 'bad_request', "'stream_position' must be 0, now, or a next_stream_position from an earlier answer");
  return Number(raw);
}

export function eventJson(store: Store, ev: EventRec, t: StreamType): Record<string, unknown> {
  const enterprise = isEnterprise(t);
  const src = ev.source;
  return {
    type: 'event',
    event_id: ev.eventId,
    event_type: enterprise ? enterpriseNames[ev.eventType] ?? ev.eventType : ev.eventType,
    created_at: isoTime(ev.createdAtMs),
    recorded_at: isoTime(ev.createdAtMs),
    created_by: userMini(store, ev.createdBy),
    session_id: ev.sessionId,
    source:
      enterprise && src
        ? { item_type: src['type'], item_id: src['id'], item_name: src['name'], parent: src['parent'] ?? null, owned_by: src['owned_by'] ?? null }
        : src,
    ...(enterprise ? { additional_details: {} } : {}),
  };
}

export interface EventPage {
  readonly entries: readonly EventRec[];
  readonly nextPosition: number;
}

export function readEvents(store: Store, from: number, limit: number, t: StreamType, filter?: (ev: EventRec) => boolean): EventPage {
  const log = store.state.events;
  const out: EventRec[] = [];
  let next = Math.max(from, 0);
  // Positions are dense from 1, so the event at position p sits at index p - 1 (unless the log was trimmed).
  const firstPos = log[0]?.position ?? 1;
  for (let i = Math.max(0, from + 1 - firstPos); i < log.length && out.length < limit; i++) {
    const ev = log[i]!;
    next = ev.position;
    if (visible(ev, t) && (!filter || filter(ev))) out.push(ev);
  }
  return { entries: out, nextPosition: Math.max(next, from) };
}

/** Repeat some events (the last ones before `from`, and one from this page) and/or shuffle the page. */
export function withChaos(store: Store, page: readonly EventRec[], from: number, t: StreamType, chaos: { duplicate: boolean; reorder: boolean }): EventRec[] {
  let out = [...page];
  if (chaos.duplicate) {
    const before = store.state.events.filter((e) => e.position <= from && visible(e, t)).slice(-2);
    out = [...before, ...out];
    if (page.length > 0) out.push(page[Math.floor(Math.random() * page.length)]!);
  }
  if (chaos.reorder && out.length > 1) {
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    // A shuffle can land in order by chance; "out of order" must hold for every page of two or more events.
    const firsts = out.filter((e, i) => out.findIndex((x) => x.eventId === e.eventId) === i);
    if (firsts.length > 1 && firsts.every((e, i) => i === 0 || e.position > firsts[i - 1]!.position)) out.reverse();
  }
  return out;
}
