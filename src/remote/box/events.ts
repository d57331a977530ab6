/**
 * RemoteChanges over Box's event stream: hints, not truth.
 *
 * - Positions are strings end to end (json.ts keeps integers beyond 2^53 exact).
 * - `fetch` pages (limit 500) until a page is empty or holds no unseen event, dedupes by `event_id` (a bounded memory shared across
 *   calls), and drops an event whose `source.sequence_id` is not newer than the newest already seen for that
 *   item (callers may seed that memory with `noteSequence`).
 * - `waitForChange` is the long poll: OPTIONS /events for a realtime server, GET it with the position; on
 *   `new_change` resolve 'changed'; on `reconnect`, the server's retry_timeout, or after max_retries polls of
 *   one URL get fresh options; network and server errors back off exponentially. Only an abort or a fatal
 *   error rejects.
 */
import { asRemoteId, type RemoteId } from '../../core/model.js';
import { isSyncError } from '../../core/errors.js';
import type { Logger } from '../../logger.js';
import type { ChangeBatch, RemoteChanges, RemoteHint, StreamType } from '../../ports/remote-changes.js';
import { compareSequence } from '../../core/sequence.js';
import { kindOfWire } from './decode.js';
import { remoteError } from './error-codes.js';
import type { BoxHttp } from './http.js';
import type { WireEvent, WireEvents, WireRealtimeServer } from './wire-types.js';

const PAGE_LIMIT = 500;
const MAX_PAGES = 10_000;
const DEDUPE_LIMIT = 20_000;
const SEQUENCE_LIMIT = 100_000;

interface Realtime {
  readonly url: string;
  readonly maxRetries: number;
  readonly retryTimeoutMs: number;
  polls: number;
}

export interface BoxChangesOptions {
  readonly http: BoxHttp;
  readonly apiUrl: string;
  readonly logger: Logger;
  /** Ceiling on the long-poll error backoff. Default 60 s. */
  readonly maxPollBackoffMs?: number;
}

export class BoxChanges implements RemoteChanges {
  private readonly seenEvents = new Set<string>();
  private readonly sequences = new Map<string, string>();
  private realtime: Realtime | undefined;
  private readonly log: Logger;

  constructor(private readonly o: BoxChangesOptions) {
    this.log = o.logger.child({ component: 'box-events' });
  }

  /** Seed the per-item sequence memory (e.g. from the journal's remote tree). */
  noteSequence(id: RemoteId, sequenceId: string): void {
    const known = this.sequences.get(id);
    if (known === undefined || compareSequence(sequenceId, known) > 0) this.remember(this.sequences, id, sequenceId, SEQUENCE_LIMIT);
  }

  async now(stream: StreamType): Promise<string> {
    const res = await this.get(stream, 'now', 0);
    return positionOf(res);
  }

  async fetch(stream: StreamType, position: string): Promise<ChangeBatch> {
    const hints: RemoteHint[] = [];
    let pos = position;
    for (let page = 0; page < MAX_PAGES; page++) {
      const res = await this.get(stream, pos, PAGE_LIMIT);
      const entries = res.entries ?? [];
      pos = positionOf(res, pos);
      let fresh = 0;
      for (const ev of entries) {
        if (ev.event_id === undefined || !this.seenEvents.has(ev.event_id)) fresh += 1;
        const hint = this.accept(ev);
        if (hint) hints.push(hint);
      }
      // Box repeats events across pages, so a page may never come back empty: a page with nothing new means
      // caught up (rclone's rule).
      if (entries.length === 0 || (res.chunk_size ?? entries.length) === 0 || fresh === 0) break;
    }
    return { hints, nextPosition: pos };
  }

  async waitForChange(stream: StreamType, position: string, signal?: AbortSignal): Promise<'changed' | 'timeout'> {
    for (let failures = 0; ; ) {
      if (signal?.aborted) throw remoteError('aborted', 'long poll cancelled');
      try {
        const rt = this.realtime && this.realtime.polls < this.realtime.maxRetries ? this.realtime : await this.options(stream, signal);
        rt.polls += 1;
        const url = new URL(rt.url);
        url.searchParams.set('stream_position', position);
        let res;
        try {
          res = await this.o.http.request<{ message?: string }>({
            method: 'GET',
            url: url.toString(),
            timeoutMs: rt.retryTimeoutMs,
            retry: false,
            accept: [200],
            ...(signal === undefined ? {} : { signal }),
          });
        } catch (e) {
          if (isSyncError(e) && e.code === 'network' && !signal?.aborted && isTimeout(e)) {
            this.realtime = undefined;
            return 'timeout';
          }
          throw e;
        }
        const message = res.body?.message;
        if (message === 'new_change') return 'changed';
        if (message === 'reconnect' || message === 'max_retries') {
          this.realtime = undefined;
          return 'timeout';
        }
        // Any other message: poll again (what the SDKs do).
        failures = 0;
      } catch (e) {
        if (signal?.aborted) throw remoteError('aborted', 'long poll cancelled', { cause: e });
        if (isSyncError(e) && (e.disposition === 'fatal' || e.code === 'aborted')) throw e;
        this.realtime = undefined;
        failures += 1;
        const waitMs = Math.min(this.o.maxPollBackoffMs ?? 60_000, (isSyncError(e) ? e.retryAfterMs : undefined) ?? 1000 * 2 ** (failures - 1));
        this.log.warn({ err: isSyncError(e) ? e.code : String(e), waitMs }, 'long poll failed; backing off');
        await this.o.http.sleep(waitMs, signal);
      }
    }
  }

