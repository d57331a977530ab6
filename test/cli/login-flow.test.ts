/**
 * `boxsync login` as a real child process against box-server's authorize page: the test plays the browser.
 */
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startBoxServer, type BoxServer } from '../../src/box-server/index.js';
import { spawnCli } from '../support/cli.js';
import { freePort } from '../support/net.js';
import { makeTempDir } from '../support/tmp.js';
import { waitFor } from '../support/wait.js';


describe('boxsync login', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let srv: BoxServer;

  beforeEach(async () => {
    ({ dir, cleanup } = await makeTempDir('boxsync-login-'));
    srv = await startBoxServer({ port: 0, tokens: ['T'], sample: false });
  });
  afterEach(async () => {
    await srv.close();
    await cleanup();
  });

  async function writeConfig(tokenFile: string): Promise<string> {
    const file = join(dir, 'config.json');
    await writeFile(
      file,
      JSON.stringify({
        remote: { apiUrl: srv.apiUrl, uploadUrl: srv.uploadUrl, tokenUrl: srv.tokenUrl, authorizeUrl: srv.authorizeUrl },
        auth: { clientId: 'cid', clientSecret: 'csecret', tokenFile },
        folders: [{ remoteId: '0', localPath: join(dir, 'Box') }],
        stateDir: join(dir, 'state'),
      }),
    );
    return file;
  }

  function startLogin(args: string[]): { out: () => string; done: Promise<number | null>; paste: (line: string) => void } {
    const child = spawnCli(['login', '--no-browser', ...args], { stdin: 'pipe' });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const done = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    return { out: () => out, done, paste: (line) => void child.stdin!.write(`${line}\n`) };
  }

  it('prints the authorize URL, receives the code on the loopback redirect and stores working tokens at 0600', async () => {
    const port = await freePort();
    const redirectUri = `http://127.0.0.1:${port}/`;
    srv.control.registerOAuthClient({ clientId: 'cid', clientSecret: 'csecret', redirectUris: [redirectUri] });
    const tokenFile = join(dir, 'secrets', 'tokens.json');
    const config = await writeConfig(tokenFile);

    const login = startLogin(['--config', config, '--port', String(port)]);
    const url = await waitFor(() => /^(http:\/\/\S+\/api\/oauth2\/authorize\?\S+)$/m.exec(login.out())?.[1], { what: 'the authorize URL', timeoutMs: 20_000 });
    const parsed = new URL(url);
    expect(parsed.searchParams.get('client_id')).toBe('cid');
    expect(parsed.searchParams.get('redirect_uri')).toBe(redirectUri);
    expect(parsed.searchParams.get('response_type')).toBe('code');
    const state = parsed.searchParams.get('state')!;
    expect(state).toMatch(/^[0-9a-f]{32}$/);

    // A stray answer with the wrong state is refused and the login keeps waiting.
    const stray = await fetch(`${redirectUri}?code=stolen&state=wrong`);
    expect(stray.status).toBe(400);

    // The browser: box-server's authorize page grants and redirects to the loopback server with code and state.
    const grant = await fetch(`${url}&approve=1`, { redirect: 'manual' });
    expect(grant.status).toBe(302);
    const back = new URL(grant.headers.get('location')!);
    expect(back.searchParams.get('state')).toBe(state);
    const landing = await fetch(back);
    expect(landing.status).toBe(200);
    expect(await landing.text()).toMatch(/authorized/);

    expect(await login.done).toBe(0);
    expect(login.out()).toMatch(/logged in as .+; tokens stored in .*tokens\.json \(mode 600\)/);
    expect((await stat(tokenFile)).mode & 0o777).toBe(0o600);
    const tokens = JSON.parse(await readFile(tokenFile, 'utf8')) as { accessToken: string; refreshToken: string; expiresAtMs: number };
    expect(tokens.refreshToken.length).toBeGreaterThan(10);
    const me = await fetch(`${srv.apiUrl}/users/me`, { headers: { Authorization: `Bearer ${tokens.accessToken}` } });
    expect(me.status).toBe(200);
    expect(login.out()).not.toContain(tokens.accessToken);
  });

  it('headless: the address the browser was sent to, pasted here, completes the login (a wrong one is explained)', async () => {
    const port = await freePort();
    const redirectUri = `http://127.0.0.1:${port}/`;
    srv.control.registerOAuthClient({ clientId: 'cid', clientSecret: 'csecret', redirectUris: [redirectUri] });
    const tokenFile = join(dir, 'tokens.json');
    const config = await writeConfig(tokenFile);
    const login = startLogin(['--config', config, '--port', String(port), '--headless']);
    // The instructions arrive in more than one write: wait for their last line, not only for the URL.
    await waitFor(() => /copy the whole address, or just the code, and paste it here/.test(login.out()), { what: 'the paste instructions', timeoutMs: 20_000 });
    const url = /^(http:\/\/\S+\/api\/oauth2\/authorize\?\S+)$/m.exec(login.out())?.[1];
    expect(url).toBeDefined();
    // The browser, on another machine: it is sent to the loopback address, which it cannot reach.
    const grant = await fetch(`${url}&approve=1`, { redirect: 'manual' });
    const back = grant.headers.get('location')!;
    login.paste(back.replace(/state=[0-9a-f]+/, 'state=not-this-login'));
    await waitFor(() => /belongs to another login/.test(login.out()), { what: 'the refusal of a foreign state', timeoutMs: 20_000 });
    login.paste(back);
    expect(await login.done).toBe(0);
    expect(login.out()).toMatch(/logged in as .+; tokens stored in .*tokens\.json \(mode 600\)/);
    const tokens = JSON.parse(await readFile(tokenFile, 'utf8')) as { accessToken: string };
    expect((await fetch(`${srv.apiUrl}/users/me`, { headers: { Authorization: `Bearer ${tokens.accessToken}` } })).status).toBe(200);
  });

  it('stops with a clear message and stores nothing when Box refuses', async () => {
    const port = await freePort();
    srv.control.registerOAuthClient({ clientId: 'cid', clientSecret: 'csecret', redirectUris: [] });
    const tokenFile = join(dir, 'tokens.json');
    const config = await writeConfig(tokenFile);
    const login = startLogin(['--config', config, '--port', String(port)]);
    const url = await waitFor(() => /state=([0-9a-f]{32})/.exec(login.out())?.[1], { what: 'the authorize URL', timeoutMs: 20_000 });
    await fetch(`http://127.0.0.1:${port}/?error=access_denied&error_description=The+user+denied+access&state=${url}`);
    expect(await login.done).toBe(2);
    expect(login.out()).toMatch(/Box refused the authorization: access_denied \(The user denied access\); nothing was stored/);
    await expect(stat(tokenFile)).rejects.toThrow(/ENOENT/);
  });

  it('says what is wrong with a config it cannot read', async () => {
    const login = startLogin(['--config', join(dir, 'missing.json'), '--port', '0']);
    expect(await login.done).toBe(2);
    expect(login.out()).toMatch(/^boxsync login: config error in .*missing\.json.*file not found/m);
  });

  it('refuses a developer-token config with a clear message', async () => {
    const file = join(dir, 'dev.json');
    await writeFile(file, JSON.stringify({ auth: { developerToken: 'T' }, folders: [{ remoteId: '0', localPath: join(dir, 'Box') }], stateDir: join(dir, 'state') }));
    const login = startLogin(['--config', file, '--port', '0']);
    expect(await login.done).toBe(2);
    expect(login.out()).toMatch(/developer token, which needs no login/);
  });
});
