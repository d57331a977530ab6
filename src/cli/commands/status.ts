import type { Command } from 'commander';

/**
 * `boxsync status [PATH]`: ask the running daemon over its control socket. Exit codes: src/daemon/control/exit-codes.ts STATUS_EXIT (3 when no daemon runs).
 */
export function register(program: Command): void {
  program
    .command('status')
    .description('Show what the daemon is doing (or the state of one PATH and the reason for its last operation)')
    .argument('[path]', 'a file or folder inside a sync root')
    .option('--json', 'print JSON instead of the readable summary')
    .option('--socket <path>', 'control socket (default: the config socketPath)')
    .option('--config <file>', 'config file')
    .action(async (path: string | undefined, opts: { json?: boolean; socket?: string; config?: string }) => {
      const { runStatus } = await import('../../daemon/control/status-command.js');
      process.exitCode = await runStatus({ path, json: opts.json === true, socket: opts.socket, config: opts.config });
    });
}