  private async options(stream: StreamType, signal: AbortSignal | undefined): Promise<Realtime> {
    const res = await this.o.http.request<{ entries?: WireRealtimeServer[] }>({
      method: 'OPTIONS',
      url: `${this.o.apiUrl}/events`,
      searchParams: { stream_type: stream },
      ...(signal === undefined ? {} : { signal }),
    });
    const entries = res.body?.entries ?? [];
    const server = entries.find((e) => e.type === 'realtime_server') ?? entries[0];
    if (!server?.url) throw remoteError('server_error', 'OPTIONS /events returned no realtime server');
    const rt: Realtime = {
      url: server.url,
      maxRetries: Math.max(1, Number(server.max_retries ?? 10) || 10),
      retryTimeoutMs: Math.max(1, Number(server.retry_timeout ?? 610) || 610) * 1000,
      polls: 0,
    };
    this.realtime = rt;
    return rt;
  }

  private async get(stream: StreamType, position: string, limit: number): Promise<WireEvents> {
    try {
      const res = await this.o.http.request<WireEvents>({
        method: 'GET',
        url: `${this.o.apiUrl}/events`,
        searchParams: { stream_type: stream, stream_position: position, ...(limit > 0 ? { limit } : {}) },
      });
      return res.body ?? {};
    } catch (e) {
      if (isSyncError(e) && position !== 'now' && (e.code === 'bad_request' || e.code === 'not_found' || e.code === 'session_expired')) {
        throw remoteError('stream_position_invalid', `Box no longer has events after position ${position}; a full listing is needed`, {
          details: { ...e.details, position },
          cause: e,
        });
      }
      throw e;
    }
  }

  /** The hint for an event, or null for a duplicate, a stale one, or one without an item. */
  private accept(ev: WireEvent): RemoteHint | null {
    if (ev.event_id) {
      if (this.seenEvents.has(ev.event_id)) return null;
      this.remember(this.seenEvents, ev.event_id, undefined, DEDUPE_LIMIT);
    }
    const src = ev.source;
    const kind = src ? kindOfWire(src.type) : null;
    if (!src || kind === null || src.id === undefined) return null;
    const id = String(src.id);
    const seq = src.sequence_id === null || src.sequence_id === undefined ? null : String(src.sequence_id);
    if (seq !== null) {
      const known = this.sequences.get(id);
      if (known !== undefined && compareSequence(seq, known) <= 0) return null;
      this.remember(this.sequences, id, seq, SEQUENCE_LIMIT);
    }
    const status = src.item_status === 'trashed' || src.item_status === 'deleted' || src.item_status === 'active' ? src.item_status : null;
    return {
      id: asRemoteId(id),
      kind,
      eventType: ev.event_type ?? 'UNKNOWN',
      parentId: src.parent?.id === undefined || src.parent?.id === null ? null : asRemoteId(String(src.parent.id)),
      sequenceId: seq,
      status: status ?? (ev.event_type === 'ITEM_TRASH' ? 'trashed' : null),
    };
  }

  /** Insertion-ordered bounded memory: the oldest entries go first. */
  private remember<K>(store: Set<K> | Map<K, string>, key: K, value: string | undefined, limit: number): void {
    if (store instanceof Set) {
      store.add(key);
    } else {
      store.delete(key);
      store.set(key, value!);
    }
    if (store.size > limit) {
      const oldest = store.keys().next().value as K;
      store.delete(oldest);
    }
  }
}

function positionOf(res: WireEvents, fallback?: string): string {
  const p = res.next_stream_position;
  if (p === undefined || p === null) {
    if (fallback !== undefined) return fallback;
    throw remoteError('server_error', 'GET /events answered without next_stream_position');
  }
  return String(p);
}

function isTimeout(e: { details: Readonly<Record<string, unknown>> }): boolean {
  const errno = e.details.errno;
  return errno === 'ETIMEDOUT' || errno === 'ERR_GOT_REQUEST_ERROR' || errno === 'ESOCKETTIMEDOUT';
}
