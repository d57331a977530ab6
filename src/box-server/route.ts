/** A route: method, pathname pattern (after the `/2.0` or `/api/2.0` prefix for API routes), handler. */
import type { Ctx } from './http-context.js';
import type { ActorContext } from './actor-context.js';
import { BoxError } from './box-error.js';
import type { ItemRec } from './state.js';

export interface Route {
  readonly method: string;
  readonly pattern: RegExp;
  /** 'api' routes live under /2.0 and /api/2.0 and need a bearer token; 'open' routes are matched on the raw pathname. */
  readonly kind: 'api' | 'open';
  readonly handler: (ctx: Ctx) => Promise<void> | void;
}

export function api(method: string, pattern: RegExp, handler: Route['handler']): Route {
  return { method, pattern, kind: 'api', handler };
}

export function open(method: string, pattern: RegExp, handler: Route['handler']): Route {
  return { method, pattern, kind: 'open', handler };
}

export function actorOf(ctx: Ctx): ActorContext {
  return { userId: ctx.userId, sessionId: ctx.requestId };
}

function normEtag(s: string): string {
  return s.trim().replace(/^W\//, '').replace(/^"(.*)"$/, '$1');
}

/** If-Match: 412 when the item is missing or its etag differs ('*' matches any existing item). */
export function checkIfMatch(ctx: Ctx, item: ItemRec | undefined): void {
  const h = ctx.req.headers['if-match'];
  if (h === undefined || h === '') return;
  const wanted = h.split(',').map(normEtag);
  if (!item || item.status === 'deleted' || !(wanted.includes('*') || wanted.includes(String(item.sequenceId)))) {
    throw new BoxError(412, 'precondition_failed', 'The resource has been modified. Please retrieve the resource again and retry');
  }
}

/** If-None-Match: true when the client's copy is current (answer 304). */
export function notModified(ctx: Ctx, item: ItemRec): boolean {
  const h = ctx.req.headers['if-none-match'];
  if (h === undefined || h === '') return false;
  const wanted = h.split(',').map(normEtag);
  return wanted.includes('*') || wanted.includes(String(item.sequenceId));
}
