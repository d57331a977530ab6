/**
 * Health that machines and people can see (issue 15): `boxsync status` exit codes and `--json` with and
 * without a daemon, with parked items, and after a fatal error; the daemon's own exit on a fatal error (a
 * revoked login), with the reason kept for `status`; and exit code 78 for a configuration error.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { makeTempDir } from '../support/tmp.js';
import { waitFor } from '../support/wait.js';
import { createHarness, type Harness } from './daemon-harness.js';

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
