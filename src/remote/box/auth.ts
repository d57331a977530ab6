/**
 * Access tokens for the Box client: a fixed developer token, or OAuth2 with refresh.
 *
 * OAuth rules (Box refresh tokens are single-use and rotate on every refresh):
 * - at most one refresh runs at a time; callers that saw a 401 with the same token share it;
 * - the new pair is persisted (token store callback, or the atomic 0600 token file) BEFORE it is used;
 * - the token file may be shared with another boxsync process (`boxsync ls` while the daemon runs): before a
 *   refresh, and for a second after a refused one, a pair stored by that process is adopted instead;
 * - `invalid_grant` is fatal (`auth_revoked`) otherwise: the user must log in again.
 * A token about to expire (within `earlyRefreshMs`) is refreshed before the request instead of after a 401.
 */
import type { Got } from 'got';
import type { Logger } from '../../logger.js';
import type { Clock } from '../../ports/clock.js';
import { classify } from './classify.js';
import { remoteError } from './error-codes.js';
import { parseBoxJson } from './json.js';
import { fileTokenStore, type Tokens, type TokenStore } from './token-file.js';
import type { WireToken } from './wire-types.js';
import { backoffDelayMs, nominalDelayMs, sharedTokenPoll, tokenRetry } from '../../core/retry.js';
import type { RateLimiter } from './rate-limiter.js';
import { isSyncError } from '../../core/errors.js';

export type BoxAuthConfig =
  | { readonly developerToken: string }
  | {
      readonly clientId: string;
      readonly clientSecret: string;
      /** JSON file {accessToken, refreshToken, expiresAtMs}, written 0600. Ignored when tokenStore is given. */
      readonly tokenFile?: string;
      readonly tokenStore?: TokenStore;
    };

export interface BoxAuth {
  /** The token to send now (refreshing first if it is about to expire). */
  accessToken(): Promise<string>;
  /**
   * The server refused `usedToken` with a 401. Refresh (once, shared by concurrent callers) and return the new
   * token; throws `unauthorized` (fatal) when there is nothing to refresh with.
   */
  refreshAfter401(usedToken: string): Promise<string>;
  /** OAuth only: trade an authorization code for tokens and persist them. */
  exchangeCode(code: string, redirectUri?: string): Promise<Tokens>;
  /** How many refreshes have run (for status and tests). */
  readonly refreshCount: number;
}

export interface AuthDeps {
  readonly got: Got;
  readonly tokenUrl: string;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The account's pacer: a 429 from the token endpoint pauses it, and the request waits its turn there. */
  readonly limiter: RateLimiter;
  readonly earlyRefreshMs?: number;
}


export function createAuth(config: BoxAuthConfig, deps: AuthDeps): BoxAuth {
  if ('developerToken' in config) return developerTokenAuth(config.developerToken);
  return new OAuth(config, deps);
}

function developerTokenAuth(token: string): BoxAuth {
  return {
    accessToken: async () => token,
    refreshAfter401: async () => {
      throw remoteError('unauthorized', 'Box refused the developer token (they last 60 minutes)', {
        details: { hint: 'create a new developer token in the Box developer console' },
      });
    },
    exchangeCode: async () => {
      throw new Error('a developer token cannot exchange authorization codes; configure clientId and clientSecret');
    },
    refreshCount: 0,
  };
}

class OAuth implements BoxAuth {
  private tokens: Tokens | undefined;
  private inflight: Promise<Tokens> | undefined;
  private refreshes = 0;
  /** Lifetime of the last token Box issued (expires_in); Box's documented 60 minutes until we know better. */
  private lifetimeMs = 3_600_000;
  private readonly store: TokenStore;
  private readonly log: Logger;

  constructor(
    private readonly config: Extract<BoxAuthConfig, { clientId: string }>,
    private readonly deps: AuthDeps,
  ) {
    if (config.tokenStore) this.store = config.tokenStore;
    else if (config.tokenFile) this.store = fileTokenStore(config.tokenFile);
    else throw new Error('OAuth configuration needs tokenFile or tokenStore; nothing was changed');
    this.log = deps.logger.child({ component: 'box-auth' });
  }

  get refreshCount(): number {
    return this.refreshes;
  }

  async accessToken(): Promise<string> {
    const t = await this.current();
    // Refresh a little early, but never by more than a quarter of the token's lifetime (short-lived test tokens).
    const margin = Math.min(this.deps.earlyRefreshMs ?? 60_000, this.lifetimeMs / 4);
    if (t.expiresAtMs - margin <= this.deps.clock.now()) {
      return (await this.refresh(t.accessToken)).accessToken;
    }
    return t.accessToken;
  }

  async refreshAfter401(usedToken: string): Promise<string> {
    return (await this.refresh(usedToken)).accessToken;
  }

  async exchangeCode(code: string, redirectUri?: string): Promise<Tokens> {
    const form: Record<string, string> = {
      grant_type: 'authorization_code',
      code,
      client_id: this.config.clientId,
      client_secret: this.config.clientSecret,
    };
    if (redirectUri) form.redirect_uri = redirectUri;
    const t = await this.tokenRequest(form, 'authorization_code');
    await this.store.save(t);
    this.tokens = t;
    return t;
  }

