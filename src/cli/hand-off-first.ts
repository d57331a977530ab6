/**
 * `boxsync sync --once` while the daemon runs, handed to it before the sync engine loads.
 *
 * A built `boxsync sync --once` runs this first (bin/boxsync.js, as the small script dist/cli-script/hand-off.cjs
 * that scripts/bundle-cli.mjs makes of cli/hand-off-main.ts): it reads the config file's path keys (config/locate.ts:
 * the same state dir and socket as every command finds) and the state dir's lock, and when the lock is a live
 * daemon's it hands the run over (commands/hand-off.ts) and exits with the run's code. The sync bundle (3.7 MB, with
 * the config's schema and the engine) is then never read, compiled or started: it cost a handed-over run about 150 ms
 * of its start (README, Performance). In every other case it answers null and leaves nothing behind: no daemon, a
 * command line it does not take whole (anything but `sync`, `--once`, `-c/--config FILE`, `--full-rescan`,
 * `--confirm ID` and `-v`: `--bwlimit`, `--accept-new-root`, `--dry-run`, `--help` and the rest go the long way, where
 * they are read, handed over or refused as before), a config file that cannot be read or is not a JSON object with
 * string path keys. The sync bundle then runs as before, and says what is wrong.
 *
 * The config is not validated here: a daemon runs with the config it loaded (and checked) when it started, and the
 * run handed to it is its pass.
 */
import { readFileSync } from 'node:fs';
import { configPath, statePaths } from '../config/locate.js';
import { xdgDirs } from '../config/xdg.js';
import { liveStateLock } from '../daemon/lock.js';
import { withRunStreams, type RunStreams } from './gathered-lines.js';
import { withRunSignals } from './run-signals.js';
import { handToDaemon } from './commands/hand-off.js';
import type { ExitCode } from './commands/config-and-lock.js';
import { phase } from './phases.js';

/** What a `sync --once` command line taken whole asks for. */
export interface HandOffArgs {
  readonly configPath: string | undefined;
  readonly fullRescan: boolean;
  readonly confirm: readonly string[];
}

/**
 * The `sync --once` that `args` (the command line after the script) asks for when this path takes it whole, else
 * null. The options mean what `boxsync sync` reads them as (commands/sync.ts); an option's value that starts with
 * `-` is left to the long way.
 */
export function handOffArgs(args: readonly string[]): HandOffArgs | null {
  let sync = false;
  let once = false;
  let fullRescan = false;
  let config: string | undefined;
  const confirm: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    const next = (): string | null => {
      const v = args[i + 1];
      if (v === undefined || v.startsWith('-')) return null;
      i++;
      return v;
    };
    if (a === '-v' || a === '--verbose') continue;
    if (!sync) {
      if (a !== 'sync') return null;
      sync = true;
    } else if (a === '--once') once = true;
    else if (a === '--full-rescan') fullRescan = true;
    else if (a === '-c' || a === '--config' || a.startsWith('--config=')) {
      const v = a.startsWith('--config=') ? a.slice('--config='.length) : next();
      if (v === null || config !== undefined) return null;
      config = v;
    } else if (a === '--confirm' || a.startsWith('--confirm=')) {
      const v = a.startsWith('--confirm=') ? a.slice('--confirm='.length) : next();
      if (v === null) return null;
      confirm.push(v);
    } else return null;
  }
  return sync && once ? { configPath: config, fullRescan, confirm } : null;
}

/** Where a daemon holding the state dir is, from the config file's path keys; null when none holds it. */
function runningDaemon(asked: HandOffArgs, env: NodeJS.ProcessEnv): { readonly stateDir: string; readonly socketPath: string; readonly pid: number } | null {
  try {
    const keys: unknown = JSON.parse(readFileSync(configPath({ path: asked.configPath, env }), 'utf8'));
    if (typeof keys !== 'object' || keys === null || Array.isArray(keys)) return null;
    const { stateDir, socketPath } = keys as Record<string, unknown>;
    if ((stateDir !== undefined && typeof stateDir !== 'string') || (socketPath !== undefined && typeof socketPath !== 'string')) return null;
    const place = statePaths({ stateDir, socketPath }, xdgDirs(env));
    const holder = liveStateLock(place.stateDir);
    return holder !== null && holder.purpose === 'daemon' ? { ...place, pid: holder.pid } : null;
  } catch {
    // A file that cannot be read or parsed, a lock that cannot be read: the long way says what is wrong.
    return null;
  }
}

/**
 * The exit code of `args`' run handed to the daemon, or null when this path does not take it (nothing done, nothing
 * written). `streams` are the run's (tests give their own); Ctrl-C stops the waiting, as in the long way.
 */
export async function handOffFirst(args: readonly string[], env: NodeJS.ProcessEnv = process.env, streams: Partial<RunStreams> = {}): Promise<ExitCode | null> {
  const asked = handOffArgs(args);
  const daemon = asked === null ? null : runningDaemon(asked, env);
  phase('hand-off checked');
  if (asked === null || daemon === null) return null;
  return withRunSignals((signal) =>
    withRunStreams(streams, (s) =>
      handToDaemon(daemon, daemon.pid, { ...s, signal, fullRescan: asked.fullRescan, confirm: asked.confirm }),
    ),
  );
}
