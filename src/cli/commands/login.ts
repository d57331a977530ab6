import type { Command } from 'commander';

/** The loopback port of the OAuth redirect URI (`http://127.0.0.1:53682/`, as README.md tells to register it). */
export const DEFAULT_LOGIN_PORT = 53682;

/** `boxsync login`: OAuth authorization-code flow with a loopback redirect; stores the tokens 0600. */
export function register(program: Command): void {
  program
    .command('login')
    .description('Authorize boxsync with Box (OAuth, loopback redirect on 127.0.0.1) and store the tokens')
    .option('--config <file>', 'config file')
    .option('--port <port>', 'loopback port of the redirect URI registered with the Box app', String(DEFAULT_LOGIN_PORT))
    .option('--no-browser', 'only print the URL; do not run xdg-open')
    .option('--headless', 'no browser on this machine: open the URL elsewhere and paste the address Box redirects to (the default without a desktop session)')
    .option('--timeout <seconds>', 'give up when the browser has not come back by then', '300')
    .action(async (opts: { config?: string; port: string; browser: boolean; timeout: string; headless?: boolean }) => {
      const port = Number(opts.port);
      const timeoutSec = Number(opts.timeout);
      if (!Number.isInteger(port) || port < 0 || port > 65535 || !(timeoutSec > 0)) {
        process.stderr.write('boxsync login: --port must be 0-65535 and --timeout a positive number of seconds; nothing was changed\n');
        process.exitCode = 2;
        return;
      }
      const out = (line: string): void => void process.stdout.write(`${line}\n`);
      const [{ loadConfig }, { runLogin }] = await Promise.all([import('../../config/index.js'), import('../login.js')]);
      let config;
      try {
        config = await loadConfig({ path: opts.config });
      } catch (e) {
        out(`boxsync login: ${e instanceof Error ? e.message : String(e)}`);
        process.exitCode = 2;
        return;
      }
      process.exitCode = await runLogin({
        config,
        port,
        openBrowser: opts.browser,
        timeoutMs: timeoutSec * 1000,
        ...(opts.headless ? { headless: true } : {}),
        out,
      });
    });
}
