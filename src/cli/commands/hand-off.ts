/**
 * `sync --once` while the daemon holds the state dir: the daemon runs the pass (control verb `sync-once`:
 * daemon/lifecycle/session.ts), with every change made before the request in it, and this process prints what it did
 * and exits with the same codes as a run of its own. Ctrl-C stops the waiting, not the daemon's pass.
 *
 * Two callers: sync.ts, when the state lock it tries to take is the daemon's, and cli/hand-off-first.ts, which a
 * built `boxsync sync --once` runs before it loads the sync engine at all (the hand-off then costs a fraction of the
 * start). Nothing here imports the config's schema or the engine.
 */
import { assertNever } from '../../core/operations.js';
import type { RunSummary } from '../../engine/types.js';
import type { SyncOnceResult } from '../../daemon/control/control-protocol.js';
import { safeText } from '../../core/escape.js';
import { phase } from '../phases.js';
import type { RunStreams } from '../gathered-lines.js';
import type { ExitCode } from './config-and-lock.js';

/** The longest `sync --once` waits for the daemon's pass (a first pass over a very big tree can take hours). */
const HAND_OFF_WAIT_MS = 12 * 60 * 60 * 1000;

/** Where the daemon is: its state dir (named in messages) and its control socket. */
export interface DaemonPlace {
  readonly stateDir: string;
  readonly socketPath: string;
}

export interface HandOffOptions extends RunStreams {
  /** `--full-rescan`, handed on. */
  readonly fullRescan?: boolean | undefined;
  /** The guard ids confirmed for this run (`--confirm`, `--accept-new-root`), handed on. */
  readonly confirm: readonly string[];
  readonly signal?: AbortSignal | undefined;
}

/** A run's own messages on `err`, as `boxsync: ...` lines; they carry Box's and the disk's words, escaped. */
export function sayTo(err: NodeJS.WritableStream): (line: string) => void {
  return (line) => void err.write(`boxsync: ${safeText(line, 4000)}\n`);
}

export async function handToDaemon(place: DaemonPlace, pid: number, opts: HandOffOptions): Promise<ExitCode> {
  const { sendControl, DaemonNotRunningError } = await import('../../daemon/control/control-client.js');
  const say = sayTo(opts.err);
  const ids = [...opts.confirm];
  opts.err.write(`boxsync: the daemon (pid ${pid}) is syncing ${place.stateDir}: this run is handed to it. It looks for every change made until now and syncs it; the summary follows when it is done.\n`);
  const { createRunReporter } = await import('../progress.js');
  const reporter = createRunReporter({ tty: opts.tty, out: opts.out, err: opts.err });
  try {
    phase('asking the daemon');
    const r = await sendControl<SyncOnceResult>(
      place.socketPath,
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
      say(`the daemon (pid ${pid}) holds ${place.stateDir} but does not answer on its control socket ${place.socketPath}, so this run did not start and nothing was changed. \`boxsync status\` shows what it is doing.`);
      return 2;
    }
    say(`the daemon (pid ${pid}) did not run the pass: ${e instanceof Error ? e.message : String(e)}`);
    return 2;
  }
}

/** A run's exit code from its summary's outcome (README, exit codes). */
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
