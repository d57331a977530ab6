/** pairHolding: the one answer to "which folder pair holds this absolute path" (status, items, retry, selective). */
import { describe, expect, it } from 'vitest';
import { pairHolding, within } from '../../src/config/folder-pair.js';

const pairs = [{ localPath: '/home/u/Box' }, { localPath: '/home/u/Work' }, { localPath: '/home/u/Box/Nested' }];

describe('pairHolding', () => {
  it('finds the pair, its index and the path relative to it; the pair folder itself is rel ""', () => {
    expect(pairHolding(pairs, '/home/u/Work/a/b.txt')).toEqual({ pair: pairs[1], index: 1, rel: 'a/b.txt' });
    expect(pairHolding(pairs, '/home/u/Work')).toEqual({ pair: pairs[1], index: 1, rel: '' });
  });

  it('is null outside every pair, for a sibling that shares a prefix, and for the parent', () => {
    expect(pairHolding(pairs, '/home/u/Boxes/x')).toBeNull();
    expect(pairHolding(pairs, '/home/u')).toBeNull();
    expect(pairHolding(pairs, '/etc/passwd')).toBeNull();
  });

  it('reads a name that starts with ".." as inside (it is a file in the pair, not its parent)', () => {
    expect(pairHolding(pairs, '/home/u/Work/..notes')).toEqual({ pair: pairs[1], index: 1, rel: '..notes' });
    expect(within('/home/u/Work/..notes', '/home/u/Work')).toBe(true);
    expect(within('/home/u', '/home/u/Work')).toBe(false);
  });

  it('picks the deepest pair should two hold the path', () => {
    expect(pairHolding(pairs, '/home/u/Box/Nested/f')).toEqual({ pair: pairs[2], index: 2, rel: 'f' });
    expect(pairHolding(pairs, '/home/u/Box/f')).toEqual({ pair: pairs[0], index: 0, rel: 'f' });
  });
});
