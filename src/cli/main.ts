#!/usr/bin/env node
/**
 * The boxsync command line: argument parsing, output and exit codes. Nothing else.
 * Each command lives in its own module under commands/ and is loaded only when used, so `boxsync status`
 * starts fast and `boxsync server` never loads the sync engine.
 *
 * Exit codes (shared by every command; see README):
 *   0 ok / converged, 1 some items failed and will be retried (status: the daemon needs attention; see README),
 *   2 fatal (config, auth, journal), 3 stopped by a safety guard (for `sync --dry-run`: a guard would stop it).
 * The item commands (commands/items.ts) add 4 outside every root, 5 not synced, 6 locked by another user,
 * 7 credentials refused, 8 the daemon holds the state dir but does not answer.
 */
import './heap-tuning.js';
import { Command, CommanderError } from 'commander';
import { registerCommands } from './commands/index.js';
import { versionText } from './version.js';
import { errorText } from '../core/escape.js';
import { applyTierFlags } from './tier-flags.js';

// Before any command's modules load: V8's tier-up for a short run (tier-flags.ts).
applyTierFlags();

const program = new Command();
program
  .name('boxsync')
  .description('Two-way sync between Box folders and local folders on Linux')
  .version(versionText(), '-V, --version', 'print the version of boxsync, Node and the platform')
  .option('-v, --verbose', 'log more (debug level) in every command; BOXSYNC_LOG_LEVEL=LEVEL sets any level')
  .exitOverride();
// -v is read by each command that logs (src/cli/global-options.ts isVerbose) and passed on as an option.

registerCommands(program);

try {
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof CommanderError) {
    process.exitCode = e.exitCode === 0 ? 0 : 2;
  } else {
    process.stderr.write(`boxsync: ${errorText(e)}\n`);
    process.exitCode = 2;
  }
}
