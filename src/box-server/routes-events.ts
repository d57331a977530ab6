/**
 * Event routes: GET /events (stream types, positions, limit ≤ 500, chunk_size, next_stream_position as a
 * string), OPTIONS /events (one realtime_server with `ttl`/`max_retries` as strings and `retry_timeout` as an
 * integer), and the long-poll URL, which answers new_change as soon as a visible event exists after the given
 * position and reconnect after longPollTimeoutMs. Enterprise streams need an admin and refuse 'now' and long poll.
 */
import { randomBytes } from 'node:crypto';
import { BoxError } from './box-error.js';
import { eventJson, isEnterprise, latestPosition, parsePosition, parseStreamType, readEvents, visible, withChaos, type StreamType } from './events.js';
import { intQuery, query, sendJson, type Ctx } from './http-context.js';
import { api, open, type Route } from './route.js';
import type { EventRec } from './state.js';
import type { Store } from './store.js';

function streamTypeFor(ctx: Ctx): StreamType {
  const t = parseStreamType(query(ctx, 'stream_type'));
  if (isEnterprise(t) && !ctx.core.store.user(ctx.userId).enterpriseAdmin) {
    throw new BoxError(403, 'access_denied_insufficient_permissions', 'The admin_logs stream needs an enterprise admin');
  }
  return t;
}

function adminFilter(ctx: Ctx): ((ev: EventRec) => boolean) | undefined {
  const after = query(ctx, 'created_after');
  const before = query(ctx, 'created_before');
  const types = query(ctx, 'event_type');
  if (after === null && before === null && types === null) return undefined;
  const afterMs = after ? Date.parse(after) : Number.NEGATIVE_INFINITY;
  const beforeMs = before ? Date.parse(before) : Number.POSITIVE_INFINITY;
  const wanted = types ? new Set(types.split(',')) : null;
  // An event's created_at is a whole second (as on Box), and the bounds are compared with what the client
  // sees: an event at 12:00:05.700 has created_at 12:00:05 and is within created_before=12:00:05.
  const second = (ms: number): number => Math.floor(ms / 1000) * 1000;
  return (ev) => second(ev.createdAtMs) >= afterMs && second(ev.createdAtMs) <= beforeMs && (!wanted || wanted.has(ev.eventType) || wanted.has(eventJson(ctx.core.store, ev, 'admin_logs')['event_type'] as string));
}

/** An isolated user's items stay out of other users' streams. */
function eventVisibleTo(store: Store, userId: string, ev: EventRec): boolean {
  const owner = (ev.source?.['owned_by'] as { id?: string } | undefined)?.id;
  return owner === undefined || owner === userId || !store.state.users[owner]?.isolated;
}

function getEvents(ctx: Ctx): void {
  const store = ctx.core.store;
  const t = streamTypeFor(ctx);
  const raw = query(ctx, 'stream_position');
  const from = parsePosition(store, raw, t);
  const limit = intQuery(ctx, 'limit', 100, 0, 500);
  if (raw === 'now') return sendJson(ctx, 200, { chunk_size: 0, next_stream_position: String(from), entries: [] });
  const pageOf = readEvents(store, from, limit, t, isEnterprise(t) ? adminFilter(ctx) : (ev) => eventVisibleTo(store, ctx.userId, ev));
  const entries = isEnterprise(t) ? [...pageOf.entries] : withChaos(store, pageOf.entries, from, t, ctx.core.chaos);
  sendJson(ctx, 200, {
    chunk_size: entries.length,
    next_stream_position: String(pageOf.nextPosition),
    entries: entries.map((e) => eventJson(store, e, t)),
  });
}

function realtimeServers(ctx: Ctx): void {
  const t = parseStreamType(query(ctx, 'stream_type'));
  if (isEnterprise(t)) throw new BoxError(400, 'bad_request', 'Long polling is only available for user stream types (all, changes, sync)');
  const channel = randomBytes(8).toString('hex');
  const retryTimeoutSec = Math.ceil(ctx.core.longPollTimeoutMs / 1000) + 10;
  sendJson(ctx, 200, {
    chunk_size: 1,
    entries: [
      {
        type: 'realtime_server',
        url: `${ctx.core.store.baseUrl('realtime')}/subscribe?channel=${channel}&stream_type=${t}`,
        ttl: '10',
        max_retries: '10',
        retry_timeout: retryTimeoutSec,
      },
    ],
  });
}

function longPoll(ctx: Ctx): Promise<void> {
  const store = ctx.core.store;
  const t = parseStreamType(query(ctx, 'stream_type'));
  if (isEnterprise(t)) throw new BoxError(400, 'bad_request', 'Long polling is only available for user stream types (all, changes, sync)');
  const raw = query(ctx, 'stream_position');
  const from = raw === null || raw === '' || raw === 'now' ? latestPosition(store) : parsePosition(store, raw, t);
  const newChange = (): void => sendJson(ctx, 200, { message: 'new_change' });
  if (readEvents(store, from, 1, t).entries.length > 0) {
    newChange();
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    const onEvent = (ev: EventRec): void => {
      if (ev.position > from && visible(ev, t)) finish(newChange);
    };
    const timer = setTimeout(() => finish(() => sendJson(ctx, 200, { version: 1, message: 'reconnect' })), ctx.core.longPollTimeoutMs);
    const onAbort = (): void => finish(() => sendJson(ctx, 200, { version: 1, message: 'reconnect' }));
    const onGone = (): void => finish(() => undefined);
    function finish(reply: () => void): void {
      clearTimeout(timer);
      store.bus.off('event', onEvent);
      ctx.core.closing.signal.removeEventListener('abort', onAbort);
      ctx.res.off('close', onGone);
      reply();
      resolve();
    }
    store.bus.on('event', onEvent);
    ctx.core.closing.signal.addEventListener('abort', onAbort);
    ctx.res.on('close', onGone);
  });
}

export const eventRoutes: readonly Route[] = [
  api('GET', /^\/events$/, getEvents),
  api('OPTIONS', /^\/events$/, realtimeServers),
  open('GET', /^\/subscribe$/, longPoll),
];
