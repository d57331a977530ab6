import { resolve } from 'node:path';
import type { Command } from 'commander';
import { escapeText } from '../../core/escape.js';
import type { ControlRequest } from '../../daemon/control/control-protocol.js';

type VerbRequest = Exclude<ControlRequest, { verb: 'status' | 'status-path' }>;
type ClientOpts = { socket?: string; config?: string };

/**
 * One command sending one verb: `arg` is its one argument (`[path]` or `<id>` ...), `request` builds the verb
 * from it (null: refused here, with exit code 2 and the reason already printed).
 */
function verbCommand(program: Command, name: string, description: string, arg: readonly [string, string] | null, request: (value: string | undefined) => VerbRequest | null): void {
  const cmd = program.command(name).description(description);
  if (arg !== null) cmd.argument(arg[0], arg[1]);
  cmd
    .option('--socket <path>', 'control socket (default: the config socketPath)')
    .option('--config <file>', 'config file')
    .action(async (...args: unknown[]) => {
      const value = arg === null ? undefined : (args[0] as string | undefined);
      const opts = (arg === null ? args[0] : args[1]) as ClientOpts;
      const req = request(value);
      if (req === null) {
        process.exitCode = 2;
        return;
      }
      const { runControlVerb } = await import('../../daemon/control/status-command.js');
      process.exitCode = await runControlVerb(req, opts);
    });
}

/** `boxsync pause [PATH]|resume [PATH]|sync-now|confirm ID|bwlimit RATE|notifications on|off`: control verbs sent to the running daemon. */
export function register(program: Command): void {
  const pairArg = ['[path]', 'a path inside one folder pair (default: all of them)'] as const;
  const pair = (path: string | undefined) => (path === undefined ? {} : { path: resolve(path) });
  verbCommand(program, 'pause', 'Pause syncing (transfers in flight finish; nothing new starts); with PATH, only the folder pair holding it', pairArg, (p) => ({ verb: 'pause', ...pair(p) }));
  verbCommand(program, 'resume', 'Resume syncing after pause; with PATH, the folder pair holding it', pairArg, (p) => ({ verb: 'resume', ...pair(p) }));
  verbCommand(program, 'sync-now', 'Run a full rescan and listing now', null, () => ({ verb: 'sync-now' }));
  verbCommand(program, 'confirm', 'Confirm a safety guard the daemon is holding (its id is shown by `boxsync status`)', ['<id>', 'the guard id'], (id) => ({ verb: 'confirm-guard', id: id! }));
  verbCommand(
    program,
    'bwlimit',
    "Set the running daemon's transfer bandwidth limit now (500K, 2M, off; no suffix: KiB/s); not saved: a restart returns to http.bwlimitKiBps",
    ['<rate>', 'bytes per second with B, K, M or G, or off'],
    (rate) => ({ verb: 'bwlimit', rate: rate! }),
  );
  verbCommand(
    program,
    'notifications',
    "Turn the running daemon's desktop notifications on or off now; not saved: a restart returns to daemon.notifications",
    ['<state>', 'on or off'],
    (state) => {
      if (state === 'on' || state === 'off') return { verb: 'notifications', on: state === 'on' };
      process.stderr.write(`boxsync notifications: say on or off (got "${escapeText(state ?? '')}"); nothing was changed\n`);
      return null;
    },
  );
}
