/**
 * One local root for engine tests of the local side: a fresh temp dir with its `Box` folder, a real journal, and a
 * real LocalFs over node:fs with its trash in the temp dir's `state`. Each cleanup goes to the test file's list.
 */
import * as nodeFs from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { asRemoteId, asRootId, type SyncRoot } from '../../../src/core/model.js';
import { createLocalFs } from '../../../src/local/local-fs.js';
import { createLocalTrash } from '../../../src/local/local-trash.js';
import { silentLogger } from '../../../src/logger.js';
import type { Journal } from '../../../src/ports/journal.js';
import type { LocalFs } from '../../../src/ports/local-fs.js';
import { makeTempDir } from '../../support/tmp.js';
import { tempJournal } from './journal.js';

export interface TempLocalRoot {
  /** The root's folder (`<temp>/Box`). */
  readonly dir: string;
  readonly root: SyncRoot;
  readonly journal: Journal;
  readonly fs: LocalFs;
}

/** A LocalFs on `dir` over `fs` (node:fs, or one that fails on purpose), its trash in `stateDir`. */
export function localFsOn(dir: string, stateDir: string, fs: typeof nodeFs = nodeFs): LocalFs {
  return createLocalFs({ rootPath: dir, fs, trash: createLocalTrash({ mode: 'state', stateDir, fs: nodeFs, logger: silentLogger }), logger: silentLogger });
}

export async function tempLocalRoot(prefix: string, cleanups: (() => Promise<void>)[], remoteId = '1'): Promise<TempLocalRoot> {
  const tmp = await makeTempDir(prefix);
  cleanups.push(tmp.cleanup);
  const j = await tempJournal();
  cleanups.push(j.cleanup);
  const dir = join(tmp.dir, 'Box');
  await mkdir(dir);
  const root: SyncRoot = { id: asRootId('r1'), remoteId: asRemoteId(remoteId), localPath: dir, direction: 'two-way', exclude: [] };
  return { dir, root, journal: j.journal, fs: localFsOn(dir, join(tmp.dir, 'state')) };
}
