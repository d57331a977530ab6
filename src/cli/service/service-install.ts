/**
 * `boxsync service install|uninstall`: write or remove the user unit under $XDG_CONFIG_HOME/systemd/user and
 * enable or disable it with `systemctl --user`. When systemctl is missing or has no user manager to talk to
 * (containers, SSH sessions without lingering), the unit file is still written or removed and the message says
 * exactly which command to run later. Returns the exit code.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { configPath, loadConfig } from '../../config/index.js';
import { xdgDirs } from '../../config/xdg.js';
import { serviceUnitText } from './service-unit.js';

export const UNIT_NAME = 'boxsync.service';

export interface ServiceOptions {
  readonly env: NodeJS.ProcessEnv;
  /** The absolute command line systemd runs (default: this node and this boxsync entry point). */
  readonly execStart: string;
  /** The config file the unit's daemon reads (absolute); undefined: the XDG default. Checked before installing. */
  readonly configFile?: string | undefined;
  /** Skip systemctl (write/remove the file only). */
  readonly noSystemctl: boolean;
  readonly out: (line: string) => void;
}

export function unitPath(env: NodeJS.ProcessEnv): string {
  return join(xdgDirs(env).configHome, 'systemd', 'user', UNIT_NAME);
}

export async function installService(opts: ServiceOptions): Promise<number> {
  // A unit enabled without a working config restarts every 10 s forever: check it first, write nothing if bad.
  try {
    const config = await loadConfig({ path: opts.configFile, env: opts.env });
    opts.out(`config ${configPath({ path: opts.configFile, env: opts.env })} is valid (${config.folders.length} folder${config.folders.length === 1 ? '' : 's'})`);
  } catch (e) {
    opts.out(`not installing: ${e instanceof Error ? e.message : String(e)}`);
    opts.out('write or fix the config first (see config/README.md), then run `boxsync service install` again');
    return 2;
  }
  const path = unitPath(opts.env);
  const text = serviceUnitText(opts.execStart);
  const before = await readFile(path, 'utf8').catch(() => null);
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, text, { mode: 0o644 });
  opts.out(`${before === null ? 'wrote' : before === text ? 'unchanged' : 'updated'} ${path}`);
  if (opts.noSystemctl) {
    opts.out('not calling systemctl (--no-systemctl); enable it with: systemctl --user daemon-reload && systemctl --user enable --now boxsync');
    return 0;
  }
  const reload = systemctl(['daemon-reload'], opts.env);
  const enable = reload.ok ? systemctl(['enable', '--now', UNIT_NAME], opts.env) : reload;
  if (!enable.ok) {
    opts.out(`the unit is written, but systemctl could not enable it (${enable.why}); run: systemctl --user daemon-reload && systemctl --user enable --now boxsync`);
    return 0;
  }
  opts.out('enabled and started: systemctl --user status boxsync; logs: journalctl --user -u boxsync');
  return 0;
}

export async function uninstallService(opts: Omit<ServiceOptions, 'execStart'>): Promise<number> {
  const path = unitPath(opts.env);
  const exists = (await readFile(path, 'utf8').catch(() => null)) !== null;
  if (!opts.noSystemctl && exists) {
    const disable = systemctl(['disable', '--now', UNIT_NAME], opts.env);
    if (!disable.ok) opts.out(`systemctl could not disable the unit (${disable.why}); if it runs, stop it with: systemctl --user disable --now boxsync`);
  }
  await rm(path, { force: true });
  opts.out(exists ? `removed ${path}` : `nothing to remove: ${path} does not exist`);
  if (!opts.noSystemctl && exists) systemctl(['daemon-reload'], opts.env);
  return 0;
}

function systemctl(args: readonly string[], env: NodeJS.ProcessEnv): { ok: true } | { ok: false; why: string } {
  const r = spawnSync('systemctl', ['--user', ...args], { env, encoding: 'utf8', timeout: 30_000 });
  if (r.error) return { ok: false, why: (r.error as NodeJS.ErrnoException).code === 'ENOENT' ? 'systemctl is not installed' : r.error.message };
  if (r.status !== 0) return { ok: false, why: (r.stderr || r.stdout || `exit code ${r.status}`).trim().split('\n')[0] ?? '' };
  return { ok: true };
}
