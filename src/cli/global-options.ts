/**
 * The program's own options (declared in src/cli/main.ts), which every command may be given. A command reads them
 * from the Command its action receives and passes them on as options; nothing travels through the environment.
 */
import type { Command } from 'commander';

/** `-v/--verbose`: log at debug level (BOXSYNC_LOG_LEVEL, when set, still wins: src/logger.ts logLevelFor). */
export function isVerbose(cmd: Command): boolean {
  return cmd.optsWithGlobals<{ verbose?: boolean }>().verbose === true;
}
