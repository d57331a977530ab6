/**
 * The merge base follows the Box id when an outcome is committed: an item moved on both sides (or moved aside
 * by an earlier pass) has its base row somewhere other than the operation's `from`, and committing must move
 * THAT row, never another item's.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { asRelPath as p, asRemoteId as id, asRootId, type SyncedEntry } from '../../src/core/model.js';
import { commitOutcome } from '../../src/engine/commit.js';
import type { Journal } from '../../src/ports/journal.js';
import { tempJournal } from './support/journal.js';

const root = asRootId('r1');
let j: { journal: Journal; cleanup: () => Promise<void> };
beforeEach(async () => {
  j = await tempJournal();
});
afterEach(() => j.cleanup());

function base(path: string, remoteId: string, kind: 'file' | 'folder' = 'file'): SyncedEntry {
  return { path: p(path), remoteId: id(remoteId), kind, etag: '1', sha1: kind === 'file' ? 'a'.repeat(40) : null, versionId: null, sizeBytes: 1, inode: 7, mtimeMs: 1000, url: null };
}

it('local-move after both sides moved a folder: the folder\'s base row and its children go to the target', () => {
  const { journal } = j;
  journal.transaction(() => {
    journal.putSynced(root, base('old', '10', 'folder'));
    journal.putSynced(root, base('old/child.txt', '11'));
    // Another item already sits at the op's `from` path: it must not be carried along.
    journal.putSynced(root, base('mine', '20'));
  });
  journal.transaction(() =>
    commitOutcome(journal, root, { kind: 'local-move', root, reason: 'both moved; Box wins', remoteId: id('10'), from: p('mine'), to: p('theirs'), guard: { state: 'folder', inode: 7 } }, { bytes: 0 }),
  );
  expect(journal.syncedByRemoteId(root, id('10'))?.path).toBe('theirs');
  expect(journal.syncedByRemoteId(root, id('11'))?.path).toBe('theirs/child.txt');
  expect(journal.syncedByRemoteId(root, id('20'))?.path).toBe('mine');
  expect(journal.getSynced(root, p('old'))).toBeUndefined();
});

it('remote-move: the base row moves from where the item was agreed, not from the op\'s from', () => {
  const { journal } = j;
  journal.transaction(() => {
    journal.putSynced(root, base('agreed.txt', '30'));
    journal.putSynced(root, base('other.txt', '31'));
  });
  const remote = { id: id('30'), kind: 'file' as const, parentId: id('0'), name: 'moved.txt', etag: '2', sequenceId: '2', sha1: 'a'.repeat(40), sizeBytes: 1, modifiedAtMs: 1000, versionId: null, url: null, status: 'active' as const };
  journal.transaction(() =>
    commitOutcome(journal, root, { kind: 'remote-move', root, reason: 'moved here', remoteId: id('30'), itemKind: 'file', from: p('other.txt'), to: p('moved.txt'), parentId: id('0'), name: 'moved.txt', ifMatch: '1' }, { remote, bytes: 0 }),
  );
  expect(journal.syncedByRemoteId(root, id('30'))).toMatchObject({ path: 'moved.txt', etag: '2' });
  expect(journal.syncedByRemoteId(root, id('31'))?.path).toBe('other.txt');
});
