import { spawnSync } from 'node:child_process';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_SHUTDOWN_TIMEOUT_MS } from '../../src/daemon/lifecycle/daemon-settings.js';
import { serviceUnitText, STOP_MARGIN_SEC } from '../../src/cli/service/service-unit.js';
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

  /** A valid config (its folder need not exist yet: the daemon creates roots). */
  async function validConfig(file: string): Promise<void> {
    const config = {
      remote: { apiUrl: 'http://127.0.0.1:9/2.0', uploadUrl: 'http://127.0.0.1:9/api/2.0' },
      auth: { developerToken: 'SECRET-TOKEN' },
      folders: [{ remoteId: '0', localPath: join(dir, 'Box') }],
      stateDir: join(dir, 'state'),
      socketPath: join(dir, 'c.sock'),
    };
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, JSON.stringify(config), { mode: 0o600 });
  }

  it('is not restarted after a configuration error (exit 78) and waits on no network target a user manager lacks', () => {
    const text = serviceUnitText();
    expect(text).toMatch(/^RestartPreventExitStatus=78$/m);
    expect(text).not.toMatch(/network-online/);
    expect(text).toMatch(/^StartLimitBurst=5$/m);
  });

  it('install refuses a missing or invalid config and writes no unit', async () => {
    const configHome = join(dir, 'config');
    const env = { XDG_CONFIG_HOME: configHome };
    const unit = join(configHome, 'systemd', 'user', 'boxsync.service');
    const missing = await runCli(['service', 'install', '--no-systemctl'], { env });
    expect(missing.code).toBe(2);
    expect(missing.stdout).toMatch(/not installing: .*file not found/);
    await expect(stat(unit)).rejects.toThrow(/ENOENT/);
    const bad = join(dir, 'bad.json');
    await writeFile(bad, '{ "folders": 3 }', { mode: 0o600 });
    const invalid = await runCli(['service', 'install', '--config', bad, '--no-systemctl'], { env });
    expect(invalid.code).toBe(2);
    expect(invalid.stdout).toMatch(/not installing: /);
    await expect(stat(unit)).rejects.toThrow(/ENOENT/);
  });

  it('install --config puts that config on the daemon command line, quoted for systemd', async () => {
    const configHome = join(dir, 'config');
    const file = join(dir, 'my 100% $HOME config.json');
    await validConfig(file);
    const r = await runCli(['service', 'install', '--config', file, '--no-systemctl'], { env: { XDG_CONFIG_HOME: configHome } });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/is valid \(1 folder\)/);
    const text = await readFile(join(configHome, 'systemd', 'user', 'boxsync.service'), 'utf8');
    const quoted = `"${file.replace('%', '%%').replace('$', () => '$$')}"`;
    expect(text).toContain(`ExecStart=${process.execPath} ${join(repoRoot, 'bin', 'boxsync.js')} daemon --config ${quoted}`);
    expect(text).not.toContain('SECRET-TOKEN');
  });

  it('install writes the unit into $XDG_CONFIG_HOME/systemd/user with this boxsync, and uninstall removes it', async () => {
    const configHome = join(dir, 'config');
    const env = { XDG_CONFIG_HOME: configHome };
    const unit = join(configHome, 'systemd', 'user', 'boxsync.service');
    await validConfig(join(configHome, 'boxsync', 'config.json'));

    const first = await runCli(['service', 'install', '--no-systemctl'], { env });
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`wrote ${unit}`);
    expect(first.stdout).toMatch(/systemctl --user enable --now boxsync/);
    const text = await readFile(unit, 'utf8');
    expect(text).toContain(`ExecStart=${process.execPath} ${join(repoRoot, 'bin', 'boxsync.js')} daemon\n`);
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
    await validConfig(join(configHome, 'boxsync', 'config.json'));
    const r = await runCli(['service', 'install'], { env: { XDG_CONFIG_HOME: configHome, PATH: join(dir, 'empty-bin') } });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/systemctl could not enable it \(systemctl is not installed\)/);
    expect(r.stdout).toMatch(/run: systemctl --user daemon-reload && systemctl --user enable --now boxsync/);
    expect((await stat(join(configHome, 'systemd', 'user', 'boxsync.service'))).isFile()).toBe(true);
  });
});
