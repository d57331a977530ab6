/**
 * `boxsync sync --once [--config FILE] [--full-rescan]`: one pass of the engine to quiescence, then exit.
 *
 * Exit codes: 0 converged; 1 some items failed and will be retried (also: interrupted by a signal); 2 fatal
 * (config, lock held, auth, journal); 3 stopped by a safety guard (e.g. the mass-delete guard).
 *
 * Order matters for "loses nothing": the config is validated before anything is touched, the state-dir lock is
 * taken before the journal is opened, and the lock is released only after the engine and journal are closed.
 * `runSyncOnce` is also what `boxsync demo` runs in-process.
 */
import type { Command } from 'commander';
import { join } from 'node:path';
import { parseRate } from '../../remote/box/bandwidth.js';
import { isVerbose } from '../global-options.js';
import { errorText } from '../../core/escape.js';
import type { Logger } from '../../logger.js';
import type { Config } from '../../config/index.js';
import type { RunSummary } from '../../engine/types.js';
import { configAndLock, type ExitCode } from './config-and-lock.js';
import { memoryReport } from '../memory-report.js';
import { runJournalCacheKiB } from '../../journal/cache-size.js';
import { runHeapPolicy } from '../run-heap.js';
import { withRunStreams, type RunStreams } from '../gathered-lines.js';
import { withRunSignals } from '../run-signals.js';
import { exitCodeOf, handToDaemon, sayTo } from './hand-off.js';
import { firstOfEach, phase, phasesOn } from '../phases.js';

export { configAndLock, lockTaken, type ExitCode } from './config-and-lock.js';
export { exitCodeOf } from './hand-off.js';

export interface SyncOnceOptions {
  /** `--config FILE`; else BOXSYNC_CONFIG, else the XDG default. */
  readonly configPath?: string | undefined;
  readonly env?: NodeJS.ProcessEnv;
  readonly out?: NodeJS.WritableStream;
  readonly err?: NodeJS.WritableStream;
  /** Draw a progress bar instead of log lines (default: stderr is a TTY). */
  readonly tty?: boolean;
  readonly fullRescan?: boolean;
  readonly signal?: AbortSignal;
  /** Called with the summary of a run that reached the engine (the demo prints more from it). */
  readonly onSummary?: (summary: RunSummary, config: Config) => void;
  /** `-v/--verbose`: log at debug level unless BOXSYNC_LOG_LEVEL says otherwise. */
  readonly verbose?: boolean;
  /** `--confirm ID` (repeatable): safety guards the user confirmed for this run, as `boxsync status` or the last run showed them. */
  readonly confirm?: readonly string[];
  /** `--accept-new-root ROOT` (repeatable): root ids or local paths whose folder is accepted as the new root. */
  readonly acceptNewRoots?: readonly string[];
  /** `--bwlimit RATE` read (see readBwlimit); undefined: the config's http.bwlimitKiBps. */
  readonly bandwidthBytesPerSec?: number | null | undefined;
  /** `selective exclude --free-space`: a deselected folder is removed, not moved to the local trash. */
  readonly freeSpace?: boolean;
  /** Called after the run, before the journal closes (`selective exclude` checks what the run left). */
  readonly inspect?: (c: Awaited<ReturnType<typeof import('../../daemon/compose.js').compose>>) => Promise<void>;
}

/**
 * `--bwlimit RATE` (sync, daemon), read before anything runs: `bandwidthBytesPerSec` is handed to compose, where it
 * wins over the config's http.bwlimitKiBps (undefined without --bwlimit, or with an empty one: the config's cap;
 * null for `off`). Null (exit code 2 set, message printed) when the rate cannot be read.
 */
export function readBwlimit(rate: string | undefined): { readonly bandwidthBytesPerSec: number | null | undefined } | null {
  if (rate === undefined || rate === '') return { bandwidthBytesPerSec: undefined };
  try {
    return { bandwidthBytesPerSec: parseRate(rate) };
  } catch (e) {
    process.stderr.write(`boxsync: --bwlimit: ${errorText(e)}. Nothing was done.\n`);
    process.exitCode = 2;
    return null;
  }
}

