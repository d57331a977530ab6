/**
 * The control socket server. It creates the socket 0600 (umask is tightened around listen(2) so there is no
 * moment where the socket is wider), refuses to start when another daemon answers on the same path, and removes
 * a stale socket file left by a crash.
 *
 * The socket's directory: when boxsync creates it (the default is a private `boxsync/` folder under
 * XDG_RUNTIME_DIR), it is made 0700. A directory that already exists is never chmod'ed (it may be the user's
 * home or /tmp); instead it must belong to us and be writable by nobody else, or the daemon refuses to start
 * with a message that says so: another user who can write there could replace the socket and read or answer
 * the commands sent to it.
 */
import { chmod, lstat, mkdir, stat, unlink } from 'node:fs/promises';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { dirname } from 'node:path';
import { SyncError } from '../../core/errors.js';
import { controlRequestSchema, type ControlRequest, type ControlResponse } from './control-protocol.js';
import { ItemCommandError } from './item-protocol.js';

export type ControlHandler = (req: ControlRequest) => Promise<unknown>;

export interface ControlServer {
  readonly socketPath: string;
  close(): Promise<void>;
}

/** Longest request line accepted; anything longer is a client bug, not a reason to buffer without bound. */
const MAX_LINE_BYTES = 64 * 1024;

/** Create the socket's directory privately, or check that an existing one is private; never chmod one we did not create. */
export async function prepareSocketDir(socketPath: string): Promise<void> {
  const dir = dirname(socketPath);
  const created = await mkdir(dir, { recursive: true, mode: 0o700 });
  if (created !== undefined) {
    // mkdir's mode passes through the umask; the leaf we just made is ours to set exactly.
    await chmod(dir, 0o700);
    return;
  }
  const st = await stat(dir);
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) {
    throw new SyncError({
      code: 'socket_dir_unsafe',
      disposition: 'fatal',
      message: `the control socket's directory ${dir} belongs to another user (uid ${st.uid}); choose a socketPath in a directory of your own, or leave it unset for the private default`,
    });
  }
  if ((st.mode & 0o022) !== 0) {
    throw new SyncError({
      code: 'socket_dir_unsafe',
      disposition: 'fatal',
      message: `the control socket's directory ${dir} can be written by other users (mode ${(st.mode & 0o7777).toString(8)}); boxsync will not put its socket there and did not change the directory. Choose a socketPath in a private directory, or leave it unset for the default under XDG_RUNTIME_DIR`,
    });
  }
}

export async function startControlServer(socketPath: string, handle: ControlHandler): Promise<ControlServer> {
  await prepareSocketDir(socketPath);
  await clearStaleSocket(socketPath);
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    serveConnection(socket, handle);
  });
  const oldMask = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } finally {
    process.umask(oldMask);
  }
  await chmod(socketPath, 0o600);
  return {
    socketPath,
    close: () => closeServer(server, sockets, socketPath),
  };
}

function serveConnection(socket: Socket, handle: ControlHandler): void {
  let buffer = '';
  let chain = Promise.resolve();
  socket.setEncoding('utf8');
  socket.on('error', () => socket.destroy());
  socket.on('data', (chunk: string) => {
    buffer += chunk;
    if (buffer.length > MAX_LINE_BYTES && !buffer.includes('\n')) {
      write(socket, { ok: false, error: `request line longer than ${MAX_LINE_BYTES} bytes; closing this connection` });
      socket.end();
      return;
    }
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl).trim();
      buffer = buffer.slice(nl + 1);
      if (line === '') continue;
      chain = chain.then(async () => write(socket, await answer(line, handle)));
    }
  });
}

async function answer(line: string, handle: ControlHandler): Promise<ControlResponse> {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch {
    return { ok: false, error: 'request is not valid JSON; send one JSON object per line, e.g. {"verb":"status"}' };
  }
  const parsed = controlRequestSchema.safeParse(json);
  if (!parsed.success) {
    return {
      ok: false,
      error: 'unknown or malformed request; verbs are status, status-path {path}, pause, resume, sync-now, sync-once {fullRescan?, confirm?}, confirm-guard {id}, retry {path?}, item {request}, selective {action, path}, ui-login, bwlimit {rate}, notifications {on}',
    };
  }
  try {
    return { ok: true, result: await handle(parsed.data) };
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : String(e), ...(e instanceof ItemCommandError ? { code: e.kind } : {}) };
  }
}

function write(socket: Socket, res: ControlResponse): void {
  if (!socket.destroyed) socket.write(`${JSON.stringify(res)}\n`);
}

async function clearStaleSocket(socketPath: string): Promise<void> {
  try {
    if (!(await lstat(socketPath)).isSocket()) {
      throw new SyncError({
        code: 'socket_path_taken',
        disposition: 'fatal',
        message: `${socketPath} exists and is not a socket; nothing was changed. Remove it or set another socketPath.`,
      });
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  const alive = await new Promise<boolean>((resolve) => {
    const c = createConnection(socketPath);
    c.once('connect', () => {
      c.destroy();
      resolve(true);
    });
    c.once('error', () => resolve(false));
  });
  if (alive) {
    throw new SyncError({
      code: 'daemon_running',
      disposition: 'fatal',
      message: `another boxsync daemon is answering on ${socketPath}; not starting a second one. Stop it first (boxsync status shows it).`,
    });
  }
  await unlink(socketPath);
}

async function closeServer(server: Server, sockets: Set<Socket>, socketPath: string): Promise<void> {
  for (const s of sockets) s.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await unlink(socketPath).catch(() => undefined);
}
