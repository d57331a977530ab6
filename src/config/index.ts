/**
 * Configuration: find the file, read it, validate it, fill in defaults. The one entry point for every command
 * and the daemon; the schema itself is src/config/schema.ts and every key is documented in config/README.md.
 *
 * Where the file is: `--config FILE`, else $BOXSYNC_CONFIG, else $XDG_CONFIG_HOME/boxsync/config.json
 * (XDG_CONFIG_HOME defaults to ~/.config).
 *
 * Every failure is a ConfigError (code `config_invalid`, fatal, exit code 2) whose message names the file and
 * each offending key, e.g. `config error in /x/config.json: folders[0].localPath: expected an absolute path`.
 */
import { readFile, stat } from 'node:fs/promises';
import { ConfigError } from './config-error.js';
import { problemsFromIssues } from './format-issues.js';
import { authProblems, resolveConfig, type Config } from './resolve.js';
import { rawConfigSchema } from './schema.js';
import { xdgDirs } from './xdg.js';
import { configPath, type ConfigSource } from './locate.js';

export type { AuthConfig, Config } from './resolve.js';
export { ConfigError, isConfigError, type ConfigProblem } from './config-error.js';
export { rootIdFor } from './root-id.js';
export { DEFAULT_DAEMON_ONLY_SCHEDULES, DEFAULT_REMOTE, DEFAULT_SCHEDULES, DEFAULT_SHUTDOWN_TIMEOUT_SEC, MAX_SHUTDOWN_TIMEOUT_SEC } from './schema.js';

export { configPath, type ConfigSource } from './locate.js';

/** Find, read and validate the config file. Throws ConfigError. */
export async function loadConfig(source: ConfigSource = {}): Promise<Config> {
  const file = configPath(source);
  let text: string;
  let modeBits: number;
  try {
    text = await readFile(file, 'utf8');
    modeBits = (await stat(file)).mode & 0o777;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const message =
      code === 'ENOENT'
        ? 'file not found; create it (config/config.example.json shows every key) or pass --config FILE'
        : `cannot read the file (${code ?? String(e)})`;
    throw new ConfigError(file, [{ key: '', message }]);
  }
  const config = parseConfig(text, file, source.env ?? process.env);
  const secret = 'developerToken' in config.auth ? 'a developer token' : 'an OAuth client secret';
  if ((modeBits & 0o077) !== 0) {
    const mode = modeBits.toString(8).padStart(4, '0');
    return { ...config, warnings: [...config.warnings, `${file} holds ${secret} and other users can read it (mode ${mode}); run: chmod 600 ${file}`] };
  }
  return config;
}

/** Validate config text that came from `file` (named in errors). Throws ConfigError. */
export function parseConfig(text: string, file: string, env: NodeJS.ProcessEnv = process.env): Config {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new ConfigError(file, [{ key: '', message: `not valid JSON (${e instanceof Error ? e.message : String(e)})` }]);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new ConfigError(file, [{ key: '', message: 'expected a JSON object at the top level' }]);
  }
  const parsed = rawConfigSchema.safeParse(json);
  if (!parsed.success) {
    const problems = problemsFromIssues(parsed.error.issues);
    if (!problems.some((p) => p.key === 'auth' || p.key.startsWith('auth.'))) problems.push(...authProblems((json as Record<string, unknown>).auth));
    throw new ConfigError(file, problems);
  }
  const resolved = resolveConfig(parsed.data, file, xdgDirs(env));
  if (!resolved.ok) throw new ConfigError(file, resolved.problems);
  return resolved.config;
}
