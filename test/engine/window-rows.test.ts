/**
 * Each remote folder read once a window (src/engine/window-rows.ts): a second walk takes the rows the first one
 * read, as long as the journal's remote tree was not written meanwhile; bounded per folder and across windows.
 * Real SQLite journal.
 */
import { describe, expect, it } from 'vitest';
import { asRelPath as p, asRemoteId as rid, type RemoteEntry, type RemoteId } from '../../src/core/model.js';
import { walkRemote } from '../../src/engine/remote-tree.js';
import { FOLDER_ROWS, WindowRows } from '../../src/engine/window-rows.js';
import type { Journal } from '../../src/ports/journal.js';
import { journalForEachTest } from '../journal/each-test-journal.js';
import { remoteItem } from '../journal/entries.js';

let j: Journal;
journalForEachTest('boxsync-window-rows-', (opened) => (j = opened));

const all = () => true;
const walk = (src: Parameters<typeof walkRemote>[0], id: string): string[] => [...walkRemote(src, rid(id), p('top'), all)].map((w) => `${w.path}#${w.entry.etag}`);

function seed(): void {
  j.transaction(() => {
    j.putRemote(remoteItem('1', '0', 'top', { kind: 'folder' }));
    j.putRemote(remoteItem('2', '1', 'a', { kind: 'folder' }));
    j.putRemote(remoteItem('3', '1', 'b', { kind: 'folder' }));
    for (let i = 0; i < 5; i++) j.putRemote(remoteItem(`a${i}`, '2', `f${i}.txt`));
    for (let i = 0; i < 5; i++) j.putRemote(remoteItem(`b${i}`, '3', `g${i}.txt`));
  });
}

describe('WindowRows', () => {
  it('a second walk takes the rows the first one read: the same entries, in the same order, as the journal gives', () => {
    seed();
    const rows = new WindowRows(j);
    const first = walk(rows, '1');
    expect(first).toEqual(walk(j, '1'));
    expect(rows.hits).toBe(0);
    expect(walk(rows, '1')).toEqual(first);
    expect(rows.hits).toBe(3); // top, a and b
  });

  it('any write of the remote tree drops what was kept: the next walk sees the journal as it is now', () => {
    seed();
    const rows = new WindowRows(j);
    walk(rows, '1');
    j.putRemote(remoteItem('a9', '2', 'new.txt'));
    j.putRemote(remoteItem('b0', '3', 'g0.txt', { etag: '7' }));
    const after = walk(rows, '1');
    expect(after).toEqual(walk(j, '1'));
    expect(after).toContain('top/a/new.txt#0');
    expect(after).toContain('top/b/g0.txt#7');
    expect(rows.hits).toBe(0);
    j.deleteRemoteSubtree(rid('2'));
    j.deleteRemote(rid('2'));
    expect(walk(rows, '1')).toEqual(walk(j, '1'));
    expect(walk(rows, '1').some((x) => x.startsWith('top/a'))).toBe(false);
  });

  it('a write made while a walk is under way: that walk is not kept', () => {
    seed();
    const rows = new WindowRows(j);
    const it = rows.remoteChildrenPaged(rid('2'))[Symbol.iterator]();
    it.next();
    j.putRemote(remoteItem('a7', '2', 'during.txt'));
    while (it.next().done !== true);
    const again = [...rows.remoteChildrenPaged(rid('2'))].map((e) => e.name);
    expect(again).toContain('during.txt');
    expect(rows.hits).toBe(0);
  });

  it('keeps neither a walk cut short nor a folder of more than one page of children', () => {
    seed();
    j.transaction(() => {
      j.putRemote(remoteItem('9', '1', 'big', { kind: 'folder' }));
      for (let i = 0; i <= FOLDER_ROWS; i++) j.putRemote(remoteItem(`big${i}`, '9', `x${String(i).padStart(5, '0')}`));
    });
    const rows = new WindowRows(j);
    for (const _ of rows.remoteChildrenPaged(rid('2'))) break;
    expect([...rows.remoteChildrenPaged(rid('2'))]).toHaveLength(5);
    expect(rows.hits).toBe(0);
    expect([...rows.remoteChildrenPaged(rid('9'))]).toHaveLength(FOLDER_ROWS + 1);
    expect([...rows.remoteChildrenPaged(rid('9'))]).toHaveLength(FOLDER_ROWS + 1);
    expect(rows.hits).toBe(0);
  });

  it('drops, as a window ends, what neither that window nor the one before used', () => {
    seed();
    const rows = new WindowRows(j);
    const read = (id: string): RemoteEntry[] => [...rows.remoteChildrenPaged(rid(id) as RemoteId)];
    rows.startWindow(0);
    read('2'); // window 0 reads a (and, as its lookahead, b)
    read('3');
    rows.endWindow(0);
    rows.startWindow(1);
    read('3'); // window 1 uses b again: kept through window 2
    expect(rows.hits).toBe(1);
    rows.endWindow(1);
    rows.startWindow(2);
    rows.endWindow(2); // a was last used by window 0: gone; b by window 1: still kept
    read('3');
    expect(rows.hits).toBe(2);
    read('2');
    expect(rows.hits).toBe(2);
    rows.clear();
    read('3');
    expect(rows.hits).toBe(2);
  });

  it('a journal that does not count its writes: every walk reads the journal', () => {
    seed();
    const rows = new WindowRows({ remoteChildrenPaged: (id) => j.remoteChildrenPaged(id) });
    expect(walk(rows, '1')).toEqual(walk(j, '1'));
    walk(rows, '1');
    expect(rows.hits).toBe(0);
  });
});
