/**
 * RemoteChanges over Box's event stream: hints, not truth.
 *
 * - Positions are strings end to end (json.ts keeps integers beyond 2^53 exact).
 * - `fetch` is stateless: it pages (limit 500) from the position it is given until a page is empty or holds no
 *   event it has not seen in this call, dedupes by `event_id` and keeps each item's newest `sequence_id` within
 *   the call. Nothing is remembered across calls, so a batch whose pass did not finish is handed out again.
 * - Every page is validated (schemas.ts): a malformed page is asked for again a bounded number of times, then
 *   the fetch fails with `malformed_response`; a malformed event is skipped and logged. A position that does
 *   not move while events keep coming, or that moves backwards, ends the fetch (what was read is returned, at
 *   the last good position); at most MAX_PAGES pages are read per call, the rest waits for the next pass.
 * - `waitForChange` is the long poll: OPTIONS /events for a realtime server, GET it with the position; on
 *   `new_change` resolve 'changed'; on `reconnect`, the server's retry_timeout, or after max_retries polls of
 *   one URL get fresh options. Only an abort or a fatal error rejects.
 * - Never a tight loop: this class alone paces the long poll (core/retry.ts streamBackoff). Errors, answers that
 *   come back at once without news, and a 'changed' that held nothing new (the caller asks again from the same
 *   position, after its pass read the stream) back off exponentially.
 */
import { asRemoteId, type RemoteEntry } from '../../core/model.js';
import { isSyncError } from '../../core/errors.js';
import type { Logger } from '../../logger.js';
import type { ChangeBatch, FetchOptions, RemoteChanges, RemoteHint, StreamType } from '../../ports/remote-changes.js';
import { compareSequence } from '../../core/sequence.js';
import { backoffDelayMs, malformedPageRetry, nominalDelayMs, streamBackoff, withBounds } from '../../core/retry.js';
import { checkItem, eventSchema, eventsPageSchema, parseFrame } from './schemas.js';
import { remoteError } from './error-codes.js';
import type { BoxHttp } from './http.js';
import type { WireRealtimeServer } from './wire-types.js';

const PAGE_LIMIT = 500;
/** A long-poll answer without news sooner than this came back "at once" (a real one waits for news or its timeout). */
const QUICK_ANSWER_MS = 1_000;
/** Pages per fetch: 100 000 events. Whatever lies beyond waits for the next pass (the position says where). */
const MAX_PAGES = 200;

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
  /** Ceiling on the long-poll backoff. Default 60 s. */
  readonly maxPollBackoffMs?: number;
  /** A long-poll answer sooner than this, without news, counts as a failure for the backoff. Default QUICK_ANSWER_MS. */
  readonly quickAnswerMs?: number;
}

type Page = { readonly next_stream_position: string | number; readonly chunk_size?: number | undefined; readonly entries: readonly unknown[] };

export class BoxChanges implements RemoteChanges {
  private realtime: Realtime | undefined;
  private readonly log: Logger;
  /** Long-poll answers in a row that brought no news: at once, or a 'changed' with nothing new (for the backoff). */
  private quick = 0;
  /** The stream and position of the last 'changed' answer: asked about again, that news held nothing new. */
  private changedAt: string | null = null;

  constructor(private readonly o: BoxChangesOptions) {
    this.log = o.logger.child({ component: 'box-events' });
  }

  async now(stream: StreamType): Promise<string> {
    const res = await this.page(stream, 'now', 0);
    return String(res.next_stream_position);
  }

  async fetch(stream: StreamType, position: string, opts: FetchOptions = {}): Promise<ChangeBatch> {
    const seenEvents = new Set<string>();
    const newest = new Map<string, number>();
    const hints: RemoteHint[] = [];
    let pos = position;
    let more = false;
    const pages = Math.min(opts.maxPages ?? MAX_PAGES, MAX_PAGES);
    for (let page = 0; page < pages; page++) {
      const res = await this.page(stream, pos, PAGE_LIMIT);
      const next = String(res.next_stream_position);
      const entries = res.entries;
      let fresh = 0;
      for (const raw of entries) {
        const ev = eventSchema.safeParse(raw);
        if (!ev.success) {
          this.log.warn({ position: pos }, 'skipped a malformed event in the stream');
          continue;
        }
        const id = ev.data.event_id;
        if (id !== undefined) {
          if (seenEvents.has(id)) continue;
          seenEvents.add(id);
        }
        fresh += 1;
        const hint = this.hintOf(ev.data.event_type, ev.data.source);
        if (!hint) continue;
        // Within the call, an item keeps only its newest event (older sequence ids are stale repeats).
        const at = newest.get(hint.id);
        if (at !== undefined) {
          const prev = hints[at]!;
          if (hint.sequenceId !== null && prev.sequenceId !== null && compareSequence(hint.sequenceId, prev.sequenceId) < 0) continue;
          hints[at] = mergeHint(prev, hint);
          continue;
        }
        newest.set(hint.id, hints.length);
        hints.push(hint);
      }
      if (compareSequence(next, pos) < 0) {
        this.log.warn({ from: pos, to: next }, 'the event stream position went backwards; keeping the last good one');
        break;
      }
      const moved = next !== pos;
      pos = next;
      // Box repeats events across pages, so a page may never come back empty: a page with nothing new means
      // caught up (rclone's rule). A position that does not move ends the fetch too.
      if (entries.length === 0 || (res.chunk_size ?? entries.length) === 0 || fresh === 0 || !moved) break;
      if (opts.stopAtShortPage && entries.length < PAGE_LIMIT) break;
      more = page === pages - 1;
    }
    return { hints, nextPosition: pos, ...(more ? { more } : {}) };
  }

