/**
 * Why the daemon last ended, kept in the state dir (daemon-exit.json, 0600) so that `boxsync status` can say it
 * after the process is gone: a daemon that stops on a fatal error exits (systemd shows it), and the reason
 * stays readable. Removed when a daemon starts. Holds no secrets: messages are the ones already logged.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface LastExit {
  readonly atMs: number;
  readonly code: number;
  readonly reason: string;
}

const FILE = 'daemon-exit.json';

export function recordLastExit(stateDir: string, exit: LastExit): void {
  try {
    writeFileSync(join(stateDir, FILE), `${JSON.stringify(exit)}\n`, { mode: 0o600 });
  } catch {
    // best effort: the log has the same words
  }
}

export function clearLastExit(stateDir: string): void {
  rmSync(join(stateDir, FILE), { force: true });
}

/** The last recorded exit, or null when there is none or it cannot be read. */
export function readLastExit(stateDir: string): LastExit | null {
  try {
    const v = JSON.parse(readFileSync(join(stateDir, FILE), 'utf8')) as Partial<LastExit>;
    if (typeof v.atMs !== 'number' || typeof v.code !== 'number' || typeof v.reason !== 'string') return null;
    return { atMs: v.atMs, code: v.code, reason: v.reason };
  } catch {
    return null;
  }
}
