import type { Command } from 'commander';

/** `boxsync pause|resume|sync-now|confirm ID`: control verbs sent to the running daemon. */
export function register(program: Command): void {
  const verbs = [
    ['pause', 'Pause syncing (transfers in flight finish; nothing new starts)'],
    ['resume', 'Resume syncing after pause'],
    ['sync-now', 'Run a full rescan and listing now'],
  ] as const;
  for (const [verb, description] of verbs) {
    program
      .command(verb)
      .description(description)
      .option('--socket <path>', 'control socket (default: the config socketPath)')
      .option('--config <file>', 'config file')
      .action(async (opts: { socket?: string; config?: string }) => {
        const { runControlVerb } = await import('../../daemon/control/status-command.js');
        process.exitCode = await runControlVerb({ verb }, opts);
      });
  }
  program
    .command('confirm')
    .description('Confirm a safety guard the daemon is holding (its id is shown by `boxsync status`)')
    .argument('<id>', 'the guard id')
    .option('--socket <path>', 'control socket (default: the config socketPath)')
    .option('--config <file>', 'config file')
    .action(async (id: string, opts: { socket?: string; config?: string }) => {
      const { runControlVerb } = await import('../../daemon/control/status-command.js');
      process.exitCode = await runControlVerb({ verb: 'confirm-guard', id }, opts);
    });
}
