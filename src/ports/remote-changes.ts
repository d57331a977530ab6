/**
 * RemoteChanges: the Box event stream as hints. Implemented by src/remote/box/events.
 *
 * The output is hints, not truth: ids that changed. The engine re-fetches each item before acting.
 * Events repeat and arrive out of order; the implementation dedupes by event_id and drops an event whose
 * source.sequence_id is not newer than the last one seen for that item (the caller may seed that memory).
 *
 * Stream positions are strings (they can exceed 2^53) and are stored by the caller in the journal in the
 * same transaction as the observations they led to.
 */
import type { RemoteId } from '../core/model.js';

export type StreamType = 'changes' | 'sync' | 'all';

export interface RemoteHint {
  readonly id: RemoteId;
  readonly kind: 'file' | 'folder' | 'weblink';
  /** Box event_type, e.g. ITEM_UPLOAD, ITEM_TRASH, ITEM_SYNC. Unknown types are passed through, not fatal. */
  readonly eventType: string;
  /** The parent id the event names, if any (lets the engine filter to its roots cheaply). */
  readonly parentId: RemoteId | null;
  readonly sequenceId: string | null;
  /** 'trashed' / 'deleted' when the event says so. */
  readonly status: 'active' | 'trashed' | 'deleted' | null;
}

export interface ChangeBatch {
  readonly hints: readonly RemoteHint[];
  readonly nextPosition: string;
}

export interface RemoteChanges {
  /** The current end of the stream (`stream_position=now`). Take it BEFORE a full listing. */
  now(stream: StreamType): Promise<string>;
  /**
   * Every event after `position`, paging (up to 500 per page) until caught up. Throws SyncError code
   * `stream_position_invalid` (replan) when the position is too old: the caller falls back to a full listing.
   */
  fetch(stream: StreamType, position: string): Promise<ChangeBatch>;
  /**
   * Long poll: resolves 'changed' as soon as something happened after `position`, 'timeout' when the realtime
   * server said reconnect or its retry_timeout passed. Handles OPTIONS /events, max_retries and backoff
   * internally. Rejects only on abort or a fatal error.
   */
  waitForChange(stream: StreamType, position: string, signal?: AbortSignal): Promise<'changed' | 'timeout'>;
}
