/**
 * The client side of `boxsync status` and the control verbs: find the socket, ask, print. Returns the exit
 * code (src/daemon/exit-codes.ts STATUS_EXIT): 0 answered (and, for `status`, healthy), 1 `status` found
 * something that needs attention, 2 the daemon refused or failed the request, 3 no daemon running.
 * `status --json` always prints one JSON object, with `"running": false` when no daemon answers.
 */
import { resolve } from 'node:path';
import { DaemonNotRunningError, sendControl } from './control-client.js';
import type { ControlRequest, DaemonStatus, PathStatus, VerbResult } from './control-protocol.js';
import { STATUS_EXIT } from './exit-codes.js';
import { readLastExit } from './last-exit.js';
import { daemonLocation } from './socket-path.js';
import { attentionReasons, formatDaemonStatus, formatNotRunning, formatPathStatus } from './status-text.js';

interface ClientOpts {
  readonly socket?: string | undefined;
  readonly config?: string | undefined;
}

export async function runStatus(opts: ClientOpts & { path?: string | undefined; json: boolean }): Promise<number> {
  const where = await daemonLocation(opts);
  const json = (v: unknown): void => void process.stdout.write(`${JSON.stringify(v, null, 2)}\n`);
  try {
    if (opts.path !== undefined) {
      const p = await sendControl<PathStatus>(where.socketPath, { verb: 'status-path', path: resolve(opts.path) });
      if (opts.json) json({ running: true, ...p });
      else process.stdout.write(formatPathStatus(p));
      return p.state === 'failed' ? STATUS_EXIT.attention : STATUS_EXIT.healthy;
    }
    const s = await sendControl<DaemonStatus>(where.socketPath, { verb: 'status' });
    const attention = attentionReasons(s);
    if (opts.json) json({ running: true, healthy: attention.length === 0, attention, ...s });
    else process.stdout.write(formatDaemonStatus(s));
    return attention.length === 0 ? STATUS_EXIT.healthy : STATUS_EXIT.attention;
  } catch (e) {
    if (e instanceof DaemonNotRunningError) {
      const last = where.stateDir === null ? null : readLastExit(where.stateDir);
      if (opts.json) json({ running: false, socket: where.socketPath, lastExit: last });
      else process.stderr.write(`boxsync: ${formatNotRunning(where.socketPath, last)}`);
      return STATUS_EXIT.notRunning;
    }
    const message = e instanceof Error ? e.message : String(e);
    if (opts.json) json({ running: null, socket: where.socketPath, error: message });
    else process.stderr.write(`boxsync: ${message}\n`);
    return STATUS_EXIT.failed;
  }
}

export async function runControlVerb(req: Exclude<ControlRequest, { verb: 'status' | 'status-path' }>, opts: ClientOpts): Promise<number> {
  return withDaemon(opts, async (socketPath) => {
    const r = await sendControl<VerbResult>(socketPath, req);
    process.stdout.write(`${r.message}\n`);
    return 0;
  });
}

async function withDaemon(opts: ClientOpts, fn: (socketPath: string) => Promise<number>): Promise<number> {
  const { socketPath } = await daemonLocation(opts);
  try {
    return await fn(socketPath);
  } catch (e) {
    if (e instanceof DaemonNotRunningError) {
      process.stderr.write(`boxsync: ${e.message}\n`);
      return STATUS_EXIT.notRunning;
    }
    process.stderr.write(`boxsync: ${e instanceof Error ? e.message : String(e)}\n`);
    return STATUS_EXIT.failed;
  }
}
