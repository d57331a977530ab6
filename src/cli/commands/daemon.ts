import type { Command } from 'commander';

/** `boxsync daemon`: live two-way sync until SIGTERM; answers `boxsync status` on the control socket. */
export function register(program: Command): void {
  program
    .command('daemon')
    .description('Run live two-way sync (what the systemd unit starts); SIGHUP reloads the config')
    .option('--config <file>', 'config file')
    .action(async (opts: { config?: string }) => {
      const [{ runDaemon }, { composeDaemonParts }] = await Promise.all([import('../../daemon/daemon.js'), import('../../daemon/daemon-parts.js')]);
      process.exitCode = await runDaemon({ configPath: opts.config, compose: composeDaemonParts });
    });
}
