import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

/**
 * XDG base directories (https://specifications.freedesktop.org/basedir-spec/latest/) from an environment.
 * A relative XDG_* value is invalid by the spec and ignored. XDG_RUNTIME_DIR has no fallback: it is null when
 * unset, and callers choose their own.
 */
export interface XdgDirs {
  readonly home: string;
  readonly configHome: string;
  readonly stateHome: string;
  readonly dataHome: string;
  readonly runtimeDir: string | null;
}

export function xdgDirs(env: NodeJS.ProcessEnv): XdgDirs {
  const home = absOr(env.HOME, homedir());
  return {
    home,
    configHome: absOr(env.XDG_CONFIG_HOME, join(home, '.config')),
    stateHome: absOr(env.XDG_STATE_HOME, join(home, '.local', 'state')),
    dataHome: absOr(env.XDG_DATA_HOME, join(home, '.local', 'share')),
    runtimeDir: env.XDG_RUNTIME_DIR && isAbsolute(env.XDG_RUNTIME_DIR) ? env.XDG_RUNTIME_DIR : null,
  };
}

function absOr(value: string | undefined, fallback: string): string {
  return value && isAbsolute(value) ? value : fallback;
}