export function register(program: Command): void {
  program
    .command('sync')
    .description('Sync every configured folder pair once, until nothing is left to do, then exit (0 converged, 1 items failed, 2 fatal, 3 safety guard)')
    .option('--once', 'run one pass to convergence and exit (the only mode; live sync is `boxsync daemon`)')
    .option('-c, --config <file>', 'config file (default: $BOXSYNC_CONFIG, else $XDG_CONFIG_HOME/boxsync/config.json)')
    .option('--full-rescan', 'hash-check the whole local tree and list the whole remote tree instead of using the event cursor')
    .option('--bwlimit <rate>', 'cap the total transfer rate, e.g. 500K or 2M per second (overrides http.bwlimitKiBps)')
    .option('-n, --dry-run', 'print the plan (every operation and its reason, and what the safety guards would do) and change nothing (0 printed, 2 fatal, 3 a guard would stop the run)')
    .option('--json', 'with --dry-run: print the plan as JSON')
    .option('--confirm <id>', 'confirm a safety guard that stopped the last run, by the id it printed (repeatable)', collect, [])
    .option(
      '--accept-new-root <root>',
      'the local folder of ROOT (its id or local path) was replaced on purpose: accept it and merge it with Box as on a first sync (nothing is deleted) (repeatable)',
      collect,
      [],
    )
    .action(async (opts: { once?: boolean; config?: string; fullRescan?: boolean; bwlimit?: string; dryRun?: boolean; json?: boolean; confirm: string[]; acceptNewRoot: string[] }, cmd: Command) => {
      const bw = readBwlimit(opts.bwlimit);
      if (bw === null) return;
      if (opts.dryRun) {
        const { runSyncDryRun } = await import('./sync-dry-run.js');
        process.exitCode = await runSyncDryRun({ configPath: opts.config, fullRescan: opts.fullRescan ?? false, json: opts.json === true });
        return;
      }
      if (!opts.once) {
        process.stderr.write('boxsync sync: add --once (one pass, then exit); for continuous sync run `boxsync daemon`. Nothing was done.\n');
        process.exitCode = 2;
        return;
      }
      process.exitCode = await withRunSignals((signal) =>
        runSyncOnce({
          configPath: opts.config,
          fullRescan: opts.fullRescan ?? false,
          signal,
          verbose: isVerbose(cmd),
          bandwidthBytesPerSec: bw.bandwidthBytesPerSec,
          confirm: opts.confirm,
          acceptNewRoots: opts.acceptNewRoot,
        }),
      );
    });
}

export async function runSyncOnce(opts: SyncOnceOptions = {}): Promise<ExitCode> {
  return withRunStreams(opts, (streams) => syncOnce({ ...opts, ...streams }));
}

async function syncOnce(opts: SyncOnceOptions & RunStreams): Promise<ExitCode> {
  const env = opts.env ?? process.env;
  const { out, tty, err } = opts;
  // Messages here carry Box's and the disk's words (an error naming a path): escaped as they are printed.
  const say = sayTo(err);

  const { isSyncError } = await import('../../core/errors.js');
  phase('command');
  // The daemon holds the state dir: it runs the pass (it already watches both sides), this process waits for it.
  const opened = await configAndLock(opts.configPath, env, say, 'hand-off');
  if (opened === null) return 2;
  if (!('lock' in opened)) return handOver(opened.config, opened.daemonPid, opts, say);
  phase('config and lock');
  const { config, lock } = opened;
  // V8's defaults over a journal already there, the small heap again once the pass plans big transfers (run-heap.ts).
  const heapWatch = runHeapPolicy(join(config.stateDir, 'journal.db'));
  const confirm = await confirmedGuards(config, opts);
  if (typeof confirm === 'string') {
    say(confirm);
    lock.release();
    return 2;
  }

  const { createRunReporter } = await import('../progress.js');
  const reporter = createRunReporter({ tty, out, err });
  const logger = await cliLogger(config, { env, verbose: opts.verbose === true }, err, tty, (text) => reporter.log(text));
  if (lock.tookOverFromPid !== null) logger.warn({ pid: lock.tookOverFromPid }, 'took over a stale lock left by a process that is gone');
  phase('logger');
  let composition: Awaited<ReturnType<typeof import('../../daemon/compose.js').compose>> | undefined;
  try {
    const { compose } = await import('../../daemon/compose.js');
    // BOXSYNC_PHASES=1: the first time the engine reaches each of its phases (listing, scanning, planning, ...).
    const phases = phasesOn() ? firstOfEach() : null;
    // As big as the journal was at the start (a first mirror's: the least): journal/cache-size.ts.
    const journalCacheKiB = runJournalCacheKiB(join(config.stateDir, 'journal.db'));
    composition = await compose({
      config,
      logger,
      events: { onStatus: phases === null ? reporter.onStatus : (st) => (phases(st.phase), reporter.onStatus(st)), onPlanned: heapWatch, onOperation: reporter.onOperation, onNotice: reporter.onNotice },
      bandwidthBytesPerSec: opts.bandwidthBytesPerSec,
      freeSpace: opts.freeSpace === true,
      journalCacheKiB,
    });
    phase('composed');
    if (composition.journalRebuilt !== null) {
      say(`the journal failed its integrity check (${composition.journalRebuilt}); it was set aside and is rebuilt from a fresh scan and listing. No file is touched for this.`);
    }
    const summary = await composition.engine.runOnce({ ...(opts.signal ? { signal: opts.signal } : {}), fullRescan: opts.fullRescan ?? false, confirm });
    phase('pass done');
    reporter.finish(summary);
    logger.debug({ ...memoryReport(), journalCacheKiB }, 'memory tuning');
    opts.onSummary?.(summary, config);
    await opts.inspect?.(composition);
    if (opts.signal?.aborted && summary.outcome !== 'converged') {
      say('interrupted; nothing is lost, and the next run picks up where this one stopped.');
    }
    return exitCodeOf(summary);
  } catch (e) {
    reporter.abort();
    if (opts.signal?.aborted) {
      say('interrupted; nothing is lost, and the next run picks up where this one stopped.');
      return 1;
    }
    if (isSyncError(e)) {
      say(e.message);
      return e.disposition === 'fatal' ? 2 : 1;
    }
    logger.error({ err: e }, 'unexpected error');
    say(`unexpected error: ${e instanceof Error ? e.message : String(e)}. Nothing was deleted; run again, and report this if it repeats.`);
    return 2;
  } finally {
    await composition?.close().catch((e: unknown) => logger.error({ err: e }, 'error while closing'));
    lock.release();
    phase('closed');
  }
}

