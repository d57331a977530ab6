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

/**
 * One request, one answer. `wait`: the bound in ms (default 10 s), or `{ timeoutMs, signal }` (the signal stops the
 * waiting: the request is not taken back). A connection the daemon closes without an answer rejects at once.
 */
export async function sendControl<T>(socketPath: string, req: ControlRequest, wait: number | { readonly timeoutMs: number; readonly signal?: AbortSignal } = 10_000): Promise<T> {
  const timeoutMs = typeof wait === 'number' ? wait : wait.timeoutMs;
  const signal = typeof wait === 'number' ? undefined : wait.signal;
  const res = await new Promise<ControlResponse<T>>((resolve, reject) => {
    const socket = createConnection(socketPath);
    let buffer = '';
    let settled = false;
    const finish = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      fn();
    };
    const timer = setTimeout(() => {
      socket.destroy();
      finish(() => reject(new Error(`the daemon did not answer on ${socketPath} within ${timeoutMs} ms; it may be busy or hung (see its log)`)));
    }, timeoutMs);
    const onAbort = (): void => {
      socket.destroy();
      finish(() => reject(signal?.reason ?? new Error('stopped waiting for the daemon')));
    };
    if (signal?.aborted) onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    socket.setEncoding('utf8');
    socket.once('connect', () => socket.write(`${JSON.stringify(req)}\n`));
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      const nl = buffer.indexOf('\n');
      if (nl < 0) return;
      socket.end();
      finish(() => {
        try {
          resolve(JSON.parse(buffer.slice(0, nl)) as ControlResponse<T>);
        } catch {
          reject(new Error(`the daemon on ${socketPath} sent an unreadable answer`));
        }
      });
    });
    socket.once('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT' || e.code === 'ECONNREFUSED' || e.code === 'ENOTSOCK') finish(() => reject(new DaemonNotRunningError(socketPath)));
      else finish(() => reject(e));
    });
    socket.once('close', () => finish(() => reject(new Error(`the daemon on ${socketPath} closed the connection without answering (it may have stopped or reloaded; \`boxsync status\` says)`))));
  });
  if (!res.ok) throw new ControlRequestError(res.error, res.code);
  return res.result;
}
