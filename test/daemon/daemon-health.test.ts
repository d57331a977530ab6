/**
 * Health that machines and people can see (issue 15): `boxsync status` exit codes and `--json` with and
 * without a daemon, with parked items, and after a fatal error; the daemon's own exit on a fatal error (a
 * revoked login), with the reason kept for `status`; and exit code 78 for a configuration error.
 */
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { DaemonStatus } from '../../src/daemon/control/control-protocol.js';
import { attentionReasons } from '../../src/daemon/control/status-text.js';
import { runCli } from '../support/cli.js';
import { loginWithCode, OAUTH_CLIENT } from '../support/oauth-login.js';
import { makeTempDir } from '../support/tmp.js';
import { waitFor } from '../support/wait.js';
import { createHarness, type DaemonRun, type Harness } from './daemon-harness.js';

describe('daemon health: status exit codes and the exit on a fatal error (real processes)', () => {
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.close();
    h = null;
  });

  it('status: 0 when healthy, 1 with a parked item (listed in --json), 3 with no daemon; --json is always JSON', async () => {
    h = await createHarness();
    const run = await h.start();
    const ok = await runCli(['status', '--config', h.configFile]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/health: ok/);
    const okJson = JSON.parse((await runCli(['status', '--json', '--config', h.configFile])).stdout) as Record<string, unknown>;
    expect(okJson).toMatchObject({ running: true, healthy: true, attention: [] });

    // A name Box refuses is parked until the user renames it: the daemon runs, but needs attention.
    await writeFile(join(h.mirror, 'trailing space '), 'x');
    await waitFor(async () => (await h!.status()).engine.errors.some((e) => e.path === 'trailing space '), { timeoutMs: 30_000, what: 'the parked item in status' });
    const attention = await runCli(['status', '--config', h.configFile]);
    expect(attention.code).toBe(1);
    expect(attention.stdout).toMatch(/health: NEEDS ATTENTION: 1 item parked until changed/);
    const attJson = await runCli(['status', '--json', '--config', h.configFile]);
    expect(attJson.code).toBe(1);
    expect(JSON.parse(attJson.stdout)).toMatchObject({ running: true, healthy: false, attention: ['1 item parked until changed'] });

    expect((await h.stop(run)).code).toBe(0);
    const none = await runCli(['status', '--config', h.configFile]);
    expect(none.code).toBe(3);
    expect(none.stderr).toMatch(/no boxsync daemon is running/);
    const noneJson = await runCli(['status', '--json', '--config', h.configFile]);
    expect(noneJson.code).toBe(3);
    expect(JSON.parse(noneJson.stdout)).toEqual({ running: false, socket: h.socketPath, lastExit: null });
  });

  it('a revoked login ends the daemon with exit code 1 after saying why; status keeps the reason', async () => {
    h = await createHarness();
    const run = await h.start();
    h.srv.control.revokeAll('1');
    await writeFile(join(h.mirror, 'after-revoke.txt'), 'pending');
    const exit = await Promise.race([
      run.exited,
      new Promise<null>((r) => setTimeout(() => r(null), 60_000).unref()),
    ]);
    expect(exit, `the daemon did not exit:\n${run.output()}`).not.toBeNull();
    expect(exit!.code).toBe(1);
    expect(run.output()).toMatch(/syncing stopped: .*Exiting with code 1/);
    expect(run.output()).not.toMatch(/\bT\b.*Bearer|Bearer T/);

    const text = await runCli(['status', '--config', h.configFile]);
    expect(text.code).toBe(3);
    expect(text.stderr).toMatch(/it last ended .* ago .* with exit code 1: /);
    const json = JSON.parse((await runCli(['status', '--json', '--config', h.configFile])).stdout) as { running: boolean; lastExit: { code: number; reason: string } };
    expect(json.running).toBe(false);
    expect(json.lastExit.code).toBe(1);
    expect(json.lastExit.reason.length).toBeGreaterThan(10);
  });

  it('a login revoked while the daemon is idle ends it (exit 1) without any local change; status never says ok meanwhile, then keeps the reason', async () => {
    h = await createHarness();
    const run = await h.start();
    const exit = await revokedWhileIdle(h, run, () => h!.srv.control.revokeAll('1'));
    expect(exit.code, run.output()).toBe(1);
    expect(run.output()).toMatch(/remote event stream stopped: .*Box refused the developer token/);
    expect(run.output()).toMatch(/syncing stopped: .*Exiting with code 1/);
    const text = await runCli(['status', '--config', h.configFile]);
    expect(text.code).toBe(3);
    expect(text.stderr).toMatch(/it last ended .* ago .* with exit code 1: .*Box refused the developer token/);
  });

  it('an OAuth login whose refresh Box refuses while the daemon is idle (a locked account) ends it with exit 1 and the reason', async () => {
    const tokens = await makeTempDir('boxsync-oauth-');
    try {
      const tokenFile = join(tokens.dir, 'tokens.json');
      // Access tokens of 4 s: the idle daemon's long poll needs a refresh within seconds.
      h = await createHarness({ server: { accessTokenTtlSec: 4 }, config: { auth: { ...OAUTH_CLIENT, tokenFile } } });
      await loginWithCode(h.srv, tokenFile);
      const run = await h.start();
      // Box's answer for a locked or deactivated user is not documented (UNCONFIRMED); it is modelled as the
      // token endpoint refusing the grant, as it does for a revoked one.
      const exit = await revokedWhileIdle(h, run, () =>
        h!.srv.control.failNext({ method: 'POST', path: '/oauth2/token', count: 100, status: 400, body: { error: 'invalid_grant', error_description: 'User is locked' } }),
      );
      expect(exit.code, run.output()).toBe(1);
      expect(run.output()).toMatch(/syncing stopped: .*Box refused the stored authorization \(invalid_grant\).*Exiting with code 1/);
      const json = JSON.parse((await runCli(['status', '--json', '--config', h.configFile])).stdout) as { running: boolean; lastExit: { code: number; reason: string } };
      expect(json).toMatchObject({ running: false, lastExit: { code: 1 } });
      expect(json.lastExit.reason).toMatch(/invalid_grant.*`boxsync login`/);
    } finally {
      await tokens.cleanup();
    }
  });

  it('a configuration error exits with 78 (systemd does not restart it)', async () => {
    const { dir, cleanup } = await makeTempDir('boxsync-cfg78-');
    try {
      const bad = join(dir, 'config.json');
      await writeFile(bad, '{ "folders": "not a list" }');
      const r = await runCli(['daemon', '--config', bad], { timeoutMs: 30_000 });
      expect(r.code).toBe(78);
      expect(r.stderr).toMatch(/folders/);
      const missing = await runCli(['daemon', '--config', join(dir, 'nope.json')], { timeoutMs: 30_000 });
      expect(missing.code).toBe(78);
    } finally {
      await cleanup();
    }
  });
});

/**
 * Break the login of an idle daemon (`breakIt`) and ask for its status until it exits: no local change is made,
 * so only the long poll (and its token refresh) can notice. Every status answered meanwhile must need attention
 * once anything stopped. The bound is a hang guard: the long poll of the harness ends every 3 s.
 */
async function revokedWhileIdle(h: Harness, run: DaemonRun, breakIt: () => void): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const before = await h.status();
  expect(attentionReasons(before)).toEqual([]);
  let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  void run.exited.then((x) => (exit = x));
  breakIt();
  const answers: DaemonStatus[] = [];
  await waitFor(
    async () => {
      const s = await h.status().catch(() => null);
      if (s) answers.push(s);
      return exit;
    },
    { timeoutMs: 45_000, intervalMs: 50, what: `the idle daemon to exit after its login broke:\n${run.output()}` },
  );
  for (const s of answers) {
    const stopped = s.remoteStream.state === 'stopped' || s.notices.some((n) => n.startsWith('syncing stopped:'));
    if (stopped) expect(attentionReasons(s), JSON.stringify(s)).not.toEqual([]);
  }
  // Nothing local changed: the daemon found out on its own.
  expect((await readdir(h.mirror)).length).toBe(0);
  return exit!;
}

