/**
 * What the SDK suite's client factory reads: the box-server this test file runs against (started by
 * setup.ts) and the developer tokens of its users. Kept free of SDK imports so it type-checks with the repo.
 */
export interface SuiteUser {
  readonly userId: string;
  readonly token: string;
}

export interface SuiteServer {
  readonly baseUrl: string;
  /** The SDK's BaseUrls: API at baseUrl + /2.0, uploads at uploadUrl + /2.0, OAuth at oauth2Url. */
  readonly baseUrls: { readonly baseUrl: string; readonly uploadUrl: string; readonly oauth2Url: string };
  /** Agent options that make the SDK trust box-server's test certificate (box-server serves HTTPS, as Box does). */
  readonly agentOptions: { readonly ca: string };
  /** The default client's user: an enterprise admin, like the SDK's own test service account. */
  readonly admin: SuiteUser;
  /** A second, ordinary user (the suite's USER_ID, for getDefaultClientWithUserSubject). */
  readonly other: SuiteUser;
}

const KEY = Symbol.for('boxsync.sdkSuite.server');

export function setSuiteServer(s: SuiteServer | undefined): void {
  (globalThis as Record<symbol, unknown>)[KEY] = s;
}

export function suiteServer(): SuiteServer {
  const s = (globalThis as Record<symbol, unknown>)[KEY] as SuiteServer | undefined;
  if (!s) throw new Error('sdk-suite: box-server is not running (test/sdk-suite/setup.ts did not run)');
  return s;
}

/** The token for a user id the suite created; anything else is an error (the suite only knows its own users). */
export function tokenForUser(userId: string): string {
  const s = suiteServer();
  for (const u of [s.admin, s.other]) if (u.userId === userId) return u.token;
  throw new Error(`sdk-suite: no developer token for user ${userId}`);
}
