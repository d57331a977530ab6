/**
 * The client side of `boxsync status` and the control verbs: find the socket, ask, print. Returns the exit
 * code: 0 answered, 1 no daemon running, 2 the daemon refused or failed the request.
 */
import { resolve } from 'node:path';
import { DaemonNotRunningError, sendControl } from './control-client.js';
import type { ControlRequest, DaemonStatus, PathStatus, VerbResult } from './control-protocol.js';
import { controlSocketPath } from './socket-path.js';
import { formatDaemonStatus, formatPathStatus } from './status-text.js';

interface ClientOpts {
  readonly socket?: string | undefined;
  readonly config?: string | undefined;
}

export async function runStatus(opts: ClientOpts & { path?: string | undefined; json: boolean }): Promise<number> {
  return withDaemon(opts, async (socketPath) => {
    if (opts.path !== undefined) {
      const p = await sendControl<PathStatus>(socketPath, { verb: 'status-path', path: resolve(opts.path) });
      process.stdout.write(opts.json ? `${JSON.stringify(p, null, 2)}\n` : formatPathStatus(p));
      return 0;
    }
    const s = await sendControl<DaemonStatus>(socketPath, { verb: 'status' });
    process.stdout.write(opts.json ? `${JSON.stringify(s, null, 2)}\n` : formatDaemonStatus(s));
    return 0;
  });
}

export async function runControlVerb(req: Exclude<ControlRequest, { verb: 'status' | 'status-path' }>, opts: ClientOpts): Promise<number> {
  return withDaemon(opts, async (socketPath) => {
    const r = await sendControl<VerbResult>(socketPath, req);
    process.stdout.write(`${r.message}\n`);
    return 0;
  });
}

async function withDaemon(opts: ClientOpts, fn: (socketPath: string) => Promise<number>): Promise<number> {
  const socketPath = await controlSocketPath(opts);
  try {
    return await fn(socketPath);
  } catch (e) {
    if (e instanceof DaemonNotRunningError) {
      process.stderr.write(`boxsync: ${e.message}\n`);
      return 1;
    }
    process.stderr.write(`boxsync: ${e instanceof Error ? e.message : String(e)}\n`);
    return 2;
  }
}
