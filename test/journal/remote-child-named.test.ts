import { describe, expect, it } from 'vitest';
import { asRemoteId as rid } from '../../src/core/model.js';
import type { Journal } from '../../src/ports/journal.js';
import { journalForEachTest } from './each-test-journal.js';
import { remoteItem } from './entries.js';

let j: Journal;
journalForEachTest('boxsync-child-named-', (opened) => (j = opened));

describe('remoteChildNamed', () => {
  it('finds a child by exact name, only under its own parent', () => {
    j.putRemote(remoteItem('1', '0', 'docs', { kind: 'folder' }));
    j.putRemote(remoteItem('2', '1', 'a.txt'));
    j.putRemote(remoteItem('3', '1', 'A.txt'));
    j.putRemote(remoteItem('4', '9', 'a.txt'));
    expect(j.remoteChildNamed(rid('1'), 'a.txt')?.id).toBe('2');
    expect(j.remoteChildNamed(rid('1'), 'A.txt')?.id).toBe('3');
    expect(j.remoteChildNamed(rid('1'), 'b.txt')).toBeUndefined();
    expect(j.remoteChildNamed(rid('0'), 'docs')?.kind).toBe('folder');
  });

  it('with stale rows sharing a name, answers the row remoteChildren lists first', () => {
    for (const id of ['70', '7', '700']) j.putRemote(remoteItem(id, '1', 'same.txt'));
    const first = j.remoteChildren(rid('1')).find((e) => e.name === 'same.txt');
    expect(j.remoteChildNamed(rid('1'), 'same.txt')).toEqual(first);
  });
});

describe('remoteChildrenPaged', () => {
  it('reads the same children as remoteChildren, in the same order, across pages (names shared across a page boundary too)', () => {
    j.putRemote(remoteItem('1', '0', 'big', { kind: 'folder' }));
    // 2,500 children: PAGE_ROWS is 1,000, and 30 rows share one name around the first page boundary.
    for (let i = 0; i < 2_470; i++) j.putRemote(remoteItem(`c${i}`, '1', `f${String(i).padStart(5, '0')}`));
    for (let i = 0; i < 30; i++) j.putRemote(remoteItem(`d${i}`, '1', 'f00990'));
    j.putRemote(remoteItem('x', '2', 'elsewhere'));
    const whole = j.remoteChildren(rid('1'));
    const paged = [...j.remoteChildrenPaged(rid('1'))];
    expect(paged).toHaveLength(2_500);
    expect(paged).toEqual(whole);
    expect(new Set(paged.map((e) => e.id)).size).toBe(2_500);
    expect([...j.remoteChildrenPaged(rid('9'))]).toEqual([]);
  });
});

describe('remote rows read back', () => {
  it('every read gives the entry as it was put, with exactly its fields (the row is read as the entry itself)', () => {
    const file = remoteItem('12', '10', 'a.txt', { sha1: 'cd'.repeat(20), sizeBytes: 3, versionId: 'v9', etag: '4', sequenceId: '5', modifiedAtMs: 1_700_000_000_123 });
    const link = remoteItem('13', '10', 'b.url', { kind: 'weblink', url: 'https://example.com/x', sha1: null, versionId: null, status: 'trashed' });
    const folder = remoteItem('10', '0', 'docs', { kind: 'folder', sha1: null });
    for (const e of [file, link, folder]) j.putRemote(e);
    for (const e of [file, link]) {
      expect(j.getRemote(e.id)).toStrictEqual(e);
      expect(j.remoteChildNamed(rid('10'), e.name)).toStrictEqual(e);
    }
    expect(j.getRemote(rid('10'))).toStrictEqual(folder);
    expect(j.remoteChildren(rid('10'))).toStrictEqual([file, link]);
    expect([...j.remoteChildrenPaged(rid('10'))]).toStrictEqual([file, link]);
  });
});
