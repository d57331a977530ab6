import * as nodeFs from 'node:fs';
import { lstat, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { asRelPath, asRemoteId, asRootId, type SyncRoot } from '../../src/core/model.js';
import { dropEchoes } from '../../src/daemon/lifecycle/echo-filter.js';
import { openJournal } from '../../src/journal/index.js';
import { createLocalFs } from '../../src/local/local-fs.js';
import { createLocalTrash } from '../../src/local/local-trash.js';
import type { Journal } from '../../src/ports/journal.js';
import type { LocalFs } from '../../src/ports/local-fs.js';
import { makeTempDir } from '../support/tmp.js';

describe('echo filter', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let journal: Journal;
  let root: SyncRoot;
  let fs: LocalFs;

  beforeEach(async () => {
    ({ dir, cleanup } = await makeTempDir('boxsync-echo-'));
    journal = openJournal(join(dir, 'journal.db')).journal;
    root = { id: asRootId('r'), remoteId: asRemoteId('1'), localPath: dir, direction: 'two-way', exclude: [] };
    fs = createLocalFs({ rootPath: dir, fs: nodeFs, trash: createLocalTrash({ mode: 'state', stateDir: join(dir, 'state'), fs: nodeFs }) });
  });
  afterEach(async () => {
    journal.close();
    await cleanup();
  });

  async function record(name: string): Promise<void> {
    const st = await lstat(join(dir, name));
    journal.putLocal(root.id, { path: asRelPath(name), kind: 'file', inode: st.ino, sizeBytes: st.size, mtimeMs: st.mtimeMs, sha1: null });
  }

  it('drops a hint whose file is exactly what the journal recorded (the echo of our own write)', async () => {
    await writeFile(join(dir, 'downloaded.txt'), 'written by the engine');
    await record('downloaded.txt');
    expect(await dropEchoes(fs, journal, root, [asRelPath('downloaded.txt')])).toEqual([]);
  });

  it('passes hints for new, edited and deleted files, and drops hints about nothing', async () => {
    await writeFile(join(dir, 'edited.txt'), 'v1');
    await record('edited.txt');
    await writeFile(join(dir, 'edited.txt'), 'v2, longer');
    await writeFile(join(dir, 'new.txt'), 'new');
    await writeFile(join(dir, 'deleted.txt'), 'x');
    await record('deleted.txt');
    await rm(join(dir, 'deleted.txt'));
    const hints = ['edited.txt', 'new.txt', 'deleted.txt', 'never-existed.txt'].map(asRelPath);
    expect(await dropEchoes(fs, journal, root, hints)).toEqual(['edited.txt', 'new.txt', 'deleted.txt']);
  });
});
