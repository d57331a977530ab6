/**
 * Refuses every TCP connection this process opens except to box-server's own port on loopback, so no SDK
 * test can reach Box (or any other host) by accident: net.Socket#connect is the one door that node-fetch
 * (http/https), undici (global fetch) and tls all go through. A refused connection throws at once, naming the
 * host, and is recorded so the file fails in afterAll even if a test swallowed the error.
 */
import net from 'node:net';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '::ffff:127.0.0.1']);

export interface NetGuard {
  readonly refused: readonly string[];
  uninstall(): void;
}

function target(args: unknown[]): { host: string; port: number } | null {
  let a = args[0];
  if (Array.isArray(a)) a = a[0]; // internal normalized form: [options, cb]
  if (typeof a === 'object' && a !== null) {
    const o = a as { host?: string; port?: number | string; path?: string };
    if (o.path !== undefined && o.port === undefined) return null; // unix socket / pipe: local IPC
    return { host: o.host ?? 'localhost', port: Number(o.port) };
  }
  if (typeof a === 'number' || (typeof a === 'string' && /^\d+$/.test(a))) {
    return { host: typeof args[1] === 'string' ? args[1] : 'localhost', port: Number(a) };
  }
  return null; // a path string: unix socket
}

export function installNetGuard(allowedPort: () => number): NetGuard {
  const refused: string[] = [];
  const proto = net.Socket.prototype as unknown as { connect: (...args: unknown[]) => unknown };
  const original = proto.connect;
  proto.connect = function guardedConnect(this: net.Socket, ...args: unknown[]): unknown {
    const t = target(args);
    if (t && !(LOOPBACK.has(t.host) && t.port === allowedPort())) {
      const what = `${t.host}:${t.port}`;
      refused.push(what);
      throw new Error(`sdk-suite network guard: refused a connection to ${what}; only box-server (127.0.0.1:${allowedPort()}) may be reached`);
    }
    return original.apply(this, args);
  };
  return {
    refused,
    uninstall() {
      proto.connect = original;
    },
  };
}
