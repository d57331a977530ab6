import { resolve } from 'node:path';
import type { Command } from 'commander';
import { escapeText } from '../../core/escape.js';

/** `boxsync pause [PATH]|resume [PATH]|sync-now|confirm ID|bwlimit RATE|notifications on|off`: control verbs sent to the running daemon. */
export function register(program: Command): void {
  const pauses = [
    ['pause', 'Pause syncing (transfers in flight finish; nothing new starts); with PATH, only the folder pair holding it'],
    ['resume', 'Resume syncing after pause; with PATH, the folder pair holding it'],
  ] as const;
  for (const [verb, description] of pauses) {
    program
      .command(verb)
      .description(description)
      .argument('[path]', 'a path inside one folder pair (default: all of them)')
      .option('--socket <path>', 'control socket (default: the config socketPath)')
      .option('--config <file>', 'config file')
      .action(async (path: string | undefined, opts: { socket?: string; config?: string }) => {
        const { runControlVerb } = await import('../../daemon/control/status-command.js');
        process.exitCode = await runControlVerb({ verb, ...(path === undefined ? {} : { path: resolve(path) }) }, opts);
      });
  }
  program
    .command('sync-now')
    .description('Run a full rescan and listing now')
    .option('--socket <path>', 'control socket (default: the config socketPath)')
    .option('--config <file>', 'config file')
    .action(async (opts: { socket?: string; config?: string }) => {
      const { runControlVerb } = await import('../../daemon/control/status-command.js');
      process.exitCode = await runControlVerb({ verb: 'sync-now' }, opts);
    });
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
  program
    .command('bwlimit')
    .description('Set the running daemon\'s transfer bandwidth limit now (500K, 2M, off; no suffix: KiB/s); not saved: a restart returns to http.bwlimitKiBps')
    .argument('<rate>', 'bytes per second with B, K, M or G, or off')
    .option('--socket <path>', 'control socket (default: the config socketPath)')
    .option('--config <file>', 'config file')
    .action(async (rate: string, opts: { socket?: string; config?: string }) => {
      const { runControlVerb } = await import('../../daemon/control/status-command.js');
      process.exitCode = await runControlVerb({ verb: 'bwlimit', rate }, opts);
    });
  program
    .command('notifications')
    .description('Turn the running daemon\'s desktop notifications on or off now; not saved: a restart returns to daemon.notifications')
    .argument('<state>', 'on or off')
    .option('--socket <path>', 'control socket (default: the config socketPath)')
    .option('--config <file>', 'config file')
    .action(async (state: string, opts: { socket?: string; config?: string }) => {
      if (state !== 'on' && state !== 'off') {
        process.stderr.write(`boxsync notifications: say on or off (got "${escapeText(state)}"); nothing was changed\n`);
        process.exitCode = 2;
        return;
      }
      const { runControlVerb } = await import('../../daemon/control/status-command.js');
      process.exitCode = await runControlVerb({ verb: 'notifications', on: state === 'on' }, opts);
    });
}