  async waitForChange(stream: StreamType, position: string, signal?: AbortSignal): Promise<'changed' | 'timeout'> {
    const at = `${stream}:${position}`;
    if (at === this.changedAt) {
      // The caller's pass read the stream after our 'changed' and found nothing to move past (a server that
      // announces a change in a loop): like an answer at once without news, this backs off.
      await this.noNews('Box announced a change, but the event stream had nothing new; waiting before the next long poll', signal);
    } else if (this.changedAt !== null) {
      this.quick = 0;
    }
    this.changedAt = null;
    for (let failures = 0; ; ) {
      if (signal?.aborted) throw remoteError('aborted', 'long poll cancelled');
      try {
        const rt = this.realtime && this.realtime.polls < this.realtime.maxRetries ? this.realtime : await this.options(stream, signal);
        rt.polls += 1;
        const url = new URL(rt.url);
        url.searchParams.set('stream_position', position);
        let res;
        const started = this.o.http.clock.now();
        try {
          res = await this.o.http.request<unknown>({
            method: 'GET',
            url: url.toString(),
            // The realtime URL comes from an answer: the token goes there only when the host is a trusted one.
            auth: this.o.http.trusts(url),
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
        const body = res.body;
        const message = body !== null && typeof body === 'object' && typeof (body as { message?: unknown }).message === 'string' ? (body as { message: string }).message : null;
        if (message === 'new_change') {
          this.changedAt = at;
          return 'changed';
        }
        // An answer without news that comes back at once (garbage, or a server that says reconnect in a loop)
        // must not become a tight loop: it backs off like a failure.
        if (this.o.http.clock.now() - started < (this.o.quickAnswerMs ?? QUICK_ANSWER_MS)) {
          this.realtime = undefined;
          await this.noNews('long poll answered at once without news; backing off', signal, message === null ? '(not a long-poll answer)' : message.slice(0, 40));
        } else {
          this.quick = 0;
        }
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
        const waitMs = backoffDelayMs({
          policy: withBounds(streamBackoff, { maxMs: this.o.maxPollBackoffMs }),
          attempt: failures,
          random: Math.random(),
          retryAfterMs: isSyncError(e) ? e.retryAfterMs : undefined,
        });
        this.log.warn({ err: isSyncError(e) ? e.code : String(e), waitMs }, 'long poll failed; backing off');
        await this.o.http.sleep(waitMs, signal);
      }
    }
  }

  /** One more long-poll answer in a row without news: wait the stream backoff for that many. */
  private async noNews(what: string, signal: AbortSignal | undefined, message?: string): Promise<void> {
    this.quick += 1;
    const waitMs = nominalDelayMs(withBounds(streamBackoff, { maxMs: this.o.maxPollBackoffMs }), this.quick);
    this.log.warn({ ...(message === undefined ? {} : { message }), waitMs }, what);
    await this.o.http.sleep(waitMs, signal);
  }

  private async options(stream: StreamType, signal: AbortSignal | undefined): Promise<Realtime> {
    const res = await this.o.http.request<{ entries?: WireRealtimeServer[] }>({
      method: 'OPTIONS',
      url: `${this.o.apiUrl}/events`,
      searchParams: { stream_type: stream },
      ...(signal === undefined ? {} : { signal }),
    });
    const entries = res.body?.entries ?? [];
    const server = Array.isArray(entries) ? (entries.find((e) => e?.type === 'realtime_server') ?? entries[0]) : undefined;
    if (!server || typeof server.url !== 'string' || !/^https?:\/\//.test(server.url)) throw remoteError('server_error', 'OPTIONS /events returned no realtime server');
    const rt: Realtime = {
      url: server.url,
      maxRetries: Math.max(1, Number(server.max_retries ?? 10) || 10),
      retryTimeoutMs: Math.max(1, Number(server.retry_timeout ?? 610) || 610) * 1000,
      polls: 0,
    };
    this.realtime = rt;
    return rt;
  }

  /** One page of the stream, validated; a malformed page is asked for again a bounded number of times. */
  private async page(stream: StreamType, position: string, limit: number): Promise<Page> {
    for (let attempt = 1; ; attempt++) {
      let body: unknown;
      try {
        const res = await this.o.http.request<unknown>({
          method: 'GET',
          url: `${this.o.apiUrl}/events`,
          searchParams: { stream_type: stream, stream_position: position, ...(limit > 0 ? { limit } : {}) },
        });
        body = res.body;
      } catch (e) {
        if (isSyncError(e) && position !== 'now' && (e.code === 'bad_request' || e.code === 'not_found' || e.code === 'session_expired')) {
          throw remoteError('stream_position_invalid', `Box no longer has events after position ${position}; a full listing is needed`, {
            details: { ...e.details, position },
            cause: e,
          });
        }
        throw e;
      }
      try {
        return parseFrame(eventsPageSchema, body, 'GET /events');
      } catch (e) {
        if (attempt > malformedPageRetry.retries) throw e;
        this.log.warn({ attempt }, 'GET /events answered a malformed page; asking again');
        await this.o.http.backoff(malformedPageRetry, attempt, undefined);
      }
    }
  }

  /**
   * The hint for an event's source, or null when it names no file, folder or web link we can use. A source that
   * fails validation (a name Box would refuse, a malformed field) but names an item by kind and id is still a
   * hint, without its name or etag: the item is fetched, and what Box answers decides (a malformed answer is
   * parked by the engine, never dropped).
   */
  private hintOf(eventType: string | undefined, source: unknown): RemoteHint | null {
    const c = checkItem(source, { requireName: false });
    if (!c.ok) {
      if (c.unknownType) return null;
      if (c.id === null || c.kind === null) {
        this.log.warn({ field: c.field }, `skipped an event whose item has no usable id or type (${c.reason}); a listing still finds the item`);
        return null;
      }
      this.log.warn({ id: c.id, field: c.field }, `an event shows Box ${c.kind} ${c.id} with a malformed \`${c.field}\`; fetching it to see what Box holds`);
      const parent = (source as { parent?: { id?: unknown } | null }).parent;
      const parentId = parent && (typeof parent.id === 'string' || typeof parent.id === 'number') && /^[0-9A-Za-z_-]{1,64}$/.test(String(parent.id)) ? String(parent.id) : null;
      return this.hintFrom(eventType, { id: c.id, kind: c.kind, parentId, sequenceId: '', etag: '', name: '', status: 'active' });
    }
    const hint = this.hintFrom(eventType, c.entry);
    return wholeFile(source, c.entry) ? { ...hint, item: c.entry } : hint;
  }

  private hintFrom(
    eventType: string | undefined,
    e: { readonly id: string; readonly kind: RemoteHint['kind']; readonly parentId: string | null; readonly sequenceId: string; readonly etag: string; readonly name: string; readonly status: string },
  ): RemoteHint {
    const type = eventType ?? '';
    const trashed = e.status !== 'active' || (/TRASH|DELETE/.test(type) && !/UNDELETE/.test(type));
    return {
      id: asRemoteId(e.id),
      kind: e.kind,
      change: trashed ? 'trashed' : /UNDELETE|RESTORE/.test(type) ? 'restored' : 'changed',
      syncStateSet: type === 'ITEM_SYNC',
      parentId: e.parentId === null ? null : asRemoteId(e.parentId),
      sequenceId: e.sequenceId === '' ? null : e.sequenceId,
      etag: e.etag === '' ? null : e.etag,
      name: e.name === '' ? null : e.name,
    };
  }
}

/** The fields of a file a GET of it reads (decode.ts ITEM_FIELDS), each of which the source must carry to stand for that GET. */
const WHOLE_FILE_FIELDS = ['etag', 'sequence_id', 'name', 'sha1', 'size', 'content_modified_at', 'parent', 'file_version', 'item_status'] as const;

/**
 * Is this validated source a whole active file: every field a GET asks for present (none left to a fallback, e.g.
 * a missing content_modified_at read as modified_at), with a sequence_id, an etag, a SHA-1 and a version?
 */
function wholeFile(source: unknown, e: RemoteEntry): boolean {
  if (e.kind !== 'file' || e.status !== 'active' || e.sequenceId === '' || e.etag === '' || e.sha1 === null || e.versionId === null || e.parentId === null) return false;
  const raw = source as Record<string, unknown>;
  return WHOLE_FILE_FIELDS.every((f) => raw[f] !== undefined && raw[f] !== null) && typeof raw.content_modified_at === 'string' && typeof raw.size === 'number';
}

/** Two events of one item in one batch: the newer decides the change, and a sync-state event is not forgotten. */
function mergeHint(older: RemoteHint, newer: RemoteHint): RemoteHint {
  return { ...newer, syncStateSet: older.syncStateSet || newer.syncStateSet, parentId: newer.parentId ?? older.parentId };
}

function isTimeout(e: { details: Readonly<Record<string, unknown>> }): boolean {
  const errno = e.details.errno;
  return errno === 'ETIMEDOUT' || errno === 'ERR_GOT_REQUEST_ERROR' || errno === 'ESOCKETTIMEDOUT';
}
