/**
 * Committing outcomes to a real journal. The merge base follows the Box id: an item moved on both sides (or
 * moved aside by an earlier pass) has its base row somewhere other than the operation's `from`, and committing
 * must move THAT row, never another item's. And the rules core/tree-effects.ts chose where the simulation and
 * the commit used to disagree: moves keep the agreed local stat, a restore takes Box's etag only for the
 * agreed content, a web link's base records its link file.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { asRelPath as p, asRemoteId as id, asRootId, type RemoteEntry, type SyncedEntry } from '../../src/core/model.js';
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

function remote(remoteId: string, over: Partial<RemoteEntry> = {}): RemoteEntry {
  return { id: id(remoteId), kind: 'file', parentId: id('0'), name: 'x', etag: '9', sequenceId: '9', sha1: 'a'.repeat(40), sizeBytes: 1, modifiedAtMs: 1000, versionId: 'v9', url: null, status: 'active', ...over };
}

it('local-move keeps the base stat: a local edit made before the move still reads as an edit', () => {
  const { journal } = j;
  journal.transaction(() => {
    journal.putRemote(remote('40'));
    journal.putSynced(root, base('a.txt', '40'));
    journal.putLocal(root, { path: p('a.txt'), kind: 'file', inode: 7, sizeBytes: 5, mtimeMs: 2000, sha1: null });
  });
  const moved = { path: p('b.txt'), kind: 'file' as const, inode: 7, sizeBytes: 5, mtimeMs: 2000, sha1: null };
  journal.transaction(() =>
    commitOutcome(journal, root, { kind: 'local-move', root, reason: 'moved on Box', remoteId: id('40'), from: p('a.txt'), to: p('b.txt'), guard: { state: 'file', sizeBytes: 5, mtimeMs: 2000, inode: 7 } }, { local: moved, bytes: 0 }),
  );
  // Box still holds the agreed content, so the etag follows; the stat stays the agreed one (size 1, mtime 1000).
  expect(journal.getSynced(root, p('b.txt'))).toMatchObject({ etag: '9', versionId: 'v9', sizeBytes: 1, mtimeMs: 1000, inode: 7 });
  expect(journal.getLocal(root, p('b.txt'))).toMatchObject({ sizeBytes: 5, mtimeMs: 2000 });
  expect(journal.getLocal(root, p('a.txt'))).toBeUndefined();
});

it('remote-restore: the base takes the restored etag only while Box holds the agreed content', () => {
  const { journal } = j;
  journal.transaction(() => {
    journal.putSynced(root, base('same.txt', '50'));
    journal.putSynced(root, base('edited.txt', '51'));
    journal.markTrashed(id('50'), true);
    journal.markTrashed(id('51'), true);
  });
  const restore = (remoteId: string, path: string, answer: RemoteEntry) =>
    journal.transaction(() =>
      commitOutcome(journal, root, { kind: 'remote-restore', root, reason: 'changed here', path: p(path), remoteId: id(remoteId), itemKind: 'file', parentId: id('0'), name: path }, { remote: answer, bytes: 0 }),
    );
  restore('50', 'same.txt', remote('50', { name: 'same.txt', etag: '12' }));
  restore('51', 'edited.txt', remote('51', { name: 'edited.txt', etag: '13', sha1: 'b'.repeat(40) }));
  expect(journal.getSynced(root, p('same.txt'))).toMatchObject({ etag: '12' });
  expect(journal.getSynced(root, p('edited.txt'))).toMatchObject({ etag: '1', sha1: 'a'.repeat(40) });
  expect(journal.isTrashed(id('50')) || journal.isTrashed(id('51'))).toBe(false);
});

it("write-weblink: the base records the link file's size and the URL written", () => {
  const { journal } = j;
  journal.transaction(() => journal.putRemote(remote('60', { kind: 'weblink', sha1: null, sizeBytes: 0, url: 'https://new.example/' })));
  const file = { path: p('W.url'), kind: 'file' as const, inode: 8, sizeBytes: 44, mtimeMs: 3000, sha1: null };
  journal.transaction(() =>
    commitOutcome(journal, root, { kind: 'write-weblink', root, reason: 'new web link', path: p('W.url'), remoteId: id('60'), url: 'https://old.example/', guard: { state: 'absent' } }, { local: file, bytes: 0 }),
  );
  expect(journal.getSynced(root, p('W.url'))).toMatchObject({ kind: 'weblink', sizeBytes: 44, inode: 8, mtimeMs: 3000, url: 'https://old.example/', sha1: null });
});
