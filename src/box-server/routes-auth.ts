/**
 * Users and OAuth: GET /users/me (and /users/{id}), the token endpoint (authorization_code and refresh_token
 * grants, OAuth error bodies), revoke, and a minimal browser authorize page that grants access as the default
 * user (or `?user_id=`) and redirects back with `code` and `state`.
 */
import { OAuthError } from './box-error.js';
import { fieldsOf, param, query, readBody, sendEmpty, sendJson, type Ctx } from './http-context.js';
import { api, open, type Route } from './route.js';
import { isoTime } from './serialize.js';
import { defaultUserId, type Store } from './store.js';

export function userJson(store: Store, userId: string, fields: readonly string[] | null): Record<string, unknown> {
  const u = store.user(userId);
  const full: Record<string, unknown> = {
    type: 'user',
    id: u.id,
    name: u.name,
    login: u.login,
    created_at: isoTime(u.createdAtMs),
    modified_at: isoTime(u.createdAtMs),
    language: 'en',
    timezone: 'UTC',
    space_amount: u.spaceAmountBytes,
    space_used: store.spaceUsed(u.id),
    max_upload_size: u.maxUploadSizeBytes,
    status: 'active',
    job_title: '',
    phone: '',
    address: '',
    avatar_url: `${store.baseUrl()}/avatar/${u.id}`,
    notification_email: null,
  };
  // `role` is not in the standard user form (Box's User resource): Box sends it only when `fields` asks for it.
  if (!fields) return full;
  const extra: Record<string, unknown> = { role: u.enterpriseAdmin ? 'admin' : 'user' };
  const out: Record<string, unknown> = { type: 'user', id: u.id };
  for (const f of fields) {
    if (Object.hasOwn(full, f)) out[f] = full[f];
    else if (Object.hasOwn(extra, f)) out[f] = extra[f];
  }
  return out;
}

function me(ctx: Ctx): void {
  sendJson(ctx, 200, userJson(ctx.core.store, ctx.userId, fieldsOf(ctx)));
}

function user(ctx: Ctx): void {
  sendJson(ctx, 200, userJson(ctx.core.store, param(ctx, 0), fieldsOf(ctx)));
}

async function form(ctx: Ctx): Promise<URLSearchParams> {
  const type = ctx.req.headers['content-type'] ?? '';
  const body = await readBody(ctx, 64 * 1024);
  if (!/application\/x-www-form-urlencoded/i.test(type)) {
    throw new OAuthError(400, 'invalid_request', 'Content-Type must be application/x-www-form-urlencoded');
  }
  return new URLSearchParams(body.toString('utf8'));
}

async function token(ctx: Ctx): Promise<void> {
  const fields = await form(ctx);
  // Client credentials may also come as HTTP Basic (RFC 6749 2.3.1); the form wins when both are sent.
  const basic = /^Basic\s+(\S+)$/i.exec(ctx.req.headers.authorization ?? '');
  if (basic && !fields.has('client_id')) {
    const [id, secret] = Buffer.from(basic[1]!, 'base64').toString('utf8').split(':');
    fields.set('client_id', decodeURIComponent(id ?? ''));
    fields.set('client_secret', decodeURIComponent(secret ?? ''));
  }
  const pair = ctx.core.auth.grant(fields);
  sendJson(ctx, 200, pair, { 'Cache-Control': 'no-store' });
}

async function revoke(ctx: Ctx): Promise<void> {
  const f = await form(ctx);
  ctx.core.auth.revoke(f.get('token') ?? '');
  sendEmpty(ctx, 200);
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

async function authorize(ctx: Ctx): Promise<void> {
  const store = ctx.core.store;
  const params = ctx.req.method === 'POST' ? new URLSearchParams((await readBody(ctx, 64 * 1024)).toString('utf8')) : ctx.url.searchParams;
  const clientId = params.get('client_id') ?? '';
  const client = store.state.clients[clientId];
  if (!client || params.get('response_type') !== 'code') {
    return sendHtml(ctx, 400, '<h1>Invalid request</h1><p>Unknown client_id or response_type is not "code".</p>');
  }
  const redirect = params.get('redirect_uri') ?? client.redirectUris[0] ?? null;
  if (redirect === null) return sendHtml(ctx, 400, '<h1>redirect_uri_missing</h1>');
  if (client.redirectUris.length > 0 && !client.redirectUris.includes(redirect)) return sendHtml(ctx, 400, '<h1>redirect_uri_mismatch</h1>');
  const userId = params.get('user_id') ?? client.userId ?? defaultUserId;
  if (ctx.req.method === 'POST' || query(ctx, 'approve') === '1') {
    const code = ctx.core.auth.issueAuthCode(clientId, userId, redirect);
    const target = new URL(redirect);
    target.searchParams.set('code', code);
    const state = params.get('state');
    if (state !== null) target.searchParams.set('state', state);
    store.flush();
    return sendEmpty(ctx, 302, { Location: target.toString() });
  }
  const hidden = [...params.entries()].map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`).join('');
  sendHtml(ctx, 200, `<h1>box-server</h1><p>Grant access to ${escapeHtml(clientId)} as user ${escapeHtml(userId)}?</p><form method="post">${hidden}<button type="submit">Grant access to Box</button></form>`);
}

function sendHtml(ctx: Ctx, status: number, body: string): void {
  const buf = Buffer.from(`<!doctype html><html><body>${body}</body></html>`);
  ctx.res.writeHead(status, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Length': String(buf.length), 'box-request-id': ctx.requestId });
  ctx.res.end(buf);
}

export const authRoutes: readonly Route[] = [
  api('GET', /^\/users\/me$/, me),
  api('GET', /^\/users\/([^/]+)$/, user),
  open('POST', /^\/oauth2\/token$/, token),
  open('POST', /^\/oauth2\/revoke$/, revoke),
  open('GET', /^\/api\/oauth2\/authorize$/, authorize),
  open('POST', /^\/api\/oauth2\/authorize$/, authorize),
];
