/**
 * LocalGuard checks: the last look at a path before it is replaced, moved or trashed. A mismatch throws SyncError
 * `local_changed` (replan) and nothing is touched: the user's newer change wins, and the next plan sees it.
 */
import type { Stats } from 'node:fs';
import { SyncError } from '../core/errors.js';
import type { LocalGuard } from '../core/operations.js';
import type { FsModule } from './fs-module.js';
import { errnoOf } from './fs-errors.js';
import { localUnchanged, statSeen } from '../core/same-item.js';

/** The error of a call on a path that is not there: gone, or a folder on the way replaced by a file (ENOTDIR). */
export function isGone(e: unknown): boolean {
  return errnoOf(e) === 'ENOENT' || errnoOf(e) === 'ENOTDIR';
}

/** lstat, or undefined when nothing is there; through the callback form when the module has it (FsModule.lstat). */
export async function lstatOrUndefined(fs: FsModule, absPath: string): Promise<Stats | undefined> {
  const lstat = fs.lstat;
  if (lstat !== undefined) {
    return new Promise((resolve, reject) => {
      lstat(absPath, (err, st) => (err === null ? resolve(st) : isGone(err) ? resolve(undefined) : reject(err)));
    });
  }
  try {
    return await fs.promises.lstat(absPath);
  } catch (e) {
    if (isGone(e)) return undefined;
    throw e;
  }
}

export function describeStats(st: Stats | undefined): string {
  if (st === undefined) return 'nothing';
  if (st.isDirectory()) return `a folder (inode ${st.ino})`;
  if (st.isSymbolicLink()) return 'a symlink';
  if (!st.isFile()) return 'a special file';
  return `a file of ${st.size} bytes, mtime ${st.mtimeMs}, inode ${st.ino}`;
}

export function describeGuard(g: LocalGuard): string {
  switch (g.state) {
    case 'absent':
      return 'nothing';
    case 'file':
      return `a file of ${g.sizeBytes} bytes, mtime ${g.mtimeMs}, inode ${g.inode}`;
    case 'folder':
      return `a folder (inode ${g.inode})`;
    default: {
      const never: never = g;
      return never;
    }
  }
}

export function guardHolds(g: LocalGuard, st: Stats | undefined): boolean {
  switch (g.state) {
    case 'absent':
      return st === undefined;
    case 'file':
      return st !== undefined && st.isFile() && localUnchanged(g, statSeen(st));
    case 'folder':
      return st !== undefined && st.isDirectory() && st.ino === g.inode;
    default: {
      const never: never = g;
      return never;
    }
  }
}

export function localChanged(path: string, g: LocalGuard, st: Stats | undefined): SyncError {
  return new SyncError({
    code: 'local_changed',
    disposition: 'replan',
    message: `${path} changed on disk since it was planned (expected ${describeGuard(g)}, found ${describeStats(st)}); nothing was touched, it will be re-scanned and planned again`,
    details: { path, expected: g.state },
  });
}

/** A sibling that Box would take for the same name appeared after the plan: writing would make a clash on Box. */
export function nameTwinAppeared(path: string, twin: string): SyncError {
  return new SyncError({
    code: 'local_changed',
    disposition: 'replan',
    message: `${path} was not written: "${twin}" appeared beside it since it was planned, and Box treats both names as one; nothing was touched, the folder will be re-scanned and planned again`,
    details: { path, expected: 'absent', twin },
  });
}

/** lstat the path and throw `local_changed` unless it matches; returns the stats it saw. */
export async function checkGuard(fs: FsModule, absPath: string, path: string, g: LocalGuard): Promise<Stats | undefined> {
  const st = await lstatOrUndefined(fs, absPath);
  if (!guardHolds(g, st)) throw localChanged(path, g, st);
  return st;
}
