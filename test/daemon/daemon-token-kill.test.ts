/**
 * Box refresh tokens are single-use: every refresh spends the stored one and hands out a new pair, which the
 * daemon must have on disk before anything else happens. The real daemon (a child process) against box-server
 * with 3 s access tokens, so an idle daemon refreshes every few seconds, killed with SIGKILL at points around a
 * refresh:
 * - just after the new pair replaced the token file (three times over): every next start logs in with it;
 * - when its refresh request reached Box, which never handles it (lost on the way): the old pair on disk works;
 * - after Box rotated the pair but before its answer reached the daemon: the pair on disk is the old, whole one,
 *   which Box has spent; the next start exits 1 and says to log in again (the documented outcome: no client can
 *   keep a token it never received).
 * The token file is always whole and 0600, and no temp file with a token is left beside it.
 */
import { readFileSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { attentionReasons } from '../../src/daemon/control/status-text.js';
import type { Tokens } from '../../src/remote/box/token-file.js';
import { runCli } from '../support/cli.js';
import { loginWithCode, OAUTH_CLIENT } from '../support/oauth-login.js';
import { makeTempDir } from '../support/tmp.js';
import { waitFor } from '../support/wait.js';
import { createHarness, type DaemonRun, type Harness } from './daemon-harness.js';

describe('OAuth tokens across kill -9 around a refresh (real daemon, box-server)', () => {
  let h: Harness;
  let tokens: { dir: string; cleanup: () => Promise<void> };
  let tokenFile: string;

  beforeEach(async () => {
    tokens = await makeTempDir('boxsync-tokens-');
    tokenFile = join(tokens.dir, 'tokens.json');
    h = await createHarness({ server: { accessTokenTtlSec: 3 }, config: { auth: { ...OAUTH_CLIENT, tokenFile } } });
    await loginWithCode(h.srv, tokenFile);
  });
  afterEach(async () => {
    await h.close();
    await tokens.cleanup();
  });

  it('killed just after a refresh replaced the token file, three times over: every next start logs in with the new pair', { timeout: 180_000 }, async () => {
    for (let round = 1; round <= 3; round++) {
      // start() returns once the first pass is done: authenticated calls worked with the pair on disk.
      const run = await h.start();
      const before = await readTokens(tokenFile);
      const after = await nextRefresh(tokenFile, before, run);
      run.child.kill('SIGKILL');
      expect((await run.exited).signal).toBe('SIGKILL');
      expect(after.accessToken).not.toBe(before.accessToken);
      await expectWholeAndPrivate(tokenFile);
      expect(await readTokens(tokenFile)).toEqual(after);
      expect(run.output()).not.toContain(after.refreshToken);
    }
    // The pair the last killed daemon left is one Box still honours: a new daemon refreshes with it and stays healthy.
    const run = await h.start();
    const left = await readTokens(tokenFile);
    await nextRefresh(tokenFile, left, run);
    expect(attentionReasons(await h.status())).toEqual([]);
    expect((await h.stop(run)).code).toBe(0);
    await expectWholeAndPrivate(tokenFile);
  });

  it('killed while its refresh request waits at Box, never handled (lost on the way): the next start logs in with the old pair', async () => {
    const run = await h.start();
    let onDisk: Tokens | null = null;
    h.srv.control.failNext({ method: 'POST', path: '/oauth2/token', hang: true, hook: () => { onDisk = killAt(run, tokenFile); } });
    await killedAtRefresh(run);
    expect(await readTokens(tokenFile)).toEqual(onDisk);
    await expectWholeAndPrivate(tokenFile);
    const next = await h.start();
    await nextRefresh(tokenFile, onDisk!, next);
    expect(attentionReasons(await h.status())).toEqual([]);
    expect((await h.stop(next)).code).toBe(0);
  });

  it('killed after Box rotated the pair but before the answer arrived: the old pair stays whole on disk, Box has spent it, the next start exits 1 saying to log in again', async () => {
    const run = await h.start();
    let issued: string | null = null;
    h.srv.control.failNext({
      method: 'POST',
      path: '/oauth2/token',
      // Runs after box-server handled the grant (the old refresh token is spent), before the answer is sent.
      transform: (body) => {
        issued = (body as { refresh_token: string }).refresh_token;
        run.child.kill('SIGKILL');
        return body;
      },
    });
    await killedAtRefresh(run);
    expect(issued).not.toBeNull();
    await expectWholeAndPrivate(tokenFile);
    expect((await readTokens(tokenFile)).refreshToken).not.toBe(issued);
    await expectLoginLost(h);
  });
});

/** Kill the daemon now (its refresh request just reached box-server); the pair on disk at that moment. */
function killAt(run: DaemonRun, tokenFile: string): Tokens {
  const onDisk = JSON.parse(readFileSync(tokenFile, 'utf8')) as Tokens;
  run.child.kill('SIGKILL');
  return onDisk;
}

/** The daemon's next refresh reached box-server, whose fault rule killed it (a hang guard: refreshes come every ~2 s). */
async function killedAtRefresh(run: DaemonRun): Promise<void> {
  await waitFor(() => run.child.signalCode !== null || run.child.exitCode !== null, { timeoutMs: 30_000, what: `the daemon to be killed at its next refresh:\n${run.output()}` });
  expect((await run.exited).signal).toBe('SIGKILL');
}

/** The documented outcome when Box rotated the pair and the daemon never stored the new one. */
async function expectLoginLost(h: Harness): Promise<void> {
  const next = await runCli(['daemon', '--config', h.configFile], { timeoutMs: 60_000 });
  expect(next.code, next.stdout + next.stderr).toBe(1);
  expect(next.stdout + next.stderr).toMatch(/syncing stopped: .*Box refused the stored authorization \(invalid_grant\).*`boxsync login`.*Exiting with code 1/);
  const status = JSON.parse((await runCli(['status', '--json', '--config', h.configFile])).stdout) as { running: boolean; lastExit: { code: number; reason: string } };
  expect(status).toMatchObject({ running: false, lastExit: { code: 1 } });
  expect(status.lastExit.reason).toMatch(/invalid_grant.*`boxsync login`/);
}

async function readTokens(file: string): Promise<Tokens> {
  return JSON.parse(await readFile(file, 'utf8')) as Tokens;
}

/** The pair the running daemon writes next (a hang guard: with 3 s tokens a refresh comes every ~2 s). */
async function nextRefresh(file: string, before: Tokens, run: DaemonRun): Promise<Tokens> {
  return waitFor(
    async () => {
      if (run.child.exitCode !== null) throw new Error(`the daemon exited:\n${run.output()}`);
      const t = await readTokens(file);
      return t.refreshToken !== before.refreshToken ? t : null;
    },
    { timeoutMs: 30_000, intervalMs: 5, what: `the daemon to refresh its token:\n${run.output()}` },
  );
}

/** The token file parses as a whole pair, is mode 0600, and nothing else (no temp file) is beside it. */
async function expectWholeAndPrivate(file: string): Promise<void> {
  const t = await readTokens(file);
  expect(typeof t.accessToken === 'string' && typeof t.refreshToken === 'string' && typeof t.expiresAtMs === 'number').toBe(true);
  expect((await stat(file)).mode & 0o777).toBe(0o600);
  expect(await readdir(dirname(file))).toEqual(['tokens.json']);
}
