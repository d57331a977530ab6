/**
 * Where the control socket is, for clients (`boxsync status`, the control verbs): `--socket PATH` when given,
 * else the config's socketPath. When the config cannot be read, the default location
 * ($XDG_RUNTIME_DIR/boxsync/control.sock) is still worth asking: a daemon may run with a config the client
 * cannot see.
 */
import { join } from 'node:path';
import { configPath, loadConfig } from '../../config/index.js';
import { xdgDirs } from '../../config/xdg.js';

/** The control socket, and the state dir when the config can be read (where the daemon keeps why it last ended). */
export async function daemonLocation(opts: { socket?: string | undefined; config?: string | undefined }): Promise<{ socketPath: string; stateDir: string | null }> {
  let config: Awaited<ReturnType<typeof loadConfig>> | null = null;
  try {
    config = await loadConfig({ path: opts.config });
  } catch {
    config = null;
  }
  if (opts.socket) return { socketPath: opts.socket, stateDir: config?.stateDir ?? null };
  if (config) return { socketPath: config.socketPath, stateDir: config.stateDir };
  const dirs = xdgDirs(process.env);
  return { socketPath: join(dirs.runtimeDir ?? dirs.stateHome, 'boxsync', 'control.sock'), stateDir: null };
}

export { configPath };