/**
 * `sync --once` while the daemon holds the state dir: handed to it (hand-off.ts), unless this run asks for what only
 * a run of its own can do (refused, exit 2, nothing run).
 */
async function handOver(config: Config, pid: number, opts: SyncOnceOptions & RunStreams, say: (line: string) => void): Promise<ExitCode> {
  if (opts.bandwidthBytesPerSec !== undefined) {
    say(`the daemon (pid ${pid}) is syncing ${config.stateDir} and runs at its own bandwidth limit, so --bwlimit cannot apply to this run; nothing was run. \`boxsync bwlimit RATE\` sets the daemon's limit now.`);
    return 2;
  }
  if (opts.freeSpace === true || opts.inspect !== undefined || opts.onSummary !== undefined) {
    say(`the daemon (pid ${pid}) is syncing ${config.stateDir}; stop it first (\`boxsync status\` shows it). Nothing was run.`);
    return 2;
  }
  const ids = [...(opts.confirm ?? [])];
  if ((opts.acceptNewRoots ?? []).length > 0) {
    const guards = await confirmedGuards(config, { acceptNewRoots: opts.acceptNewRoots ?? [] });
    if (typeof guards === 'string') {
      say(guards);
      return 2;
    }
    ids.push(...guards);
  }
  return handToDaemon(config, pid, { ...opts, confirm: ids });
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** The guard ids `--confirm` and `--accept-new-root` name, or what is wrong with them (exit 2, nothing done). */
async function confirmedGuards(config: Config, opts: Pick<SyncOnceOptions, 'confirm' | 'acceptNewRoots'>): Promise<string[] | string> {
  const { parseGuardId, guardIdText } = await import('../../engine/guard-id.js');
  const { resolve } = await import('node:path');
  const { escapeText } = await import('../../core/escape.js');
  const out: string[] = [];
  for (const id of opts.confirm ?? []) {
    if (parseGuardId(id) === null) return `--confirm: "${escapeText(id)}" is not a safety guard id (they look like mass-delete:ROOT:COUNT or local-root-empty:ROOT); nothing was done`;
    out.push(id);
  }
  for (const name of opts.acceptNewRoots ?? []) {
    const root = config.folders.find((r) => r.id === name || r.localPath === resolve(name));
    if (root === undefined) return `--accept-new-root: "${escapeText(name)}" is neither the id nor the local path of a configured root; nothing was done`;
    out.push(guardIdText({ kind: 'local-root-missing', root: root.id }));
  }
  return out;
}

/**
 * Logs on stderr: JSON lines, pretty-printed on a TTY. At the default level ('info') only warnings and errors are
 * logged, because every operation is already shown, as a plain line or on the bar; `debug`/`trace` (or
 * BOXSYNC_LOG_LEVEL) bring the engine's own lines back.
 */
async function cliLogger(
  config: Config,
  asked: { readonly env: NodeJS.ProcessEnv; readonly verbose: boolean },
  err: NodeJS.WritableStream,
  tty: boolean,
  aboveBar: (text: string) => void,
): Promise<Logger> {
  const { createLogger, logLevelFor } = await import('../../logger.js');
  // 'info' is the default: the operations are already shown, so only warnings are logged unless asked for more.
  const level = logLevelFor(config.log.level === 'info' ? 'warn' : config.log.level, { ...asked, warn: (m) => void err.write(`boxsync: ${m}\n`) });
  if (!tty) return createLogger({ level, destination: err });
  const { default: pretty } = await import('pino-pretty');
  // On a TTY log lines go above the progress bar, never into its line.
  const { Writable } = await import('node:stream');
  const above = new Writable({
    write(chunk: Buffer, _enc, done) {
      aboveBar(chunk.toString());
      done();
    },
  });
  // Every string of a line is escaped before pino-pretty prints it raw (a name holding ESC[2J or a newline).
  return createLogger({ level, escapeStrings: true, destination: pretty({ destination: above, colorize: true, translateTime: 'SYS:HH:MM:ss', sync: true }) });
}
