/**
 * The daemon's live settings (issue 31's controls): one folder pair paused, the transfer bandwidth cap and desktop notifications, set
 * on the running daemon by the `bwlimit` and `notifications` verbs (CLI and web page) with no restart. Neither is
 * written to the config: a restart or a SIGHUP reload goes back to `http.bwlimitKiBps` / `daemon.notifications`.
 */
import { pairHolding } from '../../config/folder-pair.js';
import { escapeText } from '../../core/escape.js';
import type { SyncRoot } from '../../core/model.js';
import type { Engine } from '../../engine/types.js';
import type { Logger } from '../../logger.js';
import { parseRate, type Bandwidth } from '../../remote/box/bandwidth.js';
import type { LiveControlsStatus, VerbResult } from '../control/control-protocol.js';
import { rateText } from '../control/status-text.js';
import type { SwitchableNotifier } from './notifier.js';

export function liveControls(notifier: SwitchableNotifier, bandwidth: Bandwidth | undefined, engine: Engine, roots: readonly SyncRoot[]): LiveControlsStatus {
  const paused = new Set(engine.pausedRoots());
  return {
    pausedPairs: roots.filter((r) => paused.has(r.id)).map((r) => r.localPath),
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

/**
 * `boxsync pause PATH` / `resume PATH`: hold or release the one folder pair holding PATH (Engine.pauseRoot). A
 * resumed pair asks for a full pass (`requestFull`): what Box said about it while it was held was read, not planned.
 */
export function pausePair(engine: Engine, roots: readonly SyncRoot[], path: string, paused: boolean, requestFull: () => void, log: Logger): VerbResult {
  const hit = pairHolding(roots, path);
  if (hit === null) throw new Error(`${escapeText(path)} is not inside any configured folder pair; nothing was paused or resumed`);
  const shown = escapeText(hit.pair.localPath);
  const was = engine.pausedRoots().includes(hit.pair.id);
  engine.pauseRoot(hit.pair.id, paused);
  log.info({ root: hit.pair.id, paused }, paused ? 'folder pair paused by the user' : 'folder pair resumed by the user');
  if (paused) {
    return { message: was ? `${shown} was already paused` : `${shown} paused: nothing new of it is planned or transferred (a pass already running for it finishes); the other pairs go on; \`boxsync resume ${shown}\` to continue` };
  }
  if (!was) return { message: `${shown} was not paused on its own; nothing changed` };
  requestFull();
  return { message: `${shown} resumed: a full pass catches up with what changed meanwhile` };
}

/** `boxsync resume` (all): release every pair paused on its own; returns how many were. */
export function releasePairs(engine: Engine): number {
  const held = engine.pausedRoots();
  for (const root of held) engine.pauseRoot(root, false);
  return held.length;
}
