import { createHash } from 'node:crypto';
import { asRootId, type RootId } from '../core/model.js';

/**
 * The RootId of a folder pair: the first 16 hex digits of SHA-1(remoteId NUL localPath). Stable across restarts
 * and config edits that leave the pair alone; changing either side of a pair makes it a new root (with a fresh
 * merge base), which is what the user means by pointing a root somewhere else.
 */
export function rootIdFor(remoteId: string, localPath: string): RootId {
  return asRootId(createHash('sha1').update(`${remoteId}\0${localPath}`).digest('hex').slice(0, 16));
}
