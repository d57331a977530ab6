import type { Command } from 'commander';

/**
 * `boxsync selective list|exclude|include`: which Box subfolders of a folder pair are kept on this disk.
 * The selection is the config key `folders[].selective.unselected`; exclude and include edit it (the rest of the
 * file is kept) and then sync, or, when the daemon runs, send the change over its control socket: it applies it at
 * once and answers with the outcome (daemon/selective-command.ts).
 *
 * exclude: first a sync with the folder still selected, so local changes in it are uploaded; if any file there
 * still has content Box lacks, nothing changes and the files are named (exit 1). Then the key is written and a
 * second sync forgets the folder's merge base and frees the disk (engine/selective-free.ts: local trash, or
 * removed with --free-space). Nothing is deleted on Box. include: the key is written and a sync downloads the
 * folder (a first sync of that subtree: nothing deleted on either side).
 */
export function register(program: Command): void {
  const cmd = program.command('selective').description('Choose which Box subfolders of a folder pair are kept on this disk (selective sync)');
  cmd
    .command('list')
    .description('Show the folders at PATH (one level, listed from Box) with their state (synced, not synced, partly) and size on Box')
    .argument('[path]', 'a local folder inside a folder pair (default: the top of every pair)')
    .option('-c, --config <file>', 'config file')
    .action(async (path: string | undefined, opts: { config?: string }) => {
      const { runSelectiveList } = await import('../selective-run.js');
      process.exitCode = await runSelectiveList(path, opts.config);
    });
  cmd
    .command('exclude')
    .description('Stop keeping the folder PATH on this disk: local changes are uploaded first, then the local copy goes to the local trash; Box keeps it')
    .argument('<path>', 'a local folder inside a folder pair')
    .option('--free-space', 'remove the local copy instead of moving it to the local trash')
    .option('-c, --config <file>', 'config file')
    .action(async (path: string, opts: { config?: string; freeSpace?: boolean }) => {
      const { runSelectiveExclude } = await import('../selective-run.js');
      process.exitCode = await runSelectiveExclude(path, opts.config, opts.freeSpace === true);
    });
  cmd
    .command('include')
    .description('Keep the folder PATH on this disk again: it is downloaded (nothing is deleted on either side)')
    .argument('<path>', 'a local folder inside a folder pair')
    .option('-c, --config <file>', 'config file')
    .action(async (path: string, opts: { config?: string }) => {
      const { runSelectiveInclude } = await import('../selective-run.js');
      process.exitCode = await runSelectiveInclude(path, opts.config);
    });
}
