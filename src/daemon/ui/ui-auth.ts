/**
 * Who may use the daemon's web page: one-time login links (handed out over the control socket to `boxsync ui`,
 * so only the user who can reach the 0600 socket gets one) and the browser sessions they open.
 *
 * A login token works once and for LOGIN_TTL_MS; it is exchanged for a session id that lives only in an
 * HttpOnly, SameSite=Strict cookie. Neither is ever logged. Both sets are bounded: the oldest entry goes first.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';

/** How long a login link from `boxsync ui` can be opened. */
export const LOGIN_TTL_MS = 2 * 60 * 1000;
/** How long a browser session lasts without a new login (a restart of the daemon ends every session too). */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
const MAX_PENDING_LOGINS = 16;
const MAX_SESSIONS = 32;

export class UiAuth {
  private readonly logins = new Map<string, number>();
  private readonly sessions = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  /** A fresh one-time login token. */
  issueLogin(): string {
    const token = randomBytes(32).toString('base64url');
    this.logins.set(token, this.now() + LOGIN_TTL_MS);
    trim(this.logins, MAX_PENDING_LOGINS);
    return token;
  }

  /** Use a login token (once): a new session id, or null when the token is unknown, used or expired. */
  redeem(token: string): string | null {
    let found: string | null = null;
    for (const t of this.logins.keys()) if (sameText(t, token)) found = t;
    if (found === null) return null;
    const expires = this.logins.get(found)!;
    this.logins.delete(found);
    if (expires < this.now()) return null;
    const session = randomBytes(32).toString('base64url');
    this.sessions.set(session, this.now() + SESSION_TTL_MS);
    trim(this.sessions, MAX_SESSIONS);
    return session;
  }

  validSession(id: string | undefined): boolean {
    if (id === undefined || id === '') return false;
    for (const [s, expires] of this.sessions) {
      if (!sameText(s, id)) continue;
      if (expires >= this.now()) return true;
      this.sessions.delete(s);
      return false;
    }
    return false;
  }
}

function trim(m: Map<string, number>, max: number): void {
  while (m.size > max) {
    const oldest = m.keys().next().value;
    if (oldest === undefined) return;
    m.delete(oldest);
  }
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
