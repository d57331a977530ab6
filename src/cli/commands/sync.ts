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
import { assertNever } from '../../core/operations.js';
import { errorText, safeText } from '../../core/escape.js';
import type { Logger } from '../../logger.js';
import type { Config } from '../../config/index.js';
import { shutdownReason } from '../../core/errors.js';
import type { RunSummary } from '../../engine/types.js';
import { configAndLock, type ExitCode } from './config-and-lock.js';
import { memoryReport } from '../memory-report.js';
import { runJournalCacheKiB } from '../../journal/cache-size.js';
import { runHeapPolicy } from '../run-heap.js';
import { gatherLines } from '../gathered-lines.js';
import { firstOfEach, phase, phasesOn } from '../phases.js';

export { configAndLock, lockTaken, type ExitCode } from './config-and-lock.js';

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
      const ac = new AbortController();
      const onSignal = (sig: NodeJS.Signals): void => {
        if (ac.signal.aborted) {
          // A second Ctrl-C: leave now. The lock becomes stale and the next run takes it over.
          process.stderr.write(`boxsync: ${sig} again: exiting at once; the next run picks up from the journal.\n`);
          process.exit(1);
        }
        process.stderr.write(`boxsync: ${sig}: stopping; transfers in flight are cancelled or checkpointed (press again to exit at once)...\n`);
        // Bounded whatever state the run is in: the journal is crash-safe, so leaving at the bound loses nothing.
        setTimeout(() => {
          process.stderr.write('boxsync: still stopping after 4 s; exiting now. The next run picks up from the journal.\n');
          process.exit(1);
        }, 4_000).unref();
        // A shutdown, not a cancel: uploads in flight keep their Box session for the next run to resume.
        ac.abort(shutdownReason(`interrupted by ${sig}; the next run resumes where this one stopped`));
      };
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      try {
        process.exitCode = await runSyncOnce({
          configPath: opts.config,
          fullRescan: opts.fullRescan ?? false,
          signal: ac.signal,
          verbose: isVerbose(cmd),
          bandwidthBytesPerSec: bw.bandwidthBytesPerSec,
          confirm: opts.confirm,
          acceptNewRoots: opts.acceptNewRoot,
        });
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
    });
}

export async function runSyncOnce(opts: SyncOnceOptions = {}): Promise<ExitCode> {
  const tty = opts.tty ?? Boolean(process.stderr.isTTY);
  if (tty) return syncOnce({ ...opts, tty });
  // Without a terminal: a line per operation on stderr, gathered into one write a turn (gathered-lines.ts); stdout
  // (the summary) is written after what stderr gathered before it.
  const gathered = gatherLines(opts.err ?? process.stderr);
  const out = opts.out ?? process.stdout;
  const outAfterErr = {
    write: (...a: Parameters<NodeJS.WritableStream['write']>): boolean => {
      gathered.flush();
      return out.write(...(a as [string]));
    },
  } as unknown as NodeJS.WritableStream;
  try {
    return await syncOnce({ ...opts, tty, err: gathered.stream, out: outAfterErr });
  } finally {
    gathered.close();
  }
}

