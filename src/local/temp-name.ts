/**
 * Names of boxsync's own temporary files. A temp file lives in the same folder as its target (so the final rename
 * stays on one file system and is atomic) under a hidden name with TEMP_PREFIX, which the scanner skips, the
 * built-in ignore rules exclude and watchers therefore never report.
 */
import { randomBytes } from 'node:crypto';

export const TEMP_PREFIX = '.boxsync-tmp-';

export function isTempName(name: string): boolean {
  return name.startsWith(TEMP_PREFIX);
}

/** A fresh temp file name (short: the target's own name may already be near the 255-byte limit). */
export function newTempName(): string {
  return `${TEMP_PREFIX}${randomBytes(8).toString('hex')}`;
}
