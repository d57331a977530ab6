/**
 * The HTTP control surface, outside /2.0: POST /_control/<verb> with a JSON body mirroring BoxServerControl,
 * answering `{"result": ...}`. failNext takes `path` as a string or `{"regex": "..."}`; as/<userId>/<action>
 * takes `{"args": [...]}` (positional, as the ServerActor method), where content may be a string or
 * `{"base64": "..."}`; a readFile result comes back as `{"base64": "..."}`.
 */
import { BoxError } from './box-error.js';
import { param, readJson, sendJson, type Ctx } from './http-context.js';
import { makeControl } from './control.js';
import { open, type Route } from './route.js';
import type { FaultRule, ServerActor } from './types.js';

function str(body: Record<string, unknown>, name: string): string {
  const v = body[name];
  if (typeof v !== 'string') throw new BoxError(400, 'bad_request', `'${name}' must be a string`);
  return v;
}

function decodeArg(a: unknown): unknown {
  if (a && typeof a === 'object' && !Array.isArray(a) && typeof (a as Record<string, unknown>)['base64'] === 'string') {
    return Buffer.from((a as Record<string, string>)['base64']!, 'base64');
  }
  return a;
}

function faultRule(body: Record<string, unknown>): FaultRule {
  const p = body['path'];
  let path: string | RegExp;
  if (typeof p === 'string') path = p;
  else if (p && typeof p === 'object' && typeof (p as Record<string, unknown>)['regex'] === 'string') path = new RegExp((p as Record<string, string>)['regex']!);
  else throw new BoxError(400, 'bad_request', "'path' must be a string or {\"regex\": \"...\"}");
  return { ...(body as Omit<FaultRule, 'path'>), path };
}

async function control(ctx: Ctx): Promise<void> {
  const c = makeControl(ctx.core);
  const verb = param(ctx, 0);
  const body = await readJson(ctx);
  let result: unknown = null;
  switch (verb) {
    case 'failNext':
      c.failNext(faultRule(body));
      break;
    case 'clearFaults':
      c.clearFaults();
      break;
    case 'commitAccepted':
      c.commitAccepted(Number(body['count'] ?? 1), body['retryAfterSec'] === undefined ? undefined : Number(body['retryAfterSec']));
      break;
    case 'expireAllTokens':
      c.expireAllTokens();
      break;
    case 'revokeAll':
      c.revokeAll(typeof body['userId'] === 'string' ? body['userId'] : undefined);
      break;
    case 'setRateLimit':
      c.setRateLimit(body['requests'] === undefined || body['requests'] === null ? null : { requests: Number(body['requests']), windowMs: Number(body['windowMs'] ?? 60_000) });
      break;
    case 'setEventChaos':
      c.setEventChaos({ duplicate: body['duplicate'] === true, reorder: body['reorder'] === true });
      break;
    case 'addUser':
      result = c.addUser(body);
      break;
    case 'issueToken':
      result = c.issueToken(str(body, 'userId'));
      break;
    case 'registerOAuthClient':
      c.registerOAuthClient({ ...(body as object), clientId: str(body, 'clientId'), clientSecret: str(body, 'clientSecret') });
      break;
    case 'issueAuthCode':
      result = c.issueAuthCode(str(body, 'clientId'), body['userId'] as string | undefined, body['redirectUri'] as string | undefined);
      break;
    case 'requests':
      result = c.requests();
      break;
    case 'expireUploadSessions':
      c.expireUploadSessions();
      break;
    case 'clearRequests':
      c.clearRequests();
      break;
    default:
      throw new BoxError(404, 'not_found', `Unknown control verb ${verb}`);
  }
  sendJson(ctx, 200, { result });
}

async function actAs(ctx: Ctx): Promise<void> {
  const actor = makeControl(ctx.core).as(param(ctx, 0));
  const action = param(ctx, 1) as keyof ServerActor;
  const body = await readJson(ctx);
  const fn = actor[action] as ((...a: unknown[]) => unknown) | undefined;
  if (typeof fn !== 'function' || !Object.hasOwn(actor, action)) throw new BoxError(404, 'not_found', `Unknown actor action ${action}`);
  const args = Array.isArray(body['args']) ? body['args'].map(decodeArg) : [];
  const result = fn(...args);
  sendJson(ctx, 200, { result: Buffer.isBuffer(result) ? { base64: result.toString('base64') } : result ?? null });
}

export const controlRoutes: readonly Route[] = [
  open('POST', /^\/_control\/as\/([^/]+)\/([^/]+)$/, actAs),
  open('POST', /^\/_control\/([A-Za-z]+)$/, control),
];
