/**
 * The client side of `boxsync status` and the control verbs: find the socket, ask, print. Returns the exit
 * code (src/daemon/control/exit-codes.ts STATUS_EXIT): 0 answered (and, for `status`, healthy), 1 `status` found
 * something that needs attention, 2 the daemon refused or failed the request, 3 no daemon running.
 * `status --json` always prints one JSON object, with `"running": false` when no daemon answers.
 */
import { resolve } from 'node:path';
import { safeText, terminalSafeJson } from '../../core/escape.js';
import { DaemonNotRunningError, sendControl } from './control-client.js';
import type { ControlRequest, DaemonStatus, PathStatus, UiLoginResult, VerbResult } from './control-protocol.js';
import { STATUS_EXIT } from './exit-codes.js';
import { readLastExit, type LastExit } from './last-exit.js';
import { daemonLocation } from './socket-path.js';
import { attentionReasons, formatDaemonStatus, formatNotRunning, formatPathStatus } from './status-text.js';

interface ClientOpts {
  readonly socket?: string | undefined;
  readonly config?: string | undefined;
}

type DaemonLocation = Awaited<ReturnType<typeof daemonLocation>>;

/** How a command says that it could not get an answer: no daemon runs, or the request failed. */
interface FailureReport {
  notRunning(where: DaemonLocation, e: DaemonNotRunningError): void;
  failed(where: DaemonLocation, message: string): void;
}

const plainReport: FailureReport = {
  notRunning: (_where, e) => void process.stderr.write(`boxsync: ${safeText(e.message, 4000)}\n`),
  failed: (_where, message) => void process.stderr.write(`boxsync: ${safeText(message, 4000)}\n`),
};

const statusTextReport: FailureReport = {
  notRunning: (where) => void process.stderr.write(`boxsync: ${formatNotRunning(where.socketPath, lastExitAt(where))}`),
  failed: plainReport.failed,
};

const statusJsonReport: FailureReport = {
  notRunning: (where) => printJson({ running: false, socket: where.socketPath, lastExit: lastExitAt(where) }),
  failed: (where, message) => printJson({ running: null, socket: where.socketPath, error: message }),
};

export async function runStatus(opts: ClientOpts & { path?: string | undefined; json: boolean }): Promise<number> {
  return withDaemon(opts, opts.json ? statusJsonReport : statusTextReport, async ({ socketPath }) => {
    if (opts.path !== undefined) {
      const p = await sendControl<PathStatus>(socketPath, { verb: 'status-path', path: resolve(opts.path) });
      if (opts.json) printJson({ running: true, ...p });
      else process.stdout.write(formatPathStatus(p));
      return p.state === 'failed' ? STATUS_EXIT.attention : STATUS_EXIT.healthy;
    }
    const s = await sendControl<DaemonStatus>(socketPath, { verb: 'status' });
    const attention = attentionReasons(s);
    if (opts.json) printJson({ running: true, healthy: attention.length === 0, attention, ...s });
    else process.stdout.write(formatDaemonStatus(s));
    return attention.length === 0 ? STATUS_EXIT.healthy : STATUS_EXIT.attention;
  });
}

export async function runControlVerb(req: Exclude<ControlRequest, { verb: 'status' | 'status-path' }>, opts: ClientOpts): Promise<number> {
  return withDaemon(opts, plainReport, async ({ socketPath }) => {
    const r = await sendControl<VerbResult>(socketPath, req);
    process.stdout.write(`${r.message}\n`);
    return 0;
  });
}

/** `boxsync ui`: a one-time login link to the web page from the daemon, handed to `use` (print or open it). */
export async function runUiLogin(opts: ClientOpts, use: (url: string) => Promise<number>): Promise<number> {
  return withDaemon(opts, plainReport, async ({ socketPath }) => use((await sendControl<UiLoginResult>(socketPath, { verb: 'ui-login' })).url));
}

/** The one place that turns "no daemon" and a failed request into a report and an exit code. */
async function withDaemon(opts: ClientOpts, report: FailureReport, fn: (where: DaemonLocation) => Promise<number>): Promise<number> {
  const where = await daemonLocation(opts);
  try {
    return await fn(where);
  } catch (e) {
    if (e instanceof DaemonNotRunningError) {
      report.notRunning(where, e);
      return STATUS_EXIT.notRunning;
    }
    report.failed(where, e instanceof Error ? e.message : String(e));
    return STATUS_EXIT.failed;
  }
}

function lastExitAt(where: DaemonLocation): LastExit | null {
  return where.stateDir === null ? null : readLastExit(where.stateDir);
}

function printJson(v: unknown): void {
  process.stdout.write(`${terminalSafeJson(JSON.stringify(v, null, 2))}\n`);
}
