/**
 * The journal reads the planning windows are cut with (src/engine/windows.ts): direct children of a path,
 * bounded subtree counts on each tree, and the base row of a local entry by inode. Real SQLite file.
 */
import { describe, expect, it } from 'vitest';
import { asRelPath as p, asRemoteId as rid, asRootId, type SyncRoot } from '../../src/core/model.js';
import type { Journal } from '../../src/ports/journal.js';
import { journalForEachTest } from './each-test-journal.js';
import { caseTwins, caseTwinsSteps } from '../../src/engine/windows.js';
import { runWhole } from '../../src/core/slices.js';
import { localFile, localFolder, remoteItem, synced } from './entries.js';

const root = asRootId('r');
let j: Journal;
journalForEachTest('boxsync-window-queries-', (opened) => (j = opened));

describe('journal reads for planning windows', () => {
  it('lists the direct children of a path (not deeper rows, not siblings sharing a prefix)', () => {
    j.putLocal(root, localFolder('a', 1));
    j.putLocal(root, localFile('a/x.txt', { inode: 2 }));
    j.putLocal(root, localFolder('a/sub', 3));
    j.putLocal(root, localFile('a/sub/deep.txt', { inode: 4 }));
    j.putLocal(root, localFile('a.txt', { inode: 5 }));
    j.putLocal(root, localFile('ab/y.txt', { inode: 6 }));
    j.putLocal(root, localFolder('\u{1F600}\u{1F600}', 7));
    j.putLocal(root, localFolder('\u{1F600}\u{1F600}/k', 8));
    j.putLocal(root, localFile('\u{1F600}\u{1F600}/k/deeper', { inode: 9 }));
    expect(j.localChildren(root, '').map((e) => e.path)).toEqual(['a', 'a.txt', '\u{1F600}\u{1F600}']);
    expect(j.localChildren(root, p('a')).map((e) => e.path)).toEqual(['a/sub', 'a/x.txt']);
    // Paths of characters outside the BMP: the child is cut by SQLite's own length, not JavaScript's.
    expect(j.localChildren(root, p('\u{1F600}\u{1F600}')).map((e) => e.path)).toEqual(['\u{1F600}\u{1F600}/k']);
    j.putSynced(root, synced('a', '10', { kind: 'folder' }));
    j.putSynced(root, synced('a/x.txt', '11'));
    j.putSynced(root, synced('a/sub/deep.txt', '12'));
    expect(j.syncedChildren(root, p('a')).map((e) => e.path)).toEqual(['a/x.txt']);
  });

  it('reads the direct children in keyset pages too: the same rows in the same order, a page at a time', () => {
    // 2,500 children of `big` (names that sort around '/': '-' and '.' come before it), each of a tenth with a
    // subtree, and a sibling folder sharing the prefix.
    j.transaction(() => {
      j.putLocal(root, localFolder('big', 1));
      for (let i = 0; i < 2500; i++) {
        const name = i % 3 === 0 ? `c${i}-x` : i % 3 === 1 ? `c${i}.txt` : `c${i}`;
        if (i % 10 === 0) {
          j.putLocal(root, localFolder(`big/${name}`, 10 + i));
          j.putLocal(root, localFile(`big/${name}/inner.txt`, { inode: 100_000 + i }));
        } else j.putLocal(root, localFile(`big/${name}`, { inode: 10 + i }));
        j.putSynced(root, synced(`big/${name}`, `s${i}`));
      }
      j.putLocal(root, localFile('big-sibling/f', { inode: 5 }));
    });
    const pages = [...j.localChildrenPages!(root, p('big'))];
    expect(pages.map((page) => page.length)).toEqual([1000, 1000, 500]);
    expect(pages.flat().map((e) => e.path)).toEqual(j.localChildren(root, p('big')).map((e) => e.path));
    expect([...j.syncedChildrenPages!(root, p('big'))].flat().map((e) => e.path)).toEqual(j.syncedChildren(root, p('big')).map((e) => e.path));
    // The top level: one row (big-sibling has no row of its own, only one below it).
    expect([...j.localChildrenPages!(root, '')].flat().map((e) => e.path)).toEqual(['big']);
    expect([...j.localChildrenPages!(root, p('nothing-here'))]).toEqual([]);
  });

  it("a path's case twins among 2,500 siblings are found with a pause between two pages of each tree's children", () => {
    const sr = { id: root, localPath: '/nowhere', remoteId: rid('0') } as SyncRoot;
    j.transaction(() => {
      j.putRemote(remoteItem('d', '0', 'big', { kind: 'folder' }));
      for (let i = 0; i < 2500; i++) {
        j.putLocal(root, localFile(`big/f${i}.txt`, { inode: 10 + i }));
        j.putSynced(root, synced(`big/f${i}.txt`, `s${i}`));
        j.putRemote(remoteItem(`r${i}`, 'd', `f${i}.txt`));
      }
      j.putLocal(root, localFile('big/README.md', { inode: 5 }));
      j.putSynced(root, synced('big/Readme.md', 's-readme'));
      j.putRemote(remoteItem('r-readme', 'd', 'readme.MD'));
    });
    const steps = caseTwinsSteps(j, sr, p('big/readme.md'));
    let pauses = 0;
    let r = steps.next();
    for (; !r.done; r = steps.next()) pauses += 1;
    // Three pages of local rows, three of synced rows, and a pause every 64 remote rows.
    expect(pauses).toBeGreaterThanOrEqual(6 + Math.floor(2502 / 64));
    expect([...r.value].sort()).toEqual(['big/README.md', 'big/Readme.md', 'big/readme.MD']);
    expect(caseTwins(j, sr, p('big/readme.md'))).toEqual(runWhole(caseTwinsSteps(j, sr, p('big/readme.md'))));
  });

  it('counts the rows below a path, never more than the limit asked for', () => {
    for (let i = 0; i < 30; i++) j.putLocal(root, localFile(`big/f${i}`, { inode: 100 + i }));
    j.putLocal(root, localFile('other', { inode: 1 }));
    expect(j.countLocalUnder(root, p('big'), 1000)).toBe(30);
    expect(j.countLocalUnder(root, p('big'), 10)).toBe(10);
    expect(j.countLocalUnder(root, '', 1000)).toBe(31);
    expect(j.countLocalUnder(root, p('other'), 1000)).toBe(0);
    expect(j.countSyncedUnder(root, '', 5)).toBe(0);
  });

  it('counts a remote subtree through parent links, bounded, and ends on a parent cycle', () => {
    j.putRemote(remoteItem('1', '0', 'top', { kind: 'folder' }));
    j.putRemote(remoteItem('2', '1', 'sub', { kind: 'folder' }));
    for (let i = 0; i < 20; i++) j.putRemote(remoteItem(`f${i}`, i % 2 === 0 ? '1' : '2', `f${i}`));
    expect(j.countRemoteBelow(rid('1'), 1000)).toBe(21);
    expect(j.countRemoteBelow(rid('1'), 7)).toBe(7);
    expect(j.countRemoteBelow(rid('2'), 1000)).toBe(10);
    // A corrupt journal where two folders are each other's parent.
    j.putRemote(remoteItem('8', '9', 'x', { kind: 'folder' }));
    j.putRemote(remoteItem('9', '8', 'y', { kind: 'folder' }));
    expect(j.countRemoteBelow(rid('8'), 1000)).toBe(2);
  });

  it('finds the base row of a moved local entry by its inode', () => {
    j.putSynced(root, synced('old/name.txt', '40', { inode: 4242 }));
    expect(j.syncedByInode(root, 4242)?.path).toBe('old/name.txt');
    expect(j.syncedByInode(root, 1)).toBeUndefined();
    expect(j.syncedByInode(asRootId('other'), 4242)).toBeUndefined();
  });
});
