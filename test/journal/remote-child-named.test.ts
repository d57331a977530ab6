import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { asRemoteId as rid } from '../../src/core/model.js';
import { openJournal } from '../../src/journal/open-journal.js';
import type { Journal } from '../../src/ports/journal.js';
import { makeTempDir } from '../support/tmp.js';
import { remoteItem } from './entries.js';

let tmp: { dir: string; cleanup: () => Promise<void> };
let j: Journal;

beforeEach(async () => {
  tmp = await makeTempDir('boxsync-child-named-');
  j = openJournal(join(tmp.dir, 'journal.db')).journal;
});
afterEach(async () => {
  j.close();
  await tmp.cleanup();
});

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
