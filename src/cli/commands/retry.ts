/**
 * `boxsync retry [PATH]`: try failed and parked items again now (engine/park-recheck.ts retryParks).
 *
 * When a daemon runs, it is asked over the control socket: it clears the items' rows and runs a pass for them at
 * once. Otherwise the rows are cleared in the journal directly (under the state-dir lock, as `sync --once` takes
 * it), and the next run plans them again. An item whose cause is still there fails again and is parked again.
 * Items a Box listing refused are not cleared: every process's first pass lists them again anyway.
 *
 * Exit codes: 0 done (also when nothing was failed or parked), 2 the request failed (config, lock, journal, a
 * PATH outside every sync folder).
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { VerbResult } from '../../daemon/control/control-protocol.js';

export function register(program: Command): void {
  program
    .command('retry')
    .description('Try failed and parked items again now: all of them, or those at or below PATH (through the daemon when it runs, else at the next run)')
    .argument('[path]', 'a file or folder inside a sync root')
    .option('--socket <path>', 'control socket (default: the config socketPath)')
    .option('--config <file>', 'config file')
    .action(async (path: string | undefined, opts: { socket?: string; config?: string }) => {
      process.exitCode = await runRetry({ path, socket: opts.socket, config: opts.config });
    });
}

export async function runRetry(opts: { readonly path?: string | undefined; readonly config?: string | undefined; readonly socket?: string | undefined }): Promise<number> {
  const abs = opts.path === undefined ? undefined : resolve(opts.path);
  const { DaemonNotRunningError, sendControl } = await import('../../daemon/control/control-client.js');
  const { daemonLocation } = await import('../../daemon/control/socket-path.js');
  const where = await daemonLocation(opts);
  try {
    const r = await sendControl<VerbResult>(where.socketPath, { verb: 'retry', ...(abs === undefined ? {} : { path: abs }) });
    process.stdout.write(`${r.message}\n`);
    return 0;
  } catch (e) {
    if (!(e instanceof DaemonNotRunningError)) {
      process.stderr.write(`boxsync: ${e instanceof Error ? e.message : String(e)}\n`);
      return 2;
    }
  }
  return retryInJournal(abs, opts.config);
}

/** No daemon: clear the rows in the journal under the state-dir lock; the next run retries them. */
async function retryInJournal(abs: string | undefined, configPath: string | undefined): Promise<number> {
  const say = (line: string): void => void process.stderr.write(`boxsync: ${line}\n`);
  const { escapeText } = await import('../../core/escape.js');
  const { retriedText, retryTarget } = await import('../../daemon/control/retry-command.js');
  const { configAndLock, lockTaken } = await import('./sync.js');
  const opened = lockTaken(await configAndLock(configPath, process.env, say));
  if (opened === null) return 2;
  const { config, lock } = opened;
  try {
    const target = abs === undefined ? undefined : retryTarget(config.folders, abs);
    if (target === null) {
      say(`${escapeText(abs ?? '')} is not inside any configured sync folder; nothing was changed`);
      return 2;
    }
    const { join } = await import('node:path');
    const { openJournal } = await import('../../journal/index.js');
    const { retryParks } = await import('../../engine/park-recheck.js');
    const { journal } = openJournal(join(config.stateDir, 'journal.db'));
    try {
      const rows = retryParks(journal, config.folders, target);
      process.stdout.write(`${retriedText(rows, 'at the next run (`boxsync sync --once`, or the daemon when it starts)', abs)}\n`);
      return 0;
    } finally {
      journal.close();
    }
  } catch (e) {
    say(`retry failed: ${e instanceof Error ? e.message : String(e)}; nothing was changed`);
    return 2;
  } finally {
    lock.release();
  }
}
