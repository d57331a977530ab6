/**
 * Setup in one command (issue 15): `boxsync init` (developer token; OAuth with a headless login), `boxsync ls`
 * and `boxsync config path|show|check`, as real child processes against box-server on port 0.
 */
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startBoxServer, type BoxServer } from '../../src/box-server/index.js';
import { writeBoxConfig } from '../support/box-config.js';
import { runCli, spawnCli } from '../support/cli.js';
import { freePort } from '../support/net.js';
import { makeTempDir } from '../support/tmp.js';
import { waitFor } from '../support/wait.js';

const TOKEN = 'init-secret-developer-token';


describe('boxsync init, ls and config', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let srv: BoxServer;
  let reportsId: string;

  beforeEach(async () => {
    ({ dir, cleanup } = await makeTempDir('boxsync-init-'));
    srv = await startBoxServer({ port: 0, tokens: [TOKEN] });
    const web = srv.control.as('1');
    const work = web.createFolder('0', 'Work');
    reportsId = web.createFolder(work.id, 'Reports').id;
    web.uploadFile(reportsId, 'q3.txt', Buffer.from('third quarter'));
  });
  afterEach(async () => {
    await srv.close();
    await cleanup();
  });

  it('init with a developer token finds the folder by path, writes a 0600 config that syncs; ls and config work on it', async () => {
    const file = join(dir, 'cfg', 'config.json');
    const local = join(dir, 'Reports');
    const args = ['init', '--config', file, '--developer-token', TOKEN, '--api-url', srv.apiUrl, '--box-path', '/work/REPORTS', '--local', local, '--state-dir', join(dir, 'state')];
    const r = await runCli(args);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/logged in as /);
    expect(r.stdout).toContain(`Box /Work/Reports (folder ${reportsId}) <-> ${local}`);
    expect(r.stdout).toMatch(/next: `boxsync sync --once`.*`boxsync service install`/);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const written = JSON.parse(await readFile(file, 'utf8')) as { folders: { remoteId: string; localPath: string }[] };
    expect(written.folders).toEqual([{ remoteId: reportsId, localPath: local }]);

    const again = await runCli(args);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/exists already .*--force.*nothing was written/);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual(written);

    const sync = await runCli(['sync', '--once', '--config', file]);
    expect(sync.code, sync.stderr).toBe(0);
    expect(await readFile(join(local, 'q3.txt'), 'utf8')).toBe('third quarter');

    const top = await runCli(['ls', '--config', file]);
    expect(top.code, top.stderr).toBe(0);
    expect(top.stdout).toMatch(/\s\d+ {2}Work\/\n/);
    const work = await runCli(['ls', '/Work', '--json', '--config', file]);
    expect(JSON.parse(work.stdout)).toMatchObject({ path: '/Work', entries: [{ id: reportsId, name: 'Reports', kind: 'folder' }] });
    const all = await runCli(['ls', '/Work/Reports', '--all', '--config', file]);
    expect(all.stdout).toMatch(/q3\.txt/);
    const none = await runCli(['ls', '/Nope', '--config', file]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/there is no folder "Nope" in the top of your Box account \(folders there: Work\)/);

    expect((await runCli(['config', 'path', '--config', file])).stdout.trim()).toBe(file);
    const show = await runCli(['config', 'show', '--config', file]);
    expect(show.code).toBe(0);
    expect(show.stdout).not.toContain(TOKEN);
    expect(JSON.parse(show.stdout)).toMatchObject({ auth: { developerToken: '[REDACTED]' }, folders: [{ remoteId: reportsId }], daemon: { notifications: true } });
    const check = await runCli(['config', 'check', '--config', file]);
    expect(check.code, check.stdout + check.stderr).toBe(0);
    expect(check.stdout).toMatch(/Box folder \d+ "Reports" <-> /);
    srv.control.revokeAll('1');
    const broken = await runCli(['config', 'check', '--config', file]);
    expect(broken.code).toBe(2);
    expect(broken.stdout).toMatch(/PROBLEM cannot use the account/);
    expect(broken.stdout + broken.stderr).not.toContain(TOKEN);
  }, 240_000); // Twelve CLI processes one after another: minutes on a loaded CI machine (one timed out at 60 s there).

  it('init --api-url takes box-server\'s printed URL (it adds /2.0); a URL that is not the API says so, not "item gone"', async () => {
    const args = (apiUrl: string, name: string): string[] =>
      ['init', '--config', join(dir, `${name}.json`), '--developer-token', TOKEN, '--api-url', apiUrl, '--box-path', '/Work', '--local', join(dir, name), '--state-dir', join(dir, `st-${name}`)];
    // srv.baseUrl is what `boxsync server` prints: http://127.0.0.1:PORT, no path.
    expect(new URL(srv.baseUrl).pathname).toBe('/');
    for (const bare of [srv.baseUrl, `${srv.baseUrl}/`]) {
      const name = bare.endsWith('/') ? 'slash' : 'bare';
      const r = await runCli(args(bare, name));
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/logged in as /);
      const written = JSON.parse(await readFile(join(dir, `${name}.json`), 'utf8')) as { remote: Record<string, string> };
      expect(written.remote).toEqual({ apiUrl: srv.apiUrl, uploadUrl: srv.uploadUrl, tokenUrl: srv.tokenUrl, authorizeUrl: srv.authorizeUrl });
    }

    const wrong = await runCli(args(`${srv.baseUrl}/v2`, 'wrong'));
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain(`boxsync init: ${srv.baseUrl}/v2 is not a Box API base URL: GET ${srv.baseUrl}/v2/users/me answered 404 (No such endpoint: GET /v2/users/me)`);
    expect(wrong.stderr).toMatch(/Check the API URL \(config remote\.apiUrl, or `boxsync init --api-url`\).*nothing was written/);
    expect(wrong.stderr).not.toMatch(/item is gone/);
    await expect(stat(join(dir, 'wrong.json'))).rejects.toThrow(/ENOENT/);

    const notUrl = await runCli(args('127.0.0.1 port 8080', 'noturl'));
    expect(notUrl.code).toBe(2);
    expect(notUrl.stderr).toMatch(/--api-url: "127\.0\.0\.1 port 8080" is not a URL .*nothing was written/);
  });

  it('config check reports every problem of every folder, in order, and exits 2', async () => {
    const file = join(dir, 'two.json');
    const notAFolder = join(dir, 'a-file');
    await writeFile(notAFolder, 'x');
    await writeBoxConfig(file, {
      srv,
      token: TOKEN,
      remoteId: reportsId,
      localPath: notAFolder,
      stateDir: join(dir, 'state'),
      socketPath: join(dir, 'c.sock'),
      extra: {
        folders: [
          { remoteId: reportsId, localPath: notAFolder },
          { remoteId: '987654321', localPath: join(dir, 'Second') },
        ],
      },
    });
    const r = await runCli(['config', 'check', '--config', file]);
    expect(r.code, r.stdout + r.stderr).toBe(2);
    const lines = r.stdout.trim().split('\n');
    expect(lines.slice(2)).toEqual([
      `Box folder ${reportsId} "Reports" <-> ${notAFolder}`,
      `PROBLEM ${notAFolder} exists and is not a folder`,
      // The first folder's problem does not stop the second from being looked up on Box.
      `PROBLEM Box folder 987654321 (for ${join(dir, 'Second')}) does not exist or this account cannot see it`,
      `${join(dir, 'Second')} does not exist yet: the first sync creates it`,
    ]);
    expect(r.stderr).toBe('boxsync config check: 2 problems (above)\n');
  });

  it('init writes the config once, at the end: during the login the old one is untouched, and a failed init leaves nothing', async () => {
    const port = await freePort();
    srv.control.registerOAuthClient({ clientId: 'cid', clientSecret: 'csecret', redirectUris: [`http://127.0.0.1:${port}/`] });
    const file = join(dir, 'keep', 'config.json');
    await mkdir(dirname(file));
    const original = '{ "mine": "the config from before" }\n';
    await writeFile(file, original, { mode: 0o600 });
    const child = spawnCli(['init', '--force', '--config', file, '--client-id', 'cid', '--client-secret', 'csecret', '--api-url', srv.apiUrl, '--box-path', '/Work', '--local', join(dir, 'W'), '--state-dir', join(dir, 'st'), '--port', String(port), '--headless'], { stdin: 'pipe' });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const done = new Promise<number | null>((r) => child.on('close', (c) => r(c)));
    const state = await waitFor(() => /state=([0-9a-f]{32})/.exec(out)?.[1], { what: 'the authorize URL', timeoutMs: 30_000 });
    // While the login waits for the browser, no draft stands in for the config and none is set aside.
    expect(await readFile(file, 'utf8')).toBe(original);
    expect(await readdir(dirname(file))).toEqual(['config.json']);
    await fetch(`http://127.0.0.1:${port}/?error=access_denied&state=${state}`);
    expect(await done, out).toBe(2);
    expect(out).toMatch(/boxsync init: the login did not complete; nothing was written/);
    expect(await readFile(file, 'utf8')).toBe(original);
    expect(await readdir(dirname(file))).toEqual(['config.json']);

    // A fresh init that fails (no such Box folder) creates neither the file nor its folder.
    const fresh = join(dir, 'fresh', 'config.json');
    const r = await runCli(['init', '--config', fresh, '--developer-token', TOKEN, '--api-url', srv.apiUrl, '--box-path', '/Nope', '--local', join(dir, 'N'), '--state-dir', join(dir, 'st2')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/there is no folder "Nope".*nothing was written/);
    await expect(stat(join(dir, 'fresh'))).rejects.toThrow(/ENOENT/);
  });

  it('init with OAuth logs in headless (the pasted redirect address) and writes the client and folder', async () => {
    const port = await freePort();
    srv.control.registerOAuthClient({ clientId: 'cid', clientSecret: 'csecret', redirectUris: [`http://127.0.0.1:${port}/`] });
    const file = join(dir, 'oauth.json');
    const child = spawnCli(['init', '--config', file, '--client-id', 'cid', '--client-secret', 'csecret', '--api-url', srv.apiUrl, '--box-path', '/Work', '--local', join(dir, 'W'), '--state-dir', join(dir, 'st'), '--port', String(port), '--headless'], { stdin: 'pipe' });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const done = new Promise<number | null>((r) => child.on('close', (c) => r(c)));
    const url = await waitFor(() => /^(http:\/\/\S+\/api\/oauth2\/authorize\?\S+)$/m.exec(out)?.[1], { what: 'the authorize URL', timeoutMs: 30_000 });
    const grant = await fetch(`${url}&approve=1`, { redirect: 'manual' });
    child.stdin!.write(`${grant.headers.get('location')}\n`);
    expect(await done, out).toBe(0);
    const written = JSON.parse(await readFile(file, 'utf8')) as { auth: Record<string, string>; folders: { remoteId: string }[] };
    expect(written.auth).toEqual({ clientId: 'cid', clientSecret: 'csecret' });
    expect(written.folders[0]!.remoteId).not.toBe('0');
    expect((await stat(join(dir, 'st', 'tokens.json'))).mode & 0o777).toBe(0o600);
    expect(out).toMatch(/wrote .*oauth\.json \(mode 600\): Box \/Work/);
  });
});
