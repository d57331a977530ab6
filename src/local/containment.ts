/**
 * Containment: the only way out of a sync root is through a symlink (or a '..' segment, which RelPaths never
 * have), so every folder on the way from the root down to a path must be a real folder. The kernel follows
 * symlinks in the middle of a path, so this is checked with lstat, one segment at a time, before every write and
 * every look at a single path.
 */
import type { Stats } from 'node:fs';
import { join } from 'node:path';
import { SyncError } from '../core/errors.js';
import type { RelPath } from '../core/model.js';
import type { FsModule } from './fs-module.js';
import { lstatOrUndefined } from './guard.js';

export interface BadAncestor {
  /** The root-relative ancestor that is not a real folder. */
  readonly at: string;
  /** What is there instead (undefined: nothing). */
  readonly st: Stats | undefined;
}

export async function firstBadAncestor(fs: FsModule, rootPath: string, path: RelPath): Promise<BadAncestor | undefined> {
  const parts = path.split('/');
  let rel = '';
  for (const part of parts.slice(0, -1)) {
    rel = rel === '' ? part : `${rel}/${part}`;
    const st = await lstatOrUndefined(fs, join(rootPath, rel));
    if (st === undefined || !st.isDirectory()) return { at: rel, st };
  }
  return undefined;
}

/** Throws `symlink_in_path` (skip) or `local_changed` (replan) unless every ancestor is a real folder. */
export async function assertParentsInside(fs: FsModule, rootPath: string, path: RelPath): Promise<void> {
  const bad = await firstBadAncestor(fs, rootPath, path);
  if (bad === undefined) return;
  const { at, st } = bad;
  if (st?.isSymbolicLink()) {
    throw new SyncError({
      code: 'symlink_in_path',
      disposition: 'skip',
      message: `${at} is a symlink, and boxsync never writes through symlinks (they could lead out of the sync folder); ${path} is skipped`,
      details: { path, at },
    });
  }
  throw new SyncError({
    code: 'local_changed',
    disposition: 'replan',
    message:
      st === undefined
        ? `the folder ${at} of ${path} does not exist on disk (any more); nothing was touched, it will be re-scanned and planned again`
        : `${at} is no longer a folder; nothing was touched, it will be re-scanned and planned again`,
    details: { path, at },
  });
}
