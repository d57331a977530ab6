import { spawnSync } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_SHUTDOWN_TIMEOUT_MS } from '../../src/daemon/daemon-settings.js';
import { serviceUnitText, STOP_MARGIN_SEC } from '../../src/daemon/service-unit.js';
import { repoRoot, runCli } from '../support/cli.js';
import { makeTempDir } from '../support/tmp.js';

function systemdAnalyze(unitFile: string): { skipped: string } | { code: number | null; stderr: string } {
  const r = spawnSync('systemd-analyze', ['verify', unitFile], { encoding: 'utf8', timeout: 30_000 });
  if (r.error) return { skipped: `systemd-analyze is not available (${(r.error as NodeJS.ErrnoException).code ?? r.error.message})` };
  if (/Failed to initialize manager|Failed to lookup RuntimeDirectory/.test(r.stderr)) return { skipped: `systemd-analyze cannot run here: ${r.stderr.trim()}` };
  return { code: r.status, stderr: r.stderr };
}

describe('systemd unit and boxsync service', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await makeTempDir('boxsync-svc-')));
  afterEach(async () => cleanup());

  it('ships systemd/boxsync.service exactly as the code generates it', async () => {
    expect(await readFile(join(repoRoot, 'systemd', 'boxsync.service'), 'utf8')).toBe(serviceUnitText());
  });

  it('is a user unit that restarts on failure and gives the shutdown bound a margin', () => {
    const text = serviceUnitText();
    expect(text).toMatch(/^Restart=on-failure$/m);
    expect(text).toMatch(/^WantedBy=default\.target$/m);
    expect(text).toMatch(new RegExp(`^TimeoutStopSec=${DEFAULT_SHUTDOWN_TIMEOUT_MS / 1000 + STOP_MARGIN_SEC}s$`, 'm'));
    expect(text).toMatch(/^NoNewPrivileges=yes$/m);
    expect(text).not.toMatch(/ProtectHome/);
  });

  it('passes systemd-analyze verify (when the tool is available)', (ctx) => {
    const r = systemdAnalyze(join(repoRoot, 'systemd', 'boxsync.service'));
    if ('skipped' in r) {
      console.warn(`skipping systemd-analyze verify: ${r.skipped}`);
      ctx.skip();
      return;
    }
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  it('install writes the unit into $XDG_CONFIG_HOME/systemd/user with this boxsync, and uninstall removes it', async () => {
    const configHome = join(dir, 'config');
    const env = { XDG_CONFIG_HOME: configHome };
    const unit = join(configHome, 'systemd', 'user', 'boxsync.service');

    const first = await runCli(['service', 'install', '--no-systemctl'], { env });
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`wrote ${unit}`);
    expect(first.stdout).toMatch(/systemctl --user enable --now boxsync/);
    const text = await readFile(unit, 'utf8');
    expect(text).toContain(`ExecStart=${process.execPath} ${join(repoRoot, 'bin', 'boxsync.js')} daemon`);
    expect((await stat(unit)).mode & 0o777).toBe(0o644);

    const verify = systemdAnalyze(unit);
    if ('skipped' in verify) console.warn(`skipping systemd-analyze verify of the installed unit: ${verify.skipped}`);
    else expect(verify).toEqual({ code: 0, stderr: '' });

    const again = await runCli(['service', 'install', '--no-systemctl'], { env });
    expect(again.stdout).toContain(`unchanged ${unit}`);

    const removed = await runCli(['service', 'uninstall', '--no-systemctl'], { env });
    expect(removed.code).toBe(0);
    expect(removed.stdout).toContain(`removed ${unit}`);
    await expect(stat(unit)).rejects.toThrow(/ENOENT/);
    const none = await runCli(['service', 'uninstall', '--no-systemctl'], { env });
    expect(none.stdout).toContain('nothing to remove');
  });

  it('still writes the unit and says what to run when systemctl is missing', async () => {
    const configHome = join(dir, 'config');
    const r = await runCli(['service', 'install'], { env: { XDG_CONFIG_HOME: configHome, PATH: join(dir, 'empty-bin') } });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/systemctl could not enable it \(systemctl is not installed\)/);
    expect(r.stdout).toMatch(/run: systemctl --user daemon-reload && systemctl --user enable --now boxsync/);
    expect((await stat(join(configHome, 'systemd', 'user', 'boxsync.service'))).isFile()).toBe(true);
  });
});
