/**
 * Log in to box-server as `boxsync login` would, without a browser: register the OAuth client, trade an
 * authorization code at the token URL over HTTP, and store the pair with boxsync's own atomic 0600 writer.
 */
import type { BoxServer } from '../../src/box-server/index.js';
import { writeTokenFile, type Tokens } from '../../src/remote/box/token-file.js';

export const OAUTH_CLIENT = { clientId: 'cid', clientSecret: 'csecret' } as const;

export async function loginWithCode(srv: BoxServer, tokenFile: string, userId = '1'): Promise<Tokens> {
  srv.control.registerOAuthClient({ ...OAUTH_CLIENT });
  const code = srv.control.issueAuthCode(OAUTH_CLIENT.clientId, userId);
  const res = await fetch(srv.tokenUrl, {
    method: 'POST',
    body: new URLSearchParams({ grant_type: 'authorization_code', code, client_id: OAUTH_CLIENT.clientId, client_secret: OAUTH_CLIENT.clientSecret }),
  });
  if (res.status !== 200) throw new Error(`box-server refused the authorization code: ${res.status} ${await res.text()}`);
  const t = (await res.json()) as { access_token: string; refresh_token: string; expires_in: number };
  const tokens: Tokens = { accessToken: t.access_token, refreshToken: t.refresh_token, expiresAtMs: Date.now() + t.expires_in * 1000 };
  await writeTokenFile(tokenFile, tokens);
  return tokens;
}
