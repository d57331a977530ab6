import type { Command } from 'commander';
import { dirname, join, resolve } from 'node:path';
import { daemonExecStart } from '../service/service-unit.js';
import { fileURLToPath } from 'node:url';

/** `boxsync service install|uninstall`: the systemd user unit. */
export function register(program: Command): void {
  const service = program.command('service').description('Install or remove the systemd user unit that runs `boxsync daemon`');
  service
    .command('install')
    .description('Write ~/.config/systemd/user/boxsync.service and enable it (systemctl --user enable --now)')
    .option('--config <file>', 'the config file the daemon reads (default: the XDG config path); checked before anything is written')
    .option('--no-systemctl', 'only write the unit file')
    .action(async (opts: { systemctl: boolean; config?: string }) => {
      const { installService } = await import('../service/service-install.js');
      const configFile = opts.config === undefined ? undefined : resolve(opts.config);
      process.exitCode = await installService({ env: process.env, execStart: execStart(configFile), configFile, noSystemctl: !opts.systemctl, out: print });
    });
  service
    .command('uninstall')
    .description('Disable the unit (systemctl --user disable --now) and remove its file')
    .option('--no-systemctl', 'only remove the unit file')
    .action(async (opts: { systemctl: boolean }) => {
      const { uninstallService } = await import('../service/service-install.js');
      process.exitCode = await uninstallService({ env: process.env, noSystemctl: !opts.systemctl, out: print });
    });
}

function print(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** This node and this checkout's bin/boxsync.js, so the unit runs the boxsync that installed it. */
function execStart(configFile: string | undefined): string {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
  return daemonExecStart([process.execPath, join(root, 'bin', 'boxsync.js')], configFile);
}
