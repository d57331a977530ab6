/**
 * The control socket client used by `boxsync status` and the control verbs. One connection per call.
 * When nobody answers on the socket it throws DaemonNotRunningError, which the CLI turns into exit code 1.
 */
import { createConnection } from 'node:net';
import type { ControlRequest, ControlResponse } from './control-protocol.js';

export class DaemonNotRunningError extends Error {
  constructor(readonly socketPath: string) {
    super(`no boxsync daemon is running (nothing answers on ${socketPath}); start it with \`boxsync daemon\` or \`systemctl --user start boxsync\``);
    this.name = 'DaemonNotRunningError';
  }
}

/** The daemon answered with an error; `code` is set for item commands (an ItemErrorKind). */
export class ControlRequestError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
    this.name = 'ControlRequestError';
  }
}

export async function sendControl<T>(socketPath: string, req: ControlRequest, timeoutMs = 10_000): Promise<T> {
  const res = await new Promise<ControlResponse<T>>((resolve, reject) => {
    const socket = createConnection(socketPath);
    let buffer = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the daemon did not answer on ${socketPath} within ${timeoutMs} ms; it may be busy or hung (see its log)`));
    }, timeoutMs);
    socket.setEncoding('utf8');
    socket.once('connect', () => socket.write(`${JSON.stringify(req)}\n`));
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      const nl = buffer.indexOf('\n');
      if (nl < 0) return;
      clearTimeout(timer);
      socket.end();
      try {
        resolve(JSON.parse(buffer.slice(0, nl)) as ControlResponse<T>);
      } catch {
        reject(new Error(`the daemon on ${socketPath} sent an unreadable answer`));
      }
    });
    socket.once('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      if (e.code === 'ENOENT' || e.code === 'ECONNREFUSED' || e.code === 'ENOTSOCK') reject(new DaemonNotRunningError(socketPath));
      else reject(e);
    });
  });
  if (!res.ok) throw new ControlRequestError(res.error, res.code);
  return res.result;
}
