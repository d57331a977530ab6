/**
 * Where things are, from the environment and the config's own path keys: the config file, the state dir and the
 * control socket. No schema here (nothing of zod): `sync --once`'s hand-off to a running daemon
 * (cli/hand-off-first.ts) finds the daemon's lock and socket with these before it loads anything else, and
 * resolve.ts gives every command the same paths from them.
 */
import { join, resolve } from 'node:path';
import { xdgDirs, type XdgDirs } from './xdg.js';

export interface ConfigSource {
  /** `--config FILE`, when given. */
  readonly path?: string | undefined;
  /** The environment to read BOXSYNC_CONFIG and XDG_* from (default process.env). */
  readonly env?: NodeJS.ProcessEnv;
}

/** The absolute path of the config file that `source` designates (it may not exist). */
export function configPath(source: ConfigSource = {}): string {
  const env = source.env ?? process.env;
  if (source.path) return resolve(source.path);
  if (env.BOXSYNC_CONFIG) return resolve(env.BOXSYNC_CONFIG);
  return join(xdgDirs(env).configHome, 'boxsync', 'config.json');
}

/** A config path made absolute: `~` and `~/...` from the home dir, a relative one from the working dir. */
export function homeExpander(dirs: Pick<XdgDirs, 'home'>): (p: string) => string {
  return (p) => resolve(p === '~' ? dirs.home : p.startsWith('~/') ? join(dirs.home, p.slice(2)) : p);
}

/** The state dir and the control socket of a config whose `stateDir` and `socketPath` keys are these (or absent). */
export function statePaths(keys: { readonly stateDir?: string | undefined; readonly socketPath?: string | undefined }, dirs: XdgDirs): { readonly stateDir: string; readonly socketPath: string } {
  const expand = homeExpander(dirs);
  const stateDir = expand(keys.stateDir ?? join(dirs.stateHome, 'boxsync'));
  const socketPath = expand(keys.socketPath ?? (dirs.runtimeDir ? join(dirs.runtimeDir, 'boxsync', 'control.sock') : join(stateDir, 'control.sock')));
  return { stateDir, socketPath };
}
