/**
 * Desktop notifications (`notify-send`, libnotify) for what a user of a background sync client must not miss:
 * a conflict copy was made, a safety guard holds syncing, syncing stopped on a fatal error. On only when a
 * desktop session exists (DISPLAY, WAYLAND_DISPLAY or a session D-Bus) and `notify-send` is on PATH; off with
 * `daemon.notifications: false`. Bounded: one notification per kind per 30 s (later ones are counted into the
 * next), each `notify-send` killed after 5 s; a failure is logged at debug and never affects syncing.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { Logger } from '../../logger.js';

export type NotificationKind = 'conflict' | 'guard' | 'fatal' | 'new-folder';

const QUIET_MS = 30_000;
const KILL_AFTER_MS = 5_000;

export interface Notifier {
  notify(kind: NotificationKind, title: string, body: string): void;
  readonly enabled: boolean;
}

export const noNotifier: Notifier = { enabled: false, notify: () => undefined };

/**
 * Notifications the user turns on and off while the daemon runs (the `notifications on|off` verb, the web page's
 * toggle); `available` is false when there is no desktop session or no notify-send, and then they stay off.
 */
export interface SwitchableNotifier extends Notifier {
  readonly available: boolean;
  /** Whether the user wants them (config `daemon.notifications`, then the verb). */
  readonly wanted: boolean;
  setWanted(on: boolean): void;
}

export function switchableNotifier(opts: { enabled: boolean; env?: NodeJS.ProcessEnv; log: Logger; now?: () => number }): SwitchableNotifier {
  const inner = createNotifier({ ...opts, enabled: true });
  let wanted = opts.enabled;
  return {
    available: inner.enabled,
    get wanted() {
      return wanted;
    },
    get enabled() {
      return wanted && inner.enabled;
    },
    setWanted(on) {
      wanted = on;
    },
    notify(kind, title, body) {
      if (wanted) inner.notify(kind, title, body);
    },
  };
}

/** The notify-send on PATH, or null. */
function findNotifySend(env: NodeJS.ProcessEnv): string | null {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, 'notify-send');
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // not here
    }
  }
  return null;
}

export function hasDesktopSession(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.DISPLAY || env.WAYLAND_DISPLAY || env.DBUS_SESSION_BUS_ADDRESS);
}

export function createNotifier(opts: { enabled: boolean; env?: NodeJS.ProcessEnv; log: Logger; now?: () => number }): Notifier {
  const env = opts.env ?? process.env;
  const now = opts.now ?? Date.now;
  if (!opts.enabled || !hasDesktopSession(env)) return noNotifier;
  const command = findNotifySend(env);
  if (command === null) {
    opts.log.debug('no notify-send on PATH: desktop notifications are off');
    return noNotifier;
  }
  const last = new Map<NotificationKind, number>();
  const held = new Map<NotificationKind, number>();
  return {
    enabled: true,
    notify(kind, title, body) {
      const t = now();
      const prev = last.get(kind);
      if (prev !== undefined && t - prev < QUIET_MS) {
        held.set(kind, (held.get(kind) ?? 0) + 1);
        return;
      }
      last.set(kind, t);
      const more = held.get(kind) ?? 0;
      held.delete(kind);
      const text = more > 0 ? `${body}\n(and ${more} more since the last notice)` : body;
      const urgency = kind === 'fatal' ? 'critical' : 'normal';
      try {
        const child = spawn(command, ['--app-name=boxsync', `--urgency=${urgency}`, '--icon=folder-sync', title, text], { stdio: 'ignore', env });
        const timer = setTimeout(() => child.kill('SIGKILL'), KILL_AFTER_MS);
        timer.unref();
        child.on('error', (e) => opts.log.debug({ err: e }, 'notify-send failed'));
        child.on('close', () => clearTimeout(timer));
        child.unref();
      } catch (e) {
        opts.log.debug({ err: e }, 'notify-send failed');
      }
    },
  };
}
