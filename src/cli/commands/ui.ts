/**
 * `boxsync ui [--print-url]`: open the daemon's local web page (src/daemon/ui/). The daemon hands out a one-time
 * login link over the control socket (only the socket's owner can ask); this opens it with `xdg-open`, or with
 * --print-url only prints it. The link works once, within two minutes.
 *
 * Exit codes (as `boxsync pause`): 0 opened or printed; 2 the daemon refused (the page is off) or xdg-open could
 * not be started (the link is printed instead, so it can be pasted); 3 no daemon answers.
 */
import type { Command } from 'commander';

export function register(program: Command): void {
  program
    .command('ui')
    .description("Open the daemon's local web page in your browser (a one-time login link; --print-url only prints it)")
    .option('--print-url', 'print the login link instead of opening it')
    .option('--socket <path>', 'control socket (default: the config socketPath)')
    .option('--config <file>', 'config file')
    .action(async (opts: { printUrl?: boolean; socket?: string; config?: string }) => {
      const { runUiLogin } = await import('../../daemon/control/status-command.js');
      process.exitCode = await runUiLogin(opts, (url) => (opts.printUrl === true ? Promise.resolve(print(url)) : openUrl(url)));
    });
}

function print(url: string): number {
  process.stdout.write(`${url}\n`);
  return 0;
}

async function openUrl(url: string): Promise<number> {
  const { spawn } = await import('node:child_process');
  const started = await new Promise<boolean>((resolve) => {
    const child = spawn('xdg-open', [url], { detached: true, stdio: 'ignore' });
    child.once('error', () => resolve(false));
    child.once('spawn', () => {
      child.unref();
      resolve(true);
    });
  });
  if (started) {
    process.stdout.write('opened the boxsync page in your browser (the login link works once)\n');
    return 0;
  }
  process.stderr.write(`boxsync: xdg-open could not be started; open this link in your browser (it works once, within two minutes):\n`);
  process.stdout.write(`${url}\n`);
  return 2;
}
