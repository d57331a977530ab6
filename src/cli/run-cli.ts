/**
 * The boxsync command line's body (main.ts says what it is): the program, its commands, one parse of `argv`.
 * A module of its own so that both entries run it: main.ts (the compiled CLI and the sources) and script-main.ts (the
 * CommonJS bundle of `boxsync sync` that bin/boxsync.js loads with a V8 code cache; a script has no top-level await).
 */
import { Command, CommanderError } from 'commander';
import { registerCommands } from './commands/index.js';
import { versionText } from './version.js';
import { errorText } from '../core/escape.js';
import { applyTierFlags } from './tier-flags.js';
import { phase } from './phases.js';

/** The program: its global options and every command. */
export function cliProgram(): Command {
  const program = new Command();
  program
    .name('boxsync')
    .description('Two-way sync between Box folders and local folders on Linux')
    .version(versionText(), '-V, --version', 'print the version of boxsync, Node and the platform')
    .option('-v, --verbose', 'log more (debug level) in every command; BOXSYNC_LOG_LEVEL=LEVEL sets any level')
    .exitOverride();
  // -v is read by each command that logs (src/cli/global-options.ts isVerbose) and passed on as an option.
  registerCommands(program);
  return program;
}

export async function runCli(argv: readonly string[]): Promise<void> {
  phase('cli');
  // Before any command's modules load: V8's tier-up for a short run (tier-flags.ts).
  applyTierFlags();

  const program = cliProgram();
  try {
    await program.parseAsync([...argv]);
  } catch (e) {
    if (e instanceof CommanderError) {
      process.exitCode = e.exitCode === 0 ? 0 : 2;
    } else {
      process.stderr.write(`boxsync: ${errorText(e)}\n`);
      process.exitCode = 2;
    }
  }
}