  private async current(): Promise<Tokens> {
    if (this.inflight) return this.inflight;
    if (!this.tokens) {
      const loaded = await this.store.load();
      if (!loaded) throw remoteError('unauthorized', 'no Box tokens are stored yet', { details: { hint: 'run `boxsync login`' } });
      this.tokens ??= loaded;
    }
    return this.tokens;
  }

  /** Single flight: a caller whose token was already replaced gets the new one without a second refresh. */
  private async refresh(usedToken: string): Promise<Tokens> {
    if (this.inflight) return this.inflight;
    const t = await this.current();
    if (t.accessToken !== usedToken) return t;
    if (this.inflight) return this.inflight;
    this.inflight = (async () => {
      try {
        // Another process sharing the token file (`boxsync ls` while the daemon runs) may have rotated the pair:
        // then its refresh token is the live one, and ours is spent.
        const shared = await this.storedOtherThan(t);
        if (shared) return shared;
        let next: Tokens;
        try {
          next = await this.tokenRequest(
            {
              grant_type: 'refresh_token',
              refresh_token: t.refreshToken,
              client_id: this.config.clientId,
              client_secret: this.config.clientSecret,
            },
            'refresh_token',
          );
        } catch (e) {
          // Refused: maybe because that other process spent it a moment ago and is still writing its new pair.
          if (isSyncError(e) && e.code === 'auth_revoked') {
            for (let look = 1; look <= sharedTokenPoll.retries + 1; look++) {
              const written = await this.storedOtherThan(t);
              if (written) return written;
              await this.deps.clock.sleep(nominalDelayMs(sharedTokenPoll, look));
            }
          }
          throw e;
        }
        // Persist first: the old refresh token is already spent, so an unsaved pair would lock the user out.
        await this.store.save(next);
        this.tokens = next;
        this.refreshes += 1;
        this.log.info({ expiresAtMs: next.expiresAtMs }, 'refreshed the Box access token');
        return next;
      } finally {
        this.inflight = undefined;
      }
    })();
    return this.inflight;
  }

  /** The stored pair when it is not `t` (another process refreshed), now adopted; else undefined. */
  private async storedOtherThan(t: Tokens): Promise<Tokens | undefined> {
    const stored = await this.store.load().catch(() => undefined);
    if (!stored || stored.refreshToken === t.refreshToken) return undefined;
    this.tokens = stored;
    this.log.info({ expiresAtMs: stored.expiresAtMs }, 'another boxsync process refreshed the Box token; using the pair it stored');
    return stored;
  }

  private async tokenRequest(form: Record<string, string>, grant: string): Promise<Tokens> {
    const what = `POST ${new URL(this.deps.tokenUrl).pathname} (${grant})`;
    for (let attempt = 1; ; attempt++) {
      let res;
      try {
        res = await this.deps.got.post(this.deps.tokenUrl, { form, throwHttpErrors: false, followRedirect: false, retry: { limit: 0 } });
      } catch (e) {
        const err = e as NodeJS.ErrnoException;
        throw classify({ what, networkError: { ...(err.code === undefined ? {} : { code: err.code }), message: err.message } });
      }
      const body = parseBoxJson(res.body) as Partial<WireToken> | undefined;
      if (res.statusCode === 200 && body?.access_token) {
        const refreshToken = body.refresh_token ?? form.refresh_token;
        if (!refreshToken) throw remoteError('unauthorized', `${what}: Box returned no refresh token`);
        this.lifetimeMs = (body.expires_in ?? 3600) * 1000;
        return {
          accessToken: body.access_token,
          refreshToken,
          expiresAtMs: this.deps.clock.now() + this.lifetimeMs,
        };
      }
      const err = classify({ what, status: res.statusCode, body, headers: res.headers, nowMs: this.deps.clock.now() });
      // A 429 means the grant was not consumed. After a 5xx it may have been; asking again then costs nothing
      // worse than the invalid_grant we would be stuck with anyway.
      if (err.disposition === 'retry' && attempt <= tokenRetry.retries) {
        const waitMs = backoffDelayMs({ policy: tokenRetry, attempt, random: Math.random(), retryAfterMs: err.retryAfterMs });
        if (err.code === 'rate_limited') {
          // The pacer owns 429s: it pauses every lane, and this request waits its turn with the others.
          this.deps.limiter.pauseUntil(this.deps.clock.now() + waitMs);
          await this.deps.limiter.run('calls', async () => undefined);
        } else {
          await this.deps.clock.sleep(waitMs);
        }
        continue;
      }
      if (err.code === 'auth_revoked' || res.statusCode === 401) {
        throw remoteError('auth_revoked', `${what}: Box refused the stored authorization (${String((body as { error?: string } | undefined)?.error ?? res.statusCode)})`, {
          details: { status: res.statusCode, hint: 'run `boxsync login` again' },
        });
      }
      throw err;
    }
  }
}
