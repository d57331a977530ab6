/**
 * The daemon's web page in its lifecycle: started once the first session runs, closed before the control
 * socket on a stop. `daemon.ui.enabled: false` leaves it off. A port that cannot be opened (taken by another
 * program, or by a second user's daemon) is logged and the daemon syncs on without its page: the page is a
 * view, never a reason to stop syncing. `daemon.ui` changes take effect at the next start, not on SIGHUP.
 */
import type { Logger } from '../../logger.js';
import type { ControlRequest } from '../control/control-protocol.js';
import { pageAssets } from './page-assets.js';
import { startUiServer, type UiServer } from './ui-server.js';

export type { UiServer };

export async function startDaemonUi(
  settings: { readonly enabled: boolean; readonly port: number },
  deps: { stateDir: string; log: Logger; control: (req: ControlRequest) => Promise<unknown>; roots: () => readonly string[] },
): Promise<UiServer | null> {
  if (!settings.enabled) return null;
  try {
    return await startUiServer({ port: settings.port, stateDir: deps.stateDir, log: deps.log, control: deps.control, roots: deps.roots, assets: pageAssets });
  } catch (e) {
    const why = (e as NodeJS.ErrnoException).code === 'EADDRINUSE' ? `port ${settings.port} is taken by another program` : e instanceof Error ? e.message : String(e);
    deps.log.warn(`web page not started: ${why}; syncing goes on without it. Set daemon.ui.port to a free port (or 0 for any) and restart the daemon`);
    return null;
  }
}
