import type { Command } from 'commander';

/**
 * `boxsync config path|show|check`: where the config is, what boxsync makes of it (defaults filled in, secrets
 * hidden), and whether it works (valid, logged in, every Box folder reachable). Exit codes: 0 ok, 2 a problem
 * (said on stderr).
 */
export function register(program: Command): void {
  const config = program.command('config').description('Show where the config is, what it says, and check that it works');
  config
    .command('path')
    .description('Print the path of the config file boxsync reads ($BOXSYNC_CONFIG, else $XDG_CONFIG_HOME/boxsync/config.json)')
    .option('-c, --config <file>', 'config file')
    .action(async (opts: { config?: string }) => {
      const { configPath } = await import('../../config.js');
      process.stdout.write(`${configPath({ path: opts.config })}\n`);
    });
  config
    .command('show')
    .description('Print the configuration as boxsync reads it (defaults filled in, secrets hidden), as JSON')
    .option('-c, --config <file>', 'config file')
    .action(async (opts: { config?: string }) => {
      const loaded = await load(opts.config, 'show');
      if (!loaded) return;
      const { warnings: _w, ...rest } = loaded;
      process.stdout.write(`${JSON.stringify(redacted(rest), null, 2)}\n`);
    });
  config
    .command('check')
    .description('Check the config: valid, logged in, every Box folder reachable, every local folder usable')
    .option('-c, --config <file>', 'config file')
    .action(async (opts: { config?: string }) => {
      const loaded = await load(opts.config, 'check');
      if (!loaded) return;
      const { adapterForConfig } = await import('../account-tools.js');
      const { safeText } = await import('../../core/escape.js');
      const { access, stat } = await import('node:fs/promises');
      const { dirname } = await import('node:path');
      const say = (line: string): void => void process.stdout.write(`${line}\n`);
      let problems = 0;
      const bad = (line: string): void => {
        problems++;
        process.stdout.write(`PROBLEM ${line}\n`);
      };
      say(`config ${loaded.file}: valid`);
      for (const w of loaded.warnings) say(`warning: ${w}`);
      const adapter = adapterForConfig(loaded);
      try {
        try {
          const me = await adapter.store.account();
          say(`logged in to ${new URL(loaded.remote.apiUrl).host} as ${safeText(me.name)} <${safeText(me.login)}>`);
        } catch (e) {
          bad(`cannot use the account: ${e instanceof Error ? e.message : String(e)}${'clientId' in loaded.auth ? '; run `boxsync login`' : ''}`);
        }
        for (const f of loaded.folders) {
          // Without a working login the folders cannot be looked up on Box; the local side is still checked.
          try {
            const item = problems > 0 ? null : await adapter.store.getItem(f.remoteId, 'folder');
            if (problems === 0 && item === null) bad(`Box folder ${f.remoteId} (for ${f.localPath}) does not exist or this account cannot see it`);
            else if (item) say(`Box folder ${f.remoteId} "${safeText(item.name)}" <-> ${f.localPath}`);
          } catch (e) {
            bad(`Box folder ${f.remoteId}: ${e instanceof Error ? e.message : String(e)}`);
          }
          const local = await stat(f.localPath).catch(() => null);
          if (local && !local.isDirectory()) bad(`${f.localPath} exists and is not a folder`);
          else if (!local) {
            const parentOk = await access(dirname(f.localPath)).then(() => true, () => false);
            if (parentOk) say(`${f.localPath} does not exist yet: the first sync creates it`);
            else bad(`${f.localPath}: its parent folder does not exist`);
          }
        }
      } finally {
        await adapter.close();
      }
      if (problems > 0) {
        process.stderr.write(`boxsync config check: ${problems} problem${problems === 1 ? '' : 's'} (above)\n`);
        process.exitCode = 2;
      } else say('ok: next, `boxsync sync --once` to try it, or `boxsync service install` to run it in the background');
    });
}

async function load(path: string | undefined, verb: string): Promise<import('../../config.js').Config | null> {
  const { loadConfig } = await import('../../config.js');
  try {
    return await loadConfig({ path });
  } catch (e) {
    process.stderr.write(`boxsync config ${verb}: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 2;
    return null;
  }
}

const SECRET = /^(developerToken|clientSecret|password|accessToken|refreshToken)$/;

/** The config with every secret replaced (the shape stays, so it can be pasted into a bug report). */
export function redacted(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(redacted);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, SECRET.test(k) && typeof x === 'string' ? '[REDACTED]' : redacted(x)]));
  return v;
}
