/** The web page's login links and sessions on a manual clock (ui-auth.ts): once, within their lifetime, bounded. */
import { expect, it } from 'vitest';
import { LOGIN_TTL_MS, SESSION_TTL_MS, UiAuth } from '../../../src/daemon/ui/ui-auth.js';

it('a login link works once and only within its lifetime; a session ends after its own', () => {
  let now = 1_000_000;
  const auth = new UiAuth(() => now);
  const a = auth.issueLogin();
  const b = auth.issueLogin();
  expect(a).not.toBe(b);
  const session = auth.redeem(a);
  expect(session).not.toBeNull();
  expect(auth.redeem(a)).toBeNull();
  expect(auth.validSession(session!)).toBe(true);
  expect(auth.validSession(`${session!}x`)).toBe(false);
  expect(auth.validSession(undefined)).toBe(false);
  expect(auth.validSession('')).toBe(false);
  now += LOGIN_TTL_MS + 1;
  expect(auth.redeem(b)).toBeNull();
  now += SESSION_TTL_MS;
  expect(auth.validSession(session!)).toBe(false);
});

it('keeps at most 16 pending links: the oldest stops working first', () => {
  const auth = new UiAuth(() => 0);
  const links = Array.from({ length: 17 }, () => auth.issueLogin());
  expect(auth.redeem(links[0]!)).toBeNull();
  expect(auth.redeem(links[16]!)).not.toBeNull();
  expect(auth.redeem(links[1]!)).not.toBeNull();
});
