/**
 * Where the control socket is, for clients (`boxsync status`, the control verbs): `--socket PATH` when given,
 * else the config's socketPath. When the config cannot be read, the default location
 * ($XDG_RUNTIME_DIR/boxsync/control.sock) is still worth asking: a daemon may run with a config the client
 * cannot see.
 */
import { join } from 'node:path';
import { configPath, loadConfig } from '../config.js';
import { xdgDirs } from '../config/xdg.js';

export async function controlSocketPath(opts: { socket?: string | undefined; config?: string | undefined }): Promise<string> {
  if (opts.socket) return opts.socket;
  try {
    return (await loadConfig({ path: opts.config })).socketPath;
  } catch {
    const dirs = xdgDirs(process.env);
    if (dirs.runtimeDir) return join(dirs.runtimeDir, 'boxsync', 'control.sock');
    return join(dirs.stateHome, 'boxsync', 'control.sock');
  }
}

export { configPath };
