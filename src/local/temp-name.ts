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

/** Random per process, so two processes never pick the same name; a counter makes each name of one process new. */
const PROCESS_PART = randomBytes(6).toString('hex');
let counter = 0;

/**
 * A fresh temp file name (short: the target's own name may already be near the 255-byte limit). Not random per
 * call: 8 random bytes a file cost more than the rest of naming it in a mirror of many small files.
 */
export function newTempName(): string {
  counter += 1;
  return `${TEMP_PREFIX}${PROCESS_PART}${counter.toString(36)}`;
}
