/**
 * The state-dir lock: at most one boxsync process (a `sync --once` run or the daemon) works on a state dir.
 *
 * The lock is the file `<stateDir>/lock`, holding JSON `{ pid, purpose, startedAtMs, startTicks }`. It is
 * created complete and atomically: written to a private temp name, then link(2)ed to `lock`, which fails with
 * EEXIST when someone holds it (the O_EXCL guarantee, without a window where the file exists but is empty).
 *
 * A lock whose pid is dead, or whose pid now belongs to a different process (the kernel start time in
 * /proc/PID/stat differs), is stale and taken over: renamed aside, re-checked, then replaced. A live holder
 * makes `acquireStateLock` throw StateLockedError (code `state_locked`, fatal, exit code 2) naming its pid.
 *
 * A state dir that cannot be created or written throws SyncError `state_dir_unusable` (fatal, exit code 2).
 *
 * The lock is released by `release()`. A process killed with SIGKILL leaves a stale lock that the next run takes
 * over, so a crash never needs a manual cleanup.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, linkSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SyncError } from '../core/errors.js';
import { stateLockRetry } from '../core/retry.js';

export type LockPurpose = 'sync --once' | 'daemon' | 'demo' | 'command';

export interface LockInfo {
  readonly pid: number;
  readonly purpose: string;
  readonly startedAtMs: number;
  /** Kernel start time of the holder (field 22 of /proc/PID/stat), null when /proc is unavailable. */
  readonly startTicks: string | null;
}

export interface StateLock {
  readonly path: string;
  readonly info: LockInfo;
  /** Whether a stale lock (of this pid) was taken over. */
  readonly tookOverFromPid: number | null;
  /** Remove the lock if it is still ours. Idempotent. */
  release(): void;
}

export class StateLockedError extends SyncError {
  readonly holder: LockInfo;
  constructor(stateDir: string, holder: LockInfo) {
    super({
      code: 'state_locked',
      disposition: 'fatal',
      message:
        `another boxsync process (pid ${holder.pid}, ${holder.purpose}) is working on ${stateDir}; ` +
        `nothing was changed. Wait for it to finish or stop it, then run again.`,
      details: { stateDir, pid: holder.pid, purpose: holder.purpose },
    });
    this.name = 'StateLockedError';
    this.holder = holder;
  }
}

// Tries of the link: the first and the named policy's retries (a stale lock removed between them, no wait).
const MAX_ATTEMPTS = stateLockRetry.retries + 1;

export function acquireStateLock(stateDir: string, purpose: LockPurpose): StateLock {
  const path = join(stateDir, 'lock');
  const info: LockInfo = { pid: process.pid, purpose, startedAtMs: Date.now(), startTicks: startTicksOf(process.pid) };
  const mine = JSON.stringify(info);
  const tmp = join(stateDir, `.lock.${process.pid}.${randomBytes(4).toString('hex')}`);
  try {
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    writeFileSync(tmp, mine, { mode: 0o600 });
  } catch (e) {
    throw new SyncError({
      code: 'state_dir_unusable',
      disposition: 'fatal',
      message:
        `cannot use the state dir ${stateDir} (${(e as NodeJS.ErrnoException).code ?? String(e)}): it must be a folder this user can write; ` +
        'nothing was changed. Fix it, or set stateDir in the config to another folder.',
      details: { stateDir },
      cause: e,
    });
  }
  try {
    let tookOverFromPid: number | null = null;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      try {
        linkSync(tmp, path);
        return { path, info, tookOverFromPid, release: () => releaseIfMine(path, mine) };
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
      const current = readLock(path);
      if (current === 'absent') continue;
      if (current !== 'unreadable' && isAlive(current)) throw new StateLockedError(stateDir, current);
      const stale = takeAside(path, stateDir, current);
      if (stale !== null) tookOverFromPid = stale;
    }
    throw new SyncError({
      code: 'state_lock_contended',
      disposition: 'fatal',
      message: `could not take the lock ${path}: other processes keep taking it over; nothing was changed. Run again.`,
    });
  } finally {
    unlinkQuietly(tmp);
  }
}

/** Read the current lock holder without taking the lock (for `status` and error messages). */
export function readStateLock(stateDir: string): LockInfo | null {
  const r = readLock(join(stateDir, 'lock'));
  return r === 'absent' || r === 'unreadable' ? null : r;
}

/**
 * The lock's holder when it is a live process (what acquireStateLock would refuse), else null: no lock, a lock that
 * cannot be read, or one whose process is gone. Takes nothing; a file that cannot be read throws.
 */
export function liveStateLock(stateDir: string): LockInfo | null {
  const r = readLock(join(stateDir, 'lock'));
  return r === 'absent' || r === 'unreadable' || !isAlive(r) ? null : r;
}

function readLock(path: string): LockInfo | 'absent' | 'unreadable' {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 'absent';
    throw e;
  }
  try {
    const v = JSON.parse(text) as Partial<LockInfo>;
    if (typeof v.pid !== 'number' || !Number.isInteger(v.pid) || v.pid <= 0) return 'unreadable';
    return {
      pid: v.pid,
      purpose: typeof v.purpose === 'string' ? v.purpose : 'unknown',
      startedAtMs: typeof v.startedAtMs === 'number' ? v.startedAtMs : 0,
      startTicks: typeof v.startTicks === 'string' ? v.startTicks : null,
    };
  } catch {
    // A lock that is not ours to read (garbage, an older format) cannot prove a live holder.
    return 'unreadable';
  }
}

function isAlive(holder: LockInfo): boolean {
  try {
    process.kill(holder.pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const ticks = startTicksOf(holder.pid);
  // The pid exists; it is the holder unless we can prove it was reused by a later process.
  return holder.startTicks === null || ticks === null || ticks === holder.startTicks;
}

/**
 * Move a stale lock aside. If, between our read and the rename, another process replaced it with a live lock,
 * put that one back (link fails if a third process got in first, which then holds a valid lock anyway).
 */
function takeAside(path: string, stateDir: string, seen: LockInfo | 'unreadable'): number | null {
  const aside = join(stateDir, `.lock.stale.${process.pid}.${randomBytes(4).toString('hex')}`);
  try {
    renameSync(path, aside);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  const moved = readLock(aside);
  const same = moved === seen || (typeof moved === 'object' && typeof seen === 'object' && JSON.stringify(moved) === JSON.stringify(seen));
  if (!same && typeof moved === 'object' && isAlive(moved)) {
    try {
      linkSync(aside, path);
    } catch {
      // someone else holds a fresh lock now; our next attempt will see it
    }
    unlinkQuietly(aside);
    return null;
  }
  unlinkQuietly(aside);
  return typeof seen === 'object' ? seen.pid : null;
}

function releaseIfMine(path: string, mine: string): void {
  try {
    if (readFileSync(path, 'utf8') === mine) unlinkSync(path);
  } catch {
    // already gone
  }
}

function startTicksOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces and parentheses: count fields after the last ')'.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return rest[19] ?? null;
  } catch {
    return null;
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // nothing to remove
  }
}
