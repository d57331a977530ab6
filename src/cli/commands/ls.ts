import type { Command } from 'commander';

/** `boxsync ls [BOX_PATH]`: the folders in a Box folder with their ids (like `rclone lsd`), to pick sync roots. */
export function register(program: Command): void {
  program
    .command('ls')
    .description('List the folders (and with --all, the files) in a Box folder, with their ids')
    .argument('[box-path]', 'a folder path in your Box account, e.g. /Work/Reports (default: the top)', '/')
    .option('--all', 'list files and web links too')
    .option('--json', 'print JSON')
    .option('-c, --config <file>', 'config file (for the account and its login)')
    .action(async (boxPath: string, opts: { all?: boolean; json?: boolean; config?: string }) => {
      const [{ loadConfig }, { adapterForConfig, listAll, resolveBoxPath }, { safeText, errorText, terminalSafeJson }] = await Promise.all([
        import('../../config/index.js'),
        import('../account-tools.js'),
        import('../../core/escape.js'),
      ]);
      let config;
      try {
        config = await loadConfig({ path: opts.config });
      } catch (e) {
        process.stderr.write(`boxsync ls: ${errorText(e)}\n`);
        process.exitCode = 2;
        return;
      }
      const adapter = adapterForConfig(config);
      try {
        const folder = await resolveBoxPath(adapter, boxPath);
        const entries = (await listAll(adapter, folder.id)).filter((e) => opts.all || e.kind === 'folder');
        const { syncStateOf } = await import('../selective-run.js');
        const stateOf = (e: { id: string; name: string; kind: string }): string | null =>
          e.kind === 'folder' ? syncStateOf(config.folders, [...folder.chain, { id: e.id, name: e.name }]) : null;
        entries.sort((a, b) => (a.kind === b.kind ? a.name.localeCompare(b.name) : a.kind === 'folder' ? -1 : 1));
        if (opts.json) {
          process.stdout.write(`${terminalSafeJson(JSON.stringify({ path: folder.path, id: folder.id, entries: entries.map((e) => ({ id: e.id, name: e.name, kind: e.kind, ...(stateOf(e) === null ? {} : { state: stateOf(e) }) })) }, null, 2))}\n`);
        } else {
          process.stdout.write(`${safeText(folder.path)}  (Box folder ${folder.id})\n`);
          const width = Math.max(4, ...entries.map((e) => e.id.length));
          for (const e of entries) process.stdout.write(`  ${e.id.padStart(width)}  ${safeText(e.name)}${e.kind === 'folder' ? '/' : e.kind === 'weblink' ? ' (web link)' : ''}${stateOf(e) === null ? '' : `  [${stateOf(e)}]`}\n`);
          if (entries.length === 0) process.stdout.write('  (no folders here)\n');
        }
      } catch (e) {
        process.stderr.write(`boxsync ls: ${errorText(e)}\n`);
        process.exitCode = 2;
      } finally {
        await adapter.close();
      }
    });
}
