/**
 * The embedded default both demos (`boxsync demo`, `boxsync demo-live`) start from: a demo folder, box-server
 * running in this process with sample content persisted under DIR/box-server, and DIR/config.json (mode 0600)
 * pointing at it with a fresh developer token, the mirror at DIR/Box and the state at DIR/state.
 *
 * The caller owns the returned server and must close it. If the config cannot be written the server is closed
 * here and the error is rethrown, so a failed setup leaves no listener behind; the demo folder is kept either
 * way (it is the user's --dir or a fresh temp folder, and box-server's data in it is still useful).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { BoxServer } from '../../box-server/index.js';

export interface DemoSetupOptions {
  /** The demo folder; created when missing. Without it a new temp folder named `${tempPrefix}XXXXXX`. */
  readonly dir?: string | undefined;
  /** Names the temp folder and, when DIR is too deep for a unix socket, the socket under the temp dir. */
  readonly tempPrefix: string;
  /** Passed to box-server; box-server's own default when absent. */
  readonly longPollTimeoutMs?: number;
  /** Written as the config's `log.level` when given; the config's default otherwise. */
  readonly logLevel?: 'warn';
}

export interface DemoSetup {
  readonly dir: string;
  readonly mirror: string;
  readonly configFile: string;
  readonly socketPath: string;
  readonly server: BoxServer;
}

/** Unix socket paths are limited to about 108 bytes; 100 leaves room for the kernel's terminator and slack. */
const MAX_SOCKET_PATH_BYTES = 100;

export async function setUpDemo(opts: DemoSetupOptions): Promise<DemoSetup> {
  const dir = opts.dir ? resolve(opts.dir) : await mkdtemp(join(tmpdir(), opts.tempPrefix));
  await mkdir(dir, { recursive: true });
  const mirror = join(dir, 'Box');
  const configFile = join(dir, 'config.json');
  const token = `demo-${randomBytes(12).toString('hex')}`;

  const { startBoxServer } = await import('../../box-server/index.js');
  const server = await startBoxServer({
    port: 0,
    tokens: [token],
    sample: true,
    dataDir: join(dir, 'box-server'),
    ...(opts.longPollTimeoutMs === undefined ? {} : { longPollTimeoutMs: opts.longPollTimeoutMs }),
  });
  try {
    const inDir = join(dir, 'control.sock');
    // A long --dir would make the socket path exceed the unix limit; the demo never needs a fixed place.
    const socketPath = Buffer.byteLength(inDir) <= MAX_SOCKET_PATH_BYTES ? inDir : join(tmpdir(), `${opts.tempPrefix}${process.pid}.sock`);
    const config = {
      remote: { apiUrl: server.apiUrl, uploadUrl: server.uploadUrl, tokenUrl: server.tokenUrl, authorizeUrl: server.authorizeUrl },
      auth: { developerToken: token },
      folders: [{ remoteId: '0', localPath: mirror }],
      stateDir: join(dir, 'state'),
      socketPath,
      ...(opts.logLevel === undefined ? {} : { log: { level: opts.logLevel } }),
    };
    await writeFile(configFile, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
    return { dir, mirror, configFile, socketPath, server };
  } catch (err) {
    await server.close();
    throw err;
  }
}
