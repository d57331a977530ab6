import type { Command } from 'commander';
import { isVerbose } from '../global-options.js';

/** `boxsync daemon`: live two-way sync until SIGTERM; answers `boxsync status` on the control socket. */
export function register(program: Command): void {
  program
    .command('daemon')
    .description('Run live two-way sync (what the systemd unit starts); SIGHUP reloads the config')
    .option('--config <file>', 'config file')
    .option('--bwlimit <rate>', 'cap the total transfer rate, e.g. 500K or 2M per second (overrides http.bwlimitKiBps)')
    .action(async (opts: { config?: string; bwlimit?: string }, cmd: Command) => {
      const { readBwlimit } = await import('./sync.js');
      const bw = readBwlimit(opts.bwlimit);
      if (bw === null) return;
      const [{ runDaemon }, { composeDaemonParts }] = await Promise.all([import('../../daemon/lifecycle/daemon.js'), import('../../daemon/lifecycle/daemon-parts.js')]);
      process.exitCode = await runDaemon({ configPath: opts.config, compose: composeDaemonParts(bw), verbose: isVerbose(cmd) });
    });
}
