import type { Command } from 'commander';
import type { Config } from '../../config/index.js';
import { DEFAULT_LOGIN_PORT } from './login.js';

/**
 * `boxsync init`: write a working config in one step. Interactive on a terminal (it asks for what the flags did
 * not give), fully scriptable with flags. It logs in (OAuth, also headless; or checks a developer token), finds
 * the Box folder by its path (`boxsync ls` shows them), checks the local folder, writes the config (0600) at
 * the XDG path or --config, validates it, and prints the next step. An existing config is kept unless --force.
 * Exit codes: 0 written, 2 nothing written (the reason is said).
 */
interface InitFlags {
  config?: string;
  developerToken?: string;
  clientId?: string;
  clientSecret?: string;
  boxPath?: string;
  local?: string;
  stateDir?: string;
  apiUrl?: string;
  uploadUrl?: string;
  tokenUrl?: string;
  authorizeUrl?: string;
  port: string;
  headless?: boolean;
  force?: boolean;
}

export function register(program: Command): void {
  program
    .command('init')
    .description('Set up boxsync: log in, pick a Box folder and a local folder, write and check the config')
    .option('-c, --config <file>', 'where to write the config (default: $XDG_CONFIG_HOME/boxsync/config.json)')
    .option('--client-id <id>', 'OAuth client id of your Box app')
    .option('--client-secret <secret>', 'OAuth client secret of your Box app')
    .option('--developer-token <token>', 'use a developer token instead of OAuth (it expires after an hour on Box)')
    .option('--box-path <path>', 'the Box folder to sync, by path (e.g. /Work); `boxsync ls` lists them')
    .option('--local <dir>', 'the local folder to mirror it into (default ~/Box)')
    .option('--state-dir <dir>', 'where boxsync keeps its journal and trash (default $XDG_STATE_HOME/boxsync)')
    .option('--api-url <url>', 'Box API base URL (default https://api.box.com/2.0; box-server: its printed URL, /2.0 is added to a URL with no path)')
    .option('--upload-url <url>', 'Box upload base URL')
    .option('--token-url <url>', 'OAuth token URL')
    .option('--authorize-url <url>', 'OAuth authorize page')
    .option('--port <port>', 'loopback port of the OAuth redirect URI', String(DEFAULT_LOGIN_PORT))
    .option('--headless', 'log in without a browser on this machine (paste the redirect address)')
    .option('--force', 'replace an existing config file')
    .action(async (flags: InitFlags) => {
      process.exitCode = await runInit(flags);
    });
}

