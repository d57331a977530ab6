/**
 * The remote-tree reads the reconciler and the window lookahead share (src/engine/remote-tree.ts): the row at a
 * path, and the files below a folder announced for download. Real SQLite file.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { asRelPath as p, asRemoteId as rid, asRootId, type SyncRoot } from '../../src/core/model.js';
import { remoteAtPath, remoteFilesBelow } from '../../src/engine/remote-tree.js';
import { buildSnapshot } from '../../src/engine/snapshot.js';
import { holdsWhole, snapshotChildren, syncedByRemoteIds } from '../../src/engine/snapshot-rows.js';
import { synced } from '../journal/entries.js';
import type { Journal } from '../../src/ports/journal.js';
import { journalForEachTest } from '../journal/each-test-journal.js';
import { remoteItem } from '../journal/entries.js';

const root: SyncRoot = { id: asRootId('r'), remoteId: rid('1'), localPath: '/m', direction: 'two-way', exclude: [] };
const none = (): boolean => false;
let j: Journal;
journalForEachTest('boxsync-remote-tree-', (opened) => (j = opened));

beforeEach(() => {
  j.putRemote(remoteItem('1', '0', 'root', { kind: 'folder' }));
  j.putRemote(remoteItem('2', '1', 'docs', { kind: 'folder' }));
  j.putRemote(remoteItem('3', '2', 'deep', { kind: 'folder' }));
  j.putRemote(remoteItem('4', '3', 'a.txt', { sha1: 'a'.repeat(40), sizeBytes: 10 }));
  j.putRemote(remoteItem('5', '2', 'b.txt', { sha1: 'b'.repeat(40), sizeBytes: 20 }));
  j.putRemote(remoteItem('6', '2', 'skip', { kind: 'folder' }));
  j.putRemote(remoteItem('7', '6', 'c.txt', { sha1: 'c'.repeat(40), sizeBytes: 30 }));
});

describe('remoteAtPath', () => {
  it('walks names from the root down; undefined for a missing name or a root not in the journal', () => {
    expect(remoteAtPath(j, root, p('docs/deep/a.txt'))?.id).toBe('4');
    expect(remoteAtPath(j, root, p('docs'))?.kind).toBe('folder');
    expect(remoteAtPath(j, root, p('docs/nope/a.txt'))).toBeUndefined();
    expect(remoteAtPath(j, { ...root, remoteId: rid('99') }, p('docs'))).toBeUndefined();
  });
});

describe('remoteFilesBelow', () => {
  it('announces every file below a folder, with the listing’s SHA-1 and size, leaving ignored subtrees out', () => {
    const all = remoteFilesBelow(j, { id: rid('2'), path: p('docs') }, none, { maxRows: 100, maxFiles: 100 });
    expect(all.files.map((f) => f.id).sort()).toEqual(['4', '5', '7']);
    expect(all.files.find((f) => f.id === '5')).toEqual({ id: '5', name: 'b.txt', sha1: 'b'.repeat(40), sizeBytes: 20 });
    expect(all.rows).toBe(5);
    const ignoring = remoteFilesBelow(j, { id: rid('2'), path: p('docs') }, (path) => path === 'docs/skip', { maxRows: 100, maxFiles: 100 });
    expect(ignoring.files.map((f) => f.id).sort()).toEqual(['4', '5']);
  });

  it('takes only what `keep` takes, and stops at the row and file bounds', () => {
    const kept = remoteFilesBelow(j, { id: rid('2'), path: p('docs') }, none, { maxRows: 100, maxFiles: 100 }, (e) => e.sizeBytes > 15);
    expect(kept.files.map((f) => f.id).sort()).toEqual(['5', '7']);
    expect(remoteFilesBelow(j, { id: rid('2'), path: p('docs') }, none, { maxRows: 100, maxFiles: 1 }).files).toHaveLength(1);
    const fewRows = remoteFilesBelow(j, { id: rid('2'), path: p('docs') }, none, { maxRows: 2, maxFiles: 100 });
    expect(fewRows.rows).toBe(2);
  });

  it('ends on a corrupt journal where two folders are each other’s parent, even with no row bound', () => {
    j.putRemote(remoteItem('8', '9', 'x', { kind: 'folder' }));
    j.putRemote(remoteItem('9', '8', 'y', { kind: 'folder' }));
    j.putRemote(remoteItem('10', '9', 'in-loop.txt', { sha1: 'd'.repeat(40) }));
    const r = remoteFilesBelow(j, { id: rid('8'), path: p('x') }, none, { maxRows: Number.POSITIVE_INFINITY, maxFiles: 100 });
    expect(r.files.map((f) => f.id)).toEqual(['10']);
    expect(r.rows).toBe(2);
  });
});

describe('snapshotChildren: the announcement of a new folder’s files from the rows a snapshot already read', () => {
  const snap = (isIgnored: (path: string) => boolean, scope: Parameters<typeof buildSnapshot>[0]['scope'] = { kind: 'full' }) =>
    buildSnapshot({ journal: j, root, isIgnored: (path) => isIgnored(path), nowMs: 0, scope });

  it('walks to the same files, in the same order, as the journal does, ignored subtrees left out on both', () => {
    j.putRemote(remoteItem('11', '2', 'B.txt', { sha1: 'e'.repeat(40), sizeBytes: 5 }));
    j.putRemote(remoteItem('12', '2', 'a-first.txt', { sha1: 'f'.repeat(40), sizeBytes: 6 }));
    for (const ignored of [none, (path: string) => path === 'docs/skip']) {
      const fromJournal = remoteFilesBelow(j, { id: rid('2'), path: p('docs') }, ignored, { maxRows: 100, maxFiles: 100 });
      const fromSnapshot = remoteFilesBelow(snapshotChildren(snap(ignored).remote), { id: rid('2'), path: p('docs') }, ignored, { maxRows: 100, maxFiles: 100 });
      expect(fromSnapshot).toEqual(fromJournal);
    }
    expect(remoteFilesBelow(snapshotChildren(snap(none).remote), { id: rid('2'), path: p('docs') }, none, { maxRows: 100, maxFiles: 100 }).files.map((f) => f.id)).toEqual([
      '11', '12', '5', '4', '7',
    ]);
  });

  it('a hinted snapshot holds whole only the subtrees at and below its paths: the rest is read from the journal', () => {
    const hinted = { kind: 'hinted', localPaths: [p('docs/deep')], remoteIds: [] } as const;
    expect(holdsWhole(hinted, p('docs/deep'))).toBe(true);
    expect(holdsWhole(hinted, p('docs/deep/more'))).toBe(true);
    expect(holdsWhole(hinted, p('docs'))).toBe(false);
    expect(holdsWhole(hinted, p('docsx'))).toBe(false);
    expect(holdsWhole({ kind: 'full' }, p('docs'))).toBe(true);
    // What holdsWhole answers true for, the snapshot has whole: docs/deep's file is there, docs' own b.txt is not.
    const rows = snapshotChildren(snap(none, hinted).remote);
    expect(remoteFilesBelow(rows, { id: rid('3'), path: p('docs/deep') }, none, { maxRows: 100, maxFiles: 100 }).files.map((f) => f.id)).toEqual(['4']);
    expect(remoteFilesBelow(rows, { id: rid('2'), path: p('docs') }, none, { maxRows: 100, maxFiles: 100 }).files.map((f) => f.id)).toEqual(['4']);
  });
});

describe('syncedByRemoteIds: the base rows of many Box ids', () => {
  it('one statement where the journal has it, one lookup an id where it does not: the same rows either way', () => {
    j.putSynced(root.id, synced('docs/b.txt', '5'));
    j.putSynced(root.id, synced('moved-away.txt', '4'));
    const ids = ['2', '3', '4', '5', '7'].map(rid);
    const batched = syncedByRemoteIds(j, root, ids);
    const oneByOne = syncedByRemoteIds({ syncedByRemoteId: (r, id) => j.syncedByRemoteId(r, id) }, root, ids);
    expect([...batched.keys()].sort()).toEqual(['4', '5']);
    expect(new Map(oneByOne)).toEqual(new Map(batched));
    expect(batched.get(rid('4'))?.path).toBe('moved-away.txt');
  });
});
