/**
 * The systemd user unit. systemd/boxsync.service in the repository is this text with the default ExecStart
 * (a test keeps the two identical); `boxsync service install` writes it with the absolute command of the
 * boxsync that ran the install, so the unit works without boxsync on systemd's PATH.
 *
 * Hardening: only options that work in a per-user manager without user namespaces, and none that would hide
 * the home directory (the sync roots and the state dir live there). MemoryDenyWriteExecute is absent on
 * purpose: V8's JIT needs writable+executable pages.
 */
import { DEFAULT_SHUTDOWN_TIMEOUT_MS } from '../../daemon/lifecycle/daemon-settings.js';

/** systemd gives the daemon its own shutdown bound plus this margin before SIGKILL. */
export const STOP_MARGIN_SEC = 10;

export const DEFAULT_EXEC_START = '/usr/bin/env boxsync daemon';

/** `boxsync daemon` with the config file the unit was installed for (none: the XDG default). */
export function daemonExecStart(command: readonly string[], configFile?: string): string {
  return [...command, 'daemon', ...(configFile === undefined ? [] : ['--config', configFile])].map(quoteArg).join(' ');
}

/** One argument of a systemd command line, quoted when it needs to be. */
export function quoteArg(arg: string): string {
  // systemd expands % specifiers and $ variables even inside quotes: %% and $$ keep them literal.
  if (/^[\w@+=:,./-]+$/.test(arg)) return arg;
  const escaped = arg.replace(/["\\$%]/g, (c) => (c === '%' ? '%%' : c === '$' ? '$$' : `\\${c}`));
  return `"${escaped}"`;
}

export function serviceUnitText(execStart: string = DEFAULT_EXEC_START): string {
  return `# boxsync: two-way sync between Box folders and local folders.
# Install with \`boxsync service install\` (writes this file to ~/.config/systemd/user and enables it).
# A user manager has no target that waits for the network: the daemon waits for it itself (it retries Box
# with backoff), so no ordering on the network is needed.
[Unit]
Description=boxsync: two-way sync between Box and local folders
# Five failed starts within ten minutes leave the unit failed (systemctl --user status boxsync says why).
StartLimitIntervalSec=600
StartLimitBurst=5

[Service]
Type=simple
ExecStart=${execStart}
ExecReload=/bin/kill -HUP $MAINPID
# Exit codes: 1 fatal error (restarted after 10 s; see \`boxsync status\`), 2 could not start (restarted),
# 78 configuration missing or invalid (not restarted: fix the config, then systemctl --user restart boxsync).
Restart=on-failure
RestartSec=10s
RestartPreventExitStatus=78
# The daemon stops within ${DEFAULT_SHUTDOWN_TIMEOUT_MS / 1000} s (transfers finish or checkpoint); this leaves a margin.
TimeoutStopSec=${DEFAULT_SHUTDOWN_TIMEOUT_MS / 1000 + STOP_MARGIN_SEC}s
KillMode=mixed
Environment=NODE_ENV=production
UMask=0077
NoNewPrivileges=yes
LockPersonality=yes
RestrictRealtime=yes
RestrictSUIDSGID=yes
SystemCallArchitectures=native

[Install]
WantedBy=default.target
`;
}
