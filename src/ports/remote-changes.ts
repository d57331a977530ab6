/**
 * RemoteChanges: the Box event stream as hints. Implemented by src/remote/box/events.
 *
 * The output is hints, not truth: ids that changed, with what the adapter could tell of how. The engine
 * re-fetches each item before acting. Events repeat and arrive out of order; within one `fetch` the
 * implementation dedupes by event_id and keeps an item's newest sequence_id. `fetch` is a pure function of the
 * position: it keeps no memory across calls, so a batch whose pass failed or was killed is handed out again
 * in full from the same stored position (no change can be "already seen" and lost).
 *
 * The engine is the only reader of events (from the one cursor in its journal); the daemon only waits
 * (`waitForChange`) and asks for a pass.
 *
 * Stream positions are strings (they can exceed 2^53) and are stored by the caller in the journal in the
 * same transaction as the observations they led to.
 */
import type { RemoteEntry, RemoteId } from '../core/model.js';

export type StreamType = 'changes' | 'sync' | 'all';

export interface RemoteHint {
  readonly id: RemoteId;
  readonly kind: 'file' | 'folder' | 'weblink';
  /**
   * What happened, as far as the event can tell (decided in the adapter; Box's event names stay there):
   * 'trashed' (moved to the trash or deleted), 'restored' (back from the trash), 'changed' (anything else).
   */
  readonly change: 'trashed' | 'restored' | 'changed';
  /** The folder's sync_state was set (the `sync` stream's proof that it works). */
  readonly syncStateSet: boolean;
  /** The parent id the event names, if any (lets the engine filter to its roots cheaply). */
  readonly parentId: RemoteId | null;
  readonly sequenceId: string | null;
  /**
   * The item's etag and name as the event shows them, when it does. An event whose item the journal already
   * holds in that very state (same etag, parent and name: typically the echo of boxsync's own upload, move or
   * folder create) needs no fetch.
   */
  readonly etag: string | null;
  readonly name: string | null;
  /**
   * The file as the event's source shows it, when the source is a whole active file (every field a GET of it asks
   * for), validated as a listing's entry is. The engine may take it instead of fetching the item only when its
   * sequence_id is newer than the journal's (engine/remote-hints.ts trustedSources): an older or repeated event
   * never rolls an item back.
   */
  readonly item?: RemoteEntry;
}

export interface ChangeBatch {
  readonly hints: readonly RemoteHint[];
  readonly nextPosition: string;
  /** The fetch stopped at `maxPages` with more to read after `nextPosition`. */
  readonly more?: boolean;
}

export interface FetchOptions {
  /**
   * Stop after a page shorter than the page limit instead of asking once more to prove the end. Only for a
   * caller that long-polls from the stored position afterwards (the daemon): if Box had more, the long poll
   * answers at once and the next pass reads it. One change then costs one `GET /events`.
   */
  readonly stopAtShortPage?: boolean;
  /** Read at most this many pages (a look at the news, not a catch-up); `more` then says whether the stream went on. */
  readonly maxPages?: number;
}

export interface RemoteChanges {
  /** The current end of the stream (`stream_position=now`). Take it BEFORE a full listing. */
  now(stream: StreamType): Promise<string>;
  /**
   * Every event after `position`, paging (up to 500 per page) until caught up. Throws SyncError code
   * `stream_position_invalid` (replan) when the position is too old: the caller falls back to a full listing.
   */
  fetch(stream: StreamType, position: string, opts?: FetchOptions): Promise<ChangeBatch>;
  /**
   * Long poll: resolves 'changed' as soon as something happened after `position`, 'timeout' when the realtime
   * server said reconnect or its retry_timeout passed. Handles OPTIONS /events, max_retries and backoff
   * internally. Rejects only on abort or a fatal error.
   */
  waitForChange(stream: StreamType, position: string, signal?: AbortSignal): Promise<'changed' | 'timeout'>;
}
