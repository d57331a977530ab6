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
  const cmd = program
    .command('selective')
    .description('Choose which Box subfolders of a folder pair are kept on this disk (selective sync); with no subcommand, on a terminal: an interactive tree picker')
    .option('-c, --config <file>', 'config file')
    .addHelpText(
      'after',
      '\nWith no subcommand on a terminal, a tree picker opens: the folder pairs, and their Box folders\nlisted when expanded, each with [x] synced, [ ] not synced or [-] partly and its size on Box. Keys: up/down or k/j\nmove, right/left or enter expand/collapse, space toggles, a shows the changes and asks to confirm, q or Esc quits\nwith nothing changed. The changes are applied as `selective exclude|include` would. Off a terminal it prints\n`selective list`.',
    )
    .action(async (opts: { config?: string }) => {
      if (process.stdin.isTTY === true && process.stdout.isTTY === true) {
        const { runSelectivePicker } = await import('../selective-picker.js');
        process.exitCode = await runSelectivePicker(opts.config);
        return;
      }
      const { runSelectiveList } = await import('../selective-run.js');
      process.exitCode = await runSelectiveList(undefined, opts.config);
      process.stderr.write('boxsync selective: not a terminal, so no picker; the list above is `boxsync selective list`. Change it with `boxsync selective exclude|include PATH`.\n');
    });
  // `selective` has -c too, and commander gives it a -c written after the subcommand's name: read both.
  const configOf = (opts: { config?: string }): string | undefined => opts.config ?? cmd.opts<{ config?: string }>().config;
  cmd
    .command('list')
    .description('Show the folders at PATH (one level, listed from Box) with their state (synced, not synced, partly) and size on Box')
    .argument('[path]', 'a local folder inside a folder pair (default: the top of every pair)')
    .option('-c, --config <file>', 'config file')
    .action(async (path: string | undefined, opts: { config?: string }) => {
      const { runSelectiveList } = await import('../selective-run.js');
      process.exitCode = await runSelectiveList(path, configOf(opts));
    });
  cmd
    .command('exclude')
    .description('Stop keeping the folder PATH on this disk: local changes are uploaded first, then the local copy goes to the local trash; Box keeps it')
    .argument('<path>', 'a local folder inside a folder pair')
    .option('--free-space', 'remove the local copy instead of moving it to the local trash')
    .option('-c, --config <file>', 'config file')
    .action(async (path: string, opts: { config?: string; freeSpace?: boolean }) => {
      const { applySelectionChange } = await import('../selective-run.js');
      process.exitCode = await applySelectionChange('exclude', path, configOf(opts), opts.freeSpace === true);
    });
  cmd
    .command('include')
    .description('Keep the folder PATH on this disk again: it is downloaded (nothing is deleted on either side)')
    .argument('<path>', 'a local folder inside a folder pair')
    .option('-c, --config <file>', 'config file')
    .action(async (path: string, opts: { config?: string }) => {
      const { applySelectionChange } = await import('../selective-run.js');
      process.exitCode = await applySelectionChange('include', path, configOf(opts));
    });
}
