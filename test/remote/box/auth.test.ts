import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BoxServer } from '../../../src/box-server/index.js';
import { asRemoteId } from '../../../src/core/model.js';
import { createLogger } from '../../../src/logger.js';
import { systemClock } from '../../../src/ports/clock.js';
import type { Tokens, TokenStore } from '../../../src/remote/box/token-file.js';
import { makeTempDir } from '../../support/tmp.js';
import { tempFileAt } from '../../support/temp-file.js';
import { waitFor } from '../../support/wait.js';
import { adapterFor, startServer, syncFailure } from './harness.js';

const clientId = 'cid';
const clientSecret = 'csecret';

async function failure(p: Promise<unknown>): Promise<{ code: string; disposition: string; message: string }> {
  const e = await syncFailure(p);
  return { code: e.code, disposition: e.disposition, message: e.message };
}

describe('Box auth', () => {
  let server: BoxServer;
  let tmp: { dir: string; cleanup: () => Promise<void> };

  beforeAll(async () => {
    server = await startServer();
    server.control.registerOAuthClient({ clientId, clientSecret });
    tmp = await makeTempDir('boxsync-auth-');
  });
  afterAll(async () => {
    await server.close();
    await tmp.cleanup();
  });

  async function loggedIn(tokenFile: string, logSink?: PassThrough) {
    const a = adapterFor(server, {
      auth: { clientId, clientSecret, tokenFile },
      ...(logSink ? { logger: createLogger({ level: 'debug', destination: logSink }) } : {}),
    });
    const code = server.control.issueAuthCode(clientId);
    const tokens = await a.auth.exchangeCode(code);
    return { adapter: a, tokens };
  }

  it('exchanges an authorization code and stores the pair in a 0600 file', async () => {
    const file = join(tmp.dir, 'tokens-code.json');
    const { tokens, adapter } = await loggedIn(file);
    const saved = JSON.parse(await readFile(file, 'utf8')) as Tokens;
    expect(saved).toEqual(tokens);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await adapter.store.account()).userId).toBe('1');
  });

  it('refreshes an expired token exactly once under concurrent calls and persists the rotated refresh token', async () => {
    const file = join(tmp.dir, 'tokens-refresh.json');
    const sink = new PassThrough();
    let logText = '';
    sink.on('data', (d: Buffer) => (logText += d.toString()));
    const { adapter, tokens } = await loggedIn(file, sink);
    server.control.expireAllTokens();
    server.control.clearRequests();
    const results = await Promise.all(Array.from({ length: 6 }, () => adapter.store.getItem(asRemoteId('0'), 'folder')));
    expect(results.every((r) => r?.id === '0')).toBe(true);
    const tokenCalls = server.control.requests().filter((r) => r.path.endsWith('/oauth2/token'));
    expect(tokenCalls).toHaveLength(1);
    expect(adapter.auth.refreshCount).toBe(1);
    const saved = JSON.parse(await readFile(file, 'utf8')) as Tokens;
    expect(saved.refreshToken).not.toBe(tokens.refreshToken);
    expect(saved.accessToken).not.toBe(tokens.accessToken);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    // The old refresh token is spent: a second client that still holds it is told to log in again.
    const stale = join(tmp.dir, 'tokens-stale.json');
    await writeFile(stale, JSON.stringify({ ...tokens, expiresAtMs: 0 }), { mode: 0o600 });
    const other = adapterFor(server, { auth: { clientId, clientSecret, tokenFile: stale } });
    const f = await failure(other.store.account());
    expect(f).toMatchObject({ code: 'auth_revoked', disposition: 'fatal' });
    expect(f.message).toMatch(/boxsync login/);
    // Tokens never reach the log, even at debug level.
    expect(logText).toContain('refreshed the Box access token');
    for (const secret of [tokens.accessToken, tokens.refreshToken, saved.accessToken, saved.refreshToken, clientSecret]) {
      expect(logText).not.toContain(secret);
    }
  });

  it('shares a token file with another process: a pair it rotated is adopted, before a refresh and just after a refused one', async () => {
    const file = join(tmp.dir, 'tokens-shared.json');
    // The daemon and `boxsync ls` with one token file: both logged in with the same pair.
    const { adapter: daemon, tokens: first } = await loggedIn(file);
    const ls = adapterFor(server, { auth: { clientId, clientSecret, tokenFile: file } });
    await ls.store.account();
    await daemon.store.account();
    server.control.expireAllTokens();
    await ls.store.account();
    expect(ls.auth.refreshCount).toBe(1);
    const rotated = JSON.parse(await readFile(file, 'utf8')) as Tokens;
    expect(rotated.refreshToken).not.toBe(first.refreshToken);
    // The daemon still holds the spent pair in memory: it takes the stored one instead of spending it again.
    server.control.clearRequests();
    expect((await daemon.store.account()).userId).toBe('1');
    expect(daemon.auth.refreshCount).toBe(0);
    expect(server.control.requests().map((r) => `${r.path} ${r.status}`)).toEqual(['/2.0/users/me 401', '/2.0/users/me 200']);

    // The other process spent the refresh token but writes its new pair only after ours was refused.
    const seed = await loggedIn(join(tmp.dir, 'tokens-shared-seed.json'));
    let stored: Tokens = { ...seed.tokens, expiresAtMs: 0 };
    let loads = 0;
    const load = async (): Promise<Tokens> => {
      loads += 1;
      return stored;
    };
    const late = adapterFor(server, { auth: { clientId, clientSecret, tokenStore: { load, save: async (t) => void (stored = t) } } });
    const spent = await fetch(server.tokenUrl, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: seed.tokens.refreshToken, client_id: clientId, client_secret: clientSecret }),
    });
    const theirs = (await spent.json()) as { access_token: string; refresh_token: string };
    server.control.failNext({
      method: 'POST',
      path: '/oauth2/token',
      transform: (body) => {
        // Ours is refused (invalid_grant); their pair lands on disk a moment later.
        setTimeout(() => (stored = { accessToken: theirs.access_token, refreshToken: theirs.refresh_token, expiresAtMs: Date.now() + 3_600_000 }), 50);
        return body;
      },
    });
    expect((await late.store.account()).userId).toBe('1');
    expect(loads).toBeGreaterThan(2);
    expect(late.auth.refreshCount).toBe(0);
    // With nothing else stored, a refused grant stays fatal: 'reports a revoked grant as a fatal error…'.
  });

  it('hands rotated tokens to a token store callback before using them', async () => {
    const saves: Tokens[] = [];
    const events: string[] = [];
    const seed = await loggedIn(join(tmp.dir, 'tokens-seed.json'));
    let current: Tokens | undefined = { ...seed.tokens, expiresAtMs: 0 };
    const store: TokenStore = {
      load: async () => current,
      save: async (t) => {
        events.push(`save ${server.control.requests().length}`);
        saves.push(t);
        current = t;
      },
    };
    const a = adapterFor(server, { auth: { clientId, clientSecret, tokenStore: store } });
    server.control.clearRequests();
    await a.store.account();
    expect(saves).toHaveLength(1);
    expect(saves[0]!.refreshToken).not.toBe(seed.tokens.refreshToken);
    // Saved after the token call and before the API call that used the new token.
    const reqs = server.control.requests();
    expect(reqs.map((r) => r.path)).toEqual(['/oauth2/token', '/2.0/users/me']);
    expect(events).toEqual(['save 1']);
  });

  it('leaves a 429 from the token endpoint to the pacer: every call waits out its Retry-After, then the refresh succeeds', async () => {
    const { adapter } = await loggedIn(join(tmp.dir, 'tokens-429.json'));
    server.control.expireAllTokens();
    server.control.failNext({ method: 'POST', path: '/oauth2/token', status: 429, retryAfterSec: 1 });
    server.control.clearRequests();
    const first = adapter.store.account();
    await waitFor(() => adapter.pausedUntilMs() > 0, { what: 'the pacer to pause after the token endpoint refused with 429' });
    expect((await first).userId).toBe('1');
    const tokenCalls = server.control.requests().filter((r) => r.path === '/oauth2/token');
    expect(tokenCalls.map((c) => c.status)).toEqual([429, 200]);
    expect(tokenCalls[1]!.atMs - tokenCalls[0]!.atMs).toBeGreaterThanOrEqual(1000);
    expect(adapter.auth.refreshCount).toBe(1);
  });

  it('refreshes shortly before expiry instead of waiting for a 401', async () => {
    let offsetMs = 0;
    const clock = { now: () => Date.now() + offsetMs, sleep: systemClock.sleep };
    const file = join(tmp.dir, 'tokens-early.json');
    const a = adapterFor(server, { auth: { clientId, clientSecret, tokenFile: file }, clock });
    const tokens = await a.auth.exchangeCode(server.control.issueAuthCode(clientId));
    await a.store.account();
    expect(a.auth.refreshCount).toBe(0);
    offsetMs = tokens.expiresAtMs - Date.now() - 30_000;
    server.control.clearRequests();
    await a.store.account();
    expect(a.auth.refreshCount).toBe(1);
    expect(server.control.requests().map((r) => `${r.path} ${r.status}`)).toEqual(['/oauth2/token 200', '/2.0/users/me 200']);
  });

  it('reports a revoked grant as a fatal error that says to log in again', async () => {
    const { adapter } = await loggedIn(join(tmp.dir, 'tokens-revoked.json'));
    server.control.revokeAll();
    const f = await failure(adapter.store.account());
    expect(f.disposition).toBe('fatal');
    expect(['auth_revoked', 'unauthorized']).toContain(f.code);
    expect(f.message).toMatch(/boxsync login/);
  });

  it('treats a refused developer token as fatal', async () => {
    const a = adapterFor(server, { auth: { developerToken: 'not-a-token' } });
    expect(await failure(a.store.account())).toMatchObject({ code: 'unauthorized', disposition: 'fatal' });
  });

  it('acts as another user with As-User (admin setups)', async () => {
    const admin = server.control.addUser({ enterpriseAdmin: true });
    const member = server.control.addUser({ name: 'Member' });
    const a = adapterFor(server, { auth: { developerToken: admin.token }, asUser: member.userId });
    expect((await a.store.account()).userId).toBe(member.userId);
    const plain = adapterFor(server, { auth: { developerToken: admin.token } });
    expect((await plain.store.account()).userId).toBe(admin.userId);
  });

  it('reads another user\'s folder through a shared link (BoxApi header), never logging the password or the token', async () => {
    const owner = server.control.addUser({ name: 'Owner' });
    const ownerAdapter = adapterFor(server, { auth: { developerToken: owner.token } });
    const shared = await ownerAdapter.store.createFolder(asRemoteId('0'), 'Shared');
    const file = server.control.as(owner.userId).uploadFile(shared.id, 'inside.txt', 'shared content');
    const link = await ownerAdapter.actions.createSharedLink(shared.id, 'folder', { access: 'open', password: 'link-password-42' });

    const reader = server.control.addUser({ name: 'Reader' });
    const sink = new PassThrough();
    let logText = '';
    sink.on('data', (d: Buffer) => (logText += d.toString()));
    const mirror = adapterFor(server, {
      auth: { developerToken: reader.token },
      sharedLink: { url: link.url, password: 'link-password-42' },
      logger: createLogger({ level: 'debug', destination: sink }),
    });
    server.control.clearRequests();
    const names: string[] = [];
    for await (const page of mirror.store.listFolder(shared.id)) names.push(...page.entries.map((e) => e.name));
    expect(names).toEqual(['inside.txt']);
    const dest = join(tmp.dir, 'shared-download.txt');
    await mirror.store.download({ id: asRemoteId(file.id), destFile: await tempFileAt(dest), expectSha1: file.sha1 });
    expect(await readFile(dest, 'utf8')).toBe('shared content');
    const r = server.control.requests().find((x) => x.path === `/2.0/folders/${shared.id}/items`);
    expect(r?.headers.boxapi).toBe(`shared_link=${link.url}&shared_link_password=link-password-42`);
    // A wrong password is refused: the header is really checked.
    const wrong = adapterFor(server, { auth: { developerToken: reader.token }, sharedLink: { url: link.url, password: 'nope' } });
    await expect(wrong.store.getItem(shared.id, 'folder')).rejects.toMatchObject({ code: 'forbidden', disposition: 'skip' });
    expect(logText).toContain('box call');
    expect(logText).not.toContain('link-password-42');
    expect(logText).not.toContain(reader.token);
  });
});
