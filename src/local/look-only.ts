/**
 * A LocalFs over node:fs that only looks (lstat of one path, whether the root is there): for what reads the disk
 * outside a sync pass, such as the daemon's `status PATH` answer and the CLI's check after `selective exclude`. They
 * reach the disk through the port like the engine does (same containment: a path under a symlinked folder is not
 * part of the tree), and need no trash since they change nothing.
 */
import * as nodeFs from 'node:fs';
import type { LocalFs } from '../ports/local-fs.js';
import { createLocalFs } from './local-fs.js';
import type { LocalTrash } from './local-trash.js';

const NO_TRASH: LocalTrash = {
  trash: () => Promise.reject(new Error('a look-only LocalFs never trashes')),
  purgeOlderThan: async () => 0,
};

export function lookOnlyLocalFs(rootPath: string): Pick<LocalFs, 'stat' | 'rootExists'> {
  return createLocalFs({ rootPath, fs: nodeFs, trash: NO_TRASH });
}
