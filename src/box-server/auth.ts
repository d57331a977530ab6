/**
 * Tokens: developer tokens (no expiry), OAuth2 access tokens (lifetime `accessTokenTtlSec`), single-use refresh
 * tokens (every refresh rotates the pair and the old refresh token then gets invalid_grant), authorization codes
 * (30 s, single use) and registered clients. A missing, unknown, revoked or expired bearer token gives 401 with a
 * Bearer `WWW-Authenticate` challenge.
 */
import { randomBytes } from 'node:crypto';
import { BoxError, OAuthError } from './box-error.js';
import type { Store } from './store.js';

const refreshLifetimeMs = 60 * 86_400_000;
const authCodeLifetimeMs = 30_000;

export interface TokenPair {
  readonly access_token: string;
  readonly expires_in: number;
  readonly token_type: 'bearer';
  readonly refresh_token: string;
  readonly restricted_to: readonly unknown[];
  readonly issued_token_type: string;
}

function secret(bytes = 24): string {
  return randomBytes(bytes).toString('base64url');
}

export class Auth {
  constructor(
    private readonly store: Store,
    private readonly accessTokenTtlSec: number,
  ) {}

  /** The user behind an Authorization header, or 401. */
  authenticate(header: string | undefined): string {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
    if (!m) {
      throw new BoxError(401, 'unauthorized', 'Authorization header with a Bearer token is required', null, {
        'WWW-Authenticate': 'Bearer realm="Service"',
      });
    }
    const rec = this.store.state.tokens[m[1]!];
    if (!rec || rec.revoked) {
      throw new BoxError(401, 'unauthorized', 'The access token provided is invalid', null, {
        'WWW-Authenticate': 'Bearer realm="Service", error="invalid_token", error_description="The access token provided is invalid."',
      });
    }
    if (rec.expiresAtMs !== null && rec.expiresAtMs <= this.store.now()) {
      throw new BoxError(401, 'unauthorized', 'The access token provided has expired', null, {
        'WWW-Authenticate': 'Bearer realm="Service", error="invalid_token", error_description="The access token provided has expired."',
      });
    }
    return rec.userId;
  }

  addDeveloperToken(userId: string, token: string = secret()): string {
    this.store.user(userId);
    this.store.state.tokens[token] = { userId, kind: 'developer', expiresAtMs: null, revoked: false };
    this.store.markDirty();
    return token;
  }

  registerClient(clientId: string, clientSecret: string, redirectUris: readonly string[], userId: string): void {
    this.store.state.clients[clientId] = { clientId, clientSecret, redirectUris, userId };
    this.store.markDirty();
  }

  issueAuthCode(clientId: string, userId?: string, redirectUri?: string): string {
    const client = this.store.state.clients[clientId];
    if (!client) throw new Error(`box-server: no OAuth client ${clientId}; register it first`);
    const code = secret(16);
    this.store.state.authCodes[code] = {
      userId: userId ?? client.userId,
      clientId,
      redirectUri: redirectUri ?? null,
      expiresAtMs: this.store.now() + authCodeLifetimeMs,
      used: false,
    };
    this.store.markDirty();
    return code;
  }

  /** The token endpoint: form fields in, an AccessToken out, or an OAuthError. */
  grant(form: URLSearchParams): TokenPair {
    const clientId = form.get('client_id') ?? '';
    const client = this.store.state.clients[clientId];
    if (!client || client.clientSecret !== form.get('client_secret')) {
      throw new OAuthError(400, 'invalid_client', 'The client credentials are invalid');
    }
    const grantType = form.get('grant_type');
    switch (grantType) {
      case 'authorization_code': {
        const code = this.store.state.authCodes[form.get('code') ?? ''];
        if (!code || code.used || code.clientId !== clientId || code.expiresAtMs <= this.store.now()) {
          throw new OAuthError(400, 'invalid_grant', 'Auth code doesn\'t exist or is invalid for the client');
        }
        code.used = true;
        return this.newPair(code.userId, clientId);
      }
      case 'refresh_token': {
        const rt = this.store.state.refreshTokens[form.get('refresh_token') ?? ''];
        if (!rt || rt.used || rt.clientId !== clientId) throw new OAuthError(400, 'invalid_grant', 'Invalid refresh token');
        if (rt.expiresAtMs <= this.store.now()) throw new OAuthError(400, 'invalid_grant', 'Refresh token has expired');
        rt.used = true;
        return this.newPair(rt.userId, clientId);
      }
      default:
        throw new OAuthError(400, 'unsupported_grant_type', `Grant type ${grantType ?? '(none)'} is not supported; use authorization_code or refresh_token`);
    }
  }

  private newPair(userId: string, clientId: string): TokenPair {
    const access = secret();
    const refresh = secret(32);
    const now = this.store.now();
    this.store.state.tokens[access] = { userId, kind: 'oauth', expiresAtMs: now + this.accessTokenTtlSec * 1000, revoked: false };
    this.store.state.refreshTokens[refresh] = { userId, clientId, used: false, expiresAtMs: now + refreshLifetimeMs };
    this.store.markDirty();
    return {
      access_token: access,
      expires_in: this.accessTokenTtlSec,
      token_type: 'bearer',
      refresh_token: refresh,
      restricted_to: [],
      issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
    };
  }

  /** POST /oauth2/revoke: the access or refresh token stops working. */
  revoke(token: string): void {
    const t = this.store.state.tokens[token];
    if (t) t.revoked = true;
    const r = this.store.state.refreshTokens[token];
    if (r) r.used = true;
    this.store.markDirty();
  }

  expireAll(): void {
    const past = this.store.now() - 1;
    for (const t of Object.values(this.store.state.tokens)) t.expiresAtMs = past;
    this.store.markDirty();
  }

  revokeAll(userId?: string): void {
    for (const t of Object.values(this.store.state.tokens)) if (!userId || t.userId === userId) t.revoked = true;
    for (const r of Object.values(this.store.state.refreshTokens)) if (!userId || r.userId === userId) r.used = true;
    this.store.markDirty();
  }
}
