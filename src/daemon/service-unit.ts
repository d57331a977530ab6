/**
 * The systemd user unit. systemd/boxsync.service in the repository is this text with the default ExecStart
 * (a test keeps the two identical); `boxsync service install` writes it with the absolute command of the
 * boxsync that ran the install, so the unit works without boxsync on systemd's PATH.
 *
 * Hardening: only options that work in a per-user manager without user namespaces, and none that would hide
 * the home directory (the sync roots and the state dir live there). MemoryDenyWriteExecute is absent on
 * purpose: V8's JIT needs writable+executable pages.
 */
import { DEFAULT_SHUTDOWN_TIMEOUT_MS } from './daemon-settings.js';

/** systemd gives the daemon its own shutdown bound plus this margin before SIGKILL. */
export const STOP_MARGIN_SEC = 10;

export const DEFAULT_EXEC_START = '/usr/bin/env boxsync daemon';

export function serviceUnitText(execStart: string = DEFAULT_EXEC_START): string {
  return `# boxsync: two-way sync between Box folders and local folders.
# Install with \`boxsync service install\` (writes this file to ~/.config/systemd/user and enables it).
[Unit]
Description=boxsync: two-way sync between Box and local folders
After=network-online.target
Wants=network-online.target

[Service]
Type=simple
ExecStart=${execStart}
ExecReload=/bin/kill -HUP $MAINPID
Restart=on-failure
RestartSec=10s
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
