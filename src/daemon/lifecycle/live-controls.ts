/**
 * The daemon's live settings (issue 31's controls): the transfer bandwidth cap and desktop notifications, set
 * on the running daemon by the `bwlimit` and `notifications` verbs (CLI and web page) with no restart. Neither is
 * written to the config: a restart or a SIGHUP reload goes back to `http.bwlimitKiBps` / `daemon.notifications`.
 */
import type { Logger } from '../../logger.js';
import { parseRate, type Bandwidth } from '../../remote/box/bandwidth.js';
import type { LiveControlsStatus, VerbResult } from '../control/control-protocol.js';
import { rateText } from '../control/status-text.js';
import type { SwitchableNotifier } from './notifier.js';

export function liveControls(notifier: SwitchableNotifier, bandwidth: Bandwidth | undefined): LiveControlsStatus {
  return {
    bandwidthBytesPerSec: bandwidth?.bytesPerSec ?? null,
    notifications: { on: notifier.wanted, available: notifier.available },
  };
}

export function setBandwidth(bandwidth: Bandwidth | undefined, rate: string, log: Logger): VerbResult {
  if (!bandwidth) throw new Error('this daemon was built without a Box adapter; its bandwidth cannot be limited');
  let bytes: number | null;
  try {
    bytes = parseRate(rate);
  } catch (e) {
    throw new Error(`${(e as Error).message}; the limit was not changed`);
  }
  bandwidth.setRate(bytes);
  log.info({ bytesPerSec: bytes }, 'bandwidth limit set by the user');
  const until = 'until the daemon restarts or reloads (then http.bwlimitKiBps applies)';
  return {
    message:
      bytes === null
        ? `bandwidth limit off: transfers run as fast as the link goes, ${until}`
        : `bandwidth limit ${rateText(bytes)} for uploads and downloads together, transfers in flight included, ${until}`,
  };
}

export function setNotifications(notifier: SwitchableNotifier, on: boolean, log: Logger): VerbResult {
  notifier.setWanted(on);
  log.info({ on }, 'desktop notifications switched by the user');
  const until = 'until the daemon restarts or reloads (then daemon.notifications applies)';
  if (!on) return { message: `desktop notifications off, ${until}` };
  if (!notifier.available) return { message: `desktop notifications on, but none can be shown: no desktop session or no notify-send on the daemon's PATH` };
  return { message: `desktop notifications on, ${until}` };
}
