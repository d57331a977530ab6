/**
 * Exit codes of `boxsync daemon` and `boxsync status`, documented in the README ("Exit codes") and relied on by
 * systemd/boxsync.service (RestartPreventExitStatus) and by scripts that watch boxsync.
 */

/** `boxsync daemon`. */
export const DAEMON_EXIT = {
  /** Stopped by SIGTERM / SIGINT. */
  stopped: 0,
  /** Syncing stopped on a fatal error (revoked login, unusable journal, a root that is gone...); the reason was logged and kept for `status`. */
  fatal: 1,
  /** Could not start for a reason that may pass (another boxsync holds the state dir, the socket is busy, Box unreachable at start). */
  cannotStart: 2,
  /** The configuration is missing or invalid (sysexits EX_CONFIG): restarting cannot help, so systemd does not. */
  config: 78,
} as const;

/** `boxsync status` (LSB-style: 3 is "not running"). */
export const STATUS_EXIT = {
  /** The daemon runs and nothing needs the user. */
  healthy: 0,
  /** The daemon runs but needs attention: a fatal error, a held safety guard, failing or parked items, a degraded watcher. */
  attention: 1,
  /** The daemon could not be asked (it refused the request, or answered garbage or nothing). */
  failed: 2,
  /** No daemon runs. */
  notRunning: 3,
} as const;