async function syncOnce(opts: SyncOnceOptions & { readonly tty: boolean }): Promise<ExitCode> {
  const env = opts.env ?? process.env;
  const out = opts.out ?? process.stdout;
  const tty = opts.tty;
  const err = opts.err ?? process.stderr;
  // Messages here carry Box's and the disk's words (an error naming a path): escaped as they are printed.
  const say = (line: string): void => void err.write(`boxsync: ${safeText(line, 4000)}\n`);

  const { isSyncError } = await import('../../core/errors.js');
  phase('command');
  // The daemon holds the state dir: it runs the pass (it already watches both sides), this process waits for it.
  const opened = await configAndLock(opts.configPath, env, say, 'hand-off');
  if (opened === null) return 2;
  if (!('lock' in opened)) return handToDaemon(opened.config, opened.daemonPid, opts, say);
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

/** The longest `sync --once` waits for the daemon's pass (a first pass over a very big tree can take hours). */
const HAND_OFF_WAIT_MS = 12 * 60 * 60 * 1000;

/**
 * `sync --once` while the daemon holds the state dir: the daemon runs the pass (control verb `sync-once`:
 * lifecycle/session.ts), with every change made before this request in it, and this process prints what it did and
 * exits with the same codes as a run of its own. Ctrl-C stops the waiting, not the daemon's pass.
 */
async function handToDaemon(config: Config, pid: number, opts: SyncOnceOptions & { readonly tty: boolean }, say: (line: string) => void): Promise<ExitCode> {
  if (opts.bandwidthBytesPerSec !== undefined) {
    say(`the daemon (pid ${pid}) is syncing ${config.stateDir} and runs at its own bandwidth limit, so --bwlimit cannot apply to this run; nothing was run. \`boxsync bwlimit RATE\` sets the daemon's limit now.`);
    return 2;
  }
  if (opts.freeSpace === true || opts.inspect !== undefined || opts.onSummary !== undefined) {
    say(`the daemon (pid ${pid}) is syncing ${config.stateDir}; stop it first (\`boxsync status\` shows it). Nothing was run.`);
    return 2;
  }
  const { sendControl, DaemonNotRunningError } = await import('../../daemon/control/control-client.js');
  const confirm = opts.confirm ?? [];
  const ids = [...confirm];
  if ((opts.acceptNewRoots ?? []).length > 0) {
    const guards = await confirmedGuards(config, { acceptNewRoots: opts.acceptNewRoots ?? [] });
    if (typeof guards === 'string') {
      say(guards);
      return 2;
    }
    ids.push(...guards);
  }
  const err = opts.err ?? process.stderr;
  err.write(`boxsync: the daemon (pid ${pid}) is syncing ${config.stateDir}: this run is handed to it. It looks for every change made until now and syncs it; the summary follows when it is done.\n`);
  const { createRunReporter } = await import('../progress.js');
  const reporter = createRunReporter({ tty: opts.tty, out: opts.out ?? process.stdout, err });
  try {
    phase('asking the daemon');
    const r = await sendControl<import('../../daemon/control/control-protocol.js').SyncOnceResult>(
      config.socketPath,
      { verb: 'sync-once', ...(opts.fullRescan ? { fullRescan: true } : {}), ...(ids.length > 0 ? { confirm: ids } : {}) },
      { timeoutMs: HAND_OFF_WAIT_MS, ...(opts.signal ? { signal: opts.signal } : {}) },
    );
    phase('daemon answered');
    for (const note of r.notes) say(note);
    for (const o of r.operations) reporter.onOperation(o);
    if (r.operationsLeftOut > 0) say(`... and ${r.operationsLeftOut} more operations (the daemon's log has them)`);
    reporter.finish(r.summary);
    return exitCodeOf(r.summary);
  } catch (e) {
    reporter.abort();
    if (opts.signal?.aborted) {
      say('stopped waiting; the daemon carries on with the pass (`boxsync status` shows it).');
      return 1;
    }
    if (e instanceof DaemonNotRunningError) {
      say(`the daemon (pid ${pid}) holds ${config.stateDir} but does not answer on its control socket ${config.socketPath}, so this run did not start and nothing was changed. \`boxsync status\` shows what it is doing.`);
      return 2;
    }
    say(`the daemon (pid ${pid}) did not run the pass: ${e instanceof Error ? e.message : String(e)}`);
    return 2;
  }
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

export function exitCodeOf(summary: RunSummary): ExitCode {
  switch (summary.outcome) {
    case 'converged':
      return 0;
    case 'failed-items':
      return 1;
    case 'fatal':
      return 2;
    case 'guard':
      return 3;
    default:
      return assertNever(summary.outcome);
  }
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
