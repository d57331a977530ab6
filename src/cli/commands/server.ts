import type { Command } from 'commander';

/** `boxsync server`: run the bundled Box API 2.0-compatible server (src/box-server). */
export function register(program: Command): void {
  program
    .command('server')
    .description('Run box-server, the bundled Box API 2.0-compatible server (prints its base URL first)')
    .allowUnknownOption(true)
    .helpOption(false)
    .argument('[args...]')
    .action(async (args: string[]) => {
      const { runServerCli } = await import('../../box-server/cli.js');
      process.exitCode = await runServerCli(args);
    });
}
