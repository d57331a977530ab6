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
      const { configPath } = await import('../../config/index.js');
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
      // Each line is printed as it is found (a slow Box answer should not hold back the lines before it).
      const findings = await checkConfig(loaded, (f) => void process.stdout.write(f.problem ? `PROBLEM ${f.line}\n` : `${f.line}\n`));
      const problems = findings.filter((f) => f.problem).length;
      if (problems > 0) {
        process.stderr.write(`boxsync config check: ${problems} problem${problems === 1 ? '' : 's'} (above)\n`);
        process.exitCode = 2;
      } else process.stdout.write('ok: next, `boxsync sync --once` to try it, or `boxsync service install` to run it in the background\n');
    });
}

/** One line of `config check`, in the order found; a problem makes the exit code 2. */
interface Finding {
  readonly line: string;
  readonly problem: boolean;
}

/**
 * What `config check` finds, in order, each also handed to `found` as it is found: the account, then for each
 * folder its Box folder (when logged in) and its local side.
 */
async function checkConfig(config: import('../../config/index.js').Config, found: (f: Finding) => void): Promise<Finding[]> {
  const { adapterForConfig } = await import('../account-tools.js');
  const { safeText } = await import('../../core/escape.js');
  const { access, stat } = await import('node:fs/promises');
  const { dirname } = await import('node:path');
  const findings: Finding[] = [];
  const add = (f: Finding): void => {
    findings.push(f);
    found(f);
  };
  const ok = (line: string): void => add({ line, problem: false });
  const bad = (line: string): void => add({ line, problem: true });
  ok(`config ${config.file}: valid`);
  for (const w of config.warnings) ok(`warning: ${w}`);
  const adapter = adapterForConfig(config);
  try {
    let loggedIn = false;
    try {
      const me = await adapter.store.account();
      ok(`logged in to ${new URL(config.remote.apiUrl).host} as ${safeText(me.name)} <${safeText(me.login)}>`);
      loggedIn = true;
    } catch (e) {
      bad(`cannot use the account: ${e instanceof Error ? e.message : String(e)}${'clientId' in config.auth ? '; run `boxsync login`' : ''}`);
    }
    for (const f of config.folders) {
      // Without a working login the folders cannot be looked up on Box; the local side is still checked.
      if (loggedIn) {
        try {
          const item = await adapter.store.getItem(f.remoteId, 'folder');
          if (item === null) bad(`Box folder ${f.remoteId} (for ${f.localPath}) does not exist or this account cannot see it`);
          else ok(`Box folder ${f.remoteId} "${safeText(item.name)}" <-> ${f.localPath}`);
        } catch (e) {
          bad(`Box folder ${f.remoteId}: ${e instanceof Error ? e.message : String(e)}`);
        }
      }
      const local = await stat(f.localPath).catch(() => null);
      if (local && !local.isDirectory()) bad(`${f.localPath} exists and is not a folder`);
      else if (!local) {
        const parentOk = await access(dirname(f.localPath)).then(() => true, () => false);
        if (parentOk) ok(`${f.localPath} does not exist yet: the first sync creates it`);
        else bad(`${f.localPath}: its parent folder does not exist`);
      }
    }
  } finally {
    await adapter.close();
  }
  return findings;
}

async function load(path: string | undefined, verb: string): Promise<import('../../config/index.js').Config | null> {
  const { loadConfig } = await import('../../config/index.js');
  try {
    return await loadConfig({ path });
  } catch (e) {
    process.stderr.write(`boxsync config ${verb}: ${(await import('../../core/escape.js')).errorText(e)}\n`);
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
