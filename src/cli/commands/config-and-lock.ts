/**
 * What `sync --once` (sync.ts) and its dry run (sync-dry-run.ts) start with, and their exit codes; its own file so
 * that sync.ts, which runs the dry run, and sync-dry-run.ts do not import each other.
 */
import type { Config } from '../../config/index.js';

/** 0 converged; 1 some items failed; 2 fatal; 3 stopped by a safety guard (see sync.ts). */
export type ExitCode = 0 | 1 | 2 | 3;

/**
 * The start of `sync --once` and its dry run: load the config (its warnings said) and take the state lock.
 * Null after saying why (exit code 2). A lock held by the daemon gets `whenDaemon`'s words when given; or, when
 * `whenDaemon` is 'hand-off', the daemon's pid comes back with the config, nothing said (sync.ts hands the run over).
 */
export async function configAndLock(
  configPath: string | undefined,
  env: NodeJS.ProcessEnv,
  say: (line: string) => void,
  whenDaemon?: ((pid: number, stateDir: string) => string) | 'hand-off',
): Promise<{ config: Config; lock: import('../../daemon/lock.js').StateLock } | { config: Config; daemonPid: number } | null> {
  const { loadConfig } = await import('../../config/index.js');
  let config: Config;
  try {
    config = await loadConfig({ path: configPath, env });
  } catch (e) {
    say(e instanceof Error ? e.message : String(e));
    return null;
  }
  for (const w of config.warnings) say(`warning: ${w}`);
  const { acquireStateLock, StateLockedError } = await import('../../daemon/lock.js');
  try {
    return { config, lock: acquireStateLock(config.stateDir, 'sync --once') };
  } catch (e) {
    const daemonPid = e instanceof StateLockedError && e.holder.purpose === 'daemon' ? e.holder.pid : null;
    if (daemonPid !== null && whenDaemon === 'hand-off') return { config, daemonPid };
    if (daemonPid !== null && typeof whenDaemon === 'function') say(whenDaemon(daemonPid, config.stateDir));
    else say(e instanceof Error ? e.message : String(e));
    return null;
  }
}

/** The config and the lock, or null when the daemon holds it (only a 'hand-off' caller gets that far). */
export function lockTaken<T extends { config: Config }>(opened: T | null): Extract<T, { lock: unknown }> | null {
  return opened !== null && 'lock' in opened ? (opened as Extract<T, { lock: unknown }>) : null;
}