async function runInit(flags: InitFlags): Promise<number> {
  const { mkdir, writeFile, stat, rename } = await import('node:fs/promises');
  const { dirname, resolve, join } = await import('node:path');
  const { homedir } = await import('node:os');
  const { configPath, parseConfig } = await import('../../config/index.js');
  const { xdgDirs } = await import('../../config/xdg.js');
  const { adapterForConfig, resolveBoxPath } = await import('../account-tools.js');
  const { safeText } = await import('../../core/escape.js');
  const { normalizeApiUrl } = await import('../../remote/box/api-url.js');
  const say = (line: string): void => void process.stdout.write(`${line}\n`);
  const fail = (line: string): number => {
    process.stderr.write(`boxsync init: ${line}; nothing was written\n`);
    return 2;
  };
  const tty = Boolean(process.stdin.isTTY && process.stdout.isTTY);
  const rl = tty ? (await import('node:readline/promises')).createInterface({ input: process.stdin, output: process.stdout }) : null;
  const ask = async (question: string, fallback?: string): Promise<string | undefined> => {
    if (!rl) return fallback;
    const a = (await rl.question(`${question}${fallback ? ` [${fallback}]` : ''}: `)).trim();
    return a === '' ? fallback : a;
  };
  try {
    const file = configPath({ path: flags.config });
    if (!flags.force && (await stat(file).catch(() => null))) return fail(`${file} exists already (pass --force to replace it, or --config FILE for another one)`);

    let auth: Record<string, string>;
    if (flags.developerToken) auth = { developerToken: flags.developerToken };
    else {
      const clientId = flags.clientId ?? (await ask('Box app client id (from the Box developer console)'));
      const clientSecret = flags.clientSecret ?? (await ask('Box app client secret'));
      if (!clientId || !clientSecret) return fail('give --client-id and --client-secret (your Box app), or --developer-token');
      auth = { clientId, clientSecret };
    }
    // A bare base URL (box-server's printed one) gets /2.0; upload and token URLs come from its origin.
    let apiUrl: string | undefined;
    try {
      apiUrl = flags.apiUrl === undefined ? undefined : normalizeApiUrl(flags.apiUrl);
    } catch (e) {
      return fail(`--api-url: ${e instanceof Error ? e.message : String(e)}`);
    }
    const remote = {
      apiUrl: apiUrl ?? 'https://api.box.com/2.0',
      uploadUrl: flags.uploadUrl ?? (apiUrl ? `${new URL(apiUrl).origin}/api/2.0` : 'https://upload.box.com/api/2.0'),
      tokenUrl: flags.tokenUrl ?? (apiUrl ? `${new URL(apiUrl).origin}/oauth2/token` : 'https://api.box.com/oauth2/token'),
      authorizeUrl: flags.authorizeUrl ?? (apiUrl ? `${new URL(apiUrl).origin}/api/oauth2/authorize` : 'https://account.box.com/api/oauth2/authorize'),
    };
    const local = resolve(flags.local ?? (await ask('Local folder to mirror into', join(homedir(), 'Box'))) ?? join(homedir(), 'Box'));
    const stateDir = resolve(flags.stateDir ?? join(xdgDirs(process.env).stateHome, 'boxsync'));
    const configText = (remoteId: string): string => `${JSON.stringify({ remote, auth, folders: [{ remoteId, localPath: local }], stateDir }, null, 2)}\n`;

    // Log in and look the folder up with the config about to be written, validated as if read from `file`; the
    // file is written once, at the end, when everything worked.
    let config: Config;
    let folder: { id: string; path: string };
    try {
      const draft = parseConfig(configText('0'), file);
      if ('clientId' in draft.auth) {
        const { runLogin } = await import('../login.js');
        const code = await runLogin({ config: draft, port: Number(flags.port), openBrowser: true, timeoutMs: 300_000, out: say, ...(flags.headless ? { headless: true } : {}) });
        if (code !== 0) return fail('the login did not complete');
      }
      const adapter = adapterForConfig(draft);
      try {
        const me = await adapter.store.account();
        say(`logged in as ${safeText(me.name)} <${safeText(me.login)}>`);
        const boxPath = flags.boxPath ?? (await ask('Box folder to sync (a path; / is everything)', '/')) ?? '/';
        folder = await resolveBoxPath(adapter, boxPath);
      } finally {
        await adapter.close();
      }
      const localStat = await stat(local).catch(() => null);
      if (localStat && !localStat.isDirectory()) return fail(`${local} exists and is not a folder`);
      const text = configText(folder.id);
      config = parseConfig(text, file);
      await mkdir(dirname(file), { recursive: true, mode: 0o700 });
      const tmp = `${file}.tmp-${process.pid}`;
      await writeFile(tmp, text, { mode: 0o600 });
      await rename(tmp, file);
    } catch (e) {
      return fail(e instanceof Error ? e.message : String(e));
    }
    say(`wrote ${file} (mode 600): Box ${safeText(folder.path)} (folder ${folder.id}) <-> ${config.folders[0]!.localPath}`);
    for (const w of config.warnings) say(`warning: ${w}`);
    say('next: `boxsync sync --once` to mirror it now, then `boxsync service install` to keep it in sync in the background');
    return 0;
  } finally {
    rl?.close();
  }
}
