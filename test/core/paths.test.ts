import { describe, expect, it } from 'vitest';
import { asRelPath as p } from '../../src/core/model.js';
import { ancestorsOf, basename, depth, foldKey, isAncestor, isAncestorOrSelf, joinPath, parentOf, rebase } from '../../src/core/paths.js';

describe('paths', () => {
  it('splits parent and basename', () => {
    expect(parentOf(p('a.txt'))).toBe('');
    expect(parentOf(p('a/b/c.txt'))).toBe('a/b');
    expect(basename(p('a/b/c.txt'))).toBe('c.txt');
    expect(joinPath('', 'x')).toBe('x');
    expect(joinPath(p('a/b'), 'x')).toBe('a/b/x');
    expect(depth(p('a'))).toBe(1);
    expect(depth(p('a/b/c'))).toBe(3);
  });

  it('knows ancestors, and that a prefix is not an ancestor', () => {
    expect(isAncestor(p('a'), p('a/b'))).toBe(true);
    expect(isAncestor(p('a'), p('ab/c'))).toBe(false);
    expect(isAncestor(p('a'), p('a'))).toBe(false);
    expect(isAncestorOrSelf(p('a'), p('a'))).toBe(true);
    expect(isAncestor('', p('a'))).toBe(true);
    expect(ancestorsOf(p('a/b/c'))).toEqual(['a/b', 'a']);
    expect(ancestorsOf(p('a'))).toEqual([]);
  });

  it('rebases a path from one folder to another', () => {
    expect(rebase(p('a/b/c'), p('a/b'), p('x'))).toBe('x/c');
    expect(rebase(p('a/b'), p('a/b'), p('x'))).toBe('x');
  });

  it('folds case and Unicode normalization into one key', () => {
    const nfcE = 'caf\u00e9.txt';
    const nfdE = 'cafe\u0301.txt';
    expect(nfcE).not.toBe(nfdE);
    expect(foldKey(nfcE)).toBe(foldKey(nfdE));
    expect(foldKey('README.md')).toBe(foldKey('readme.MD'));
    expect(foldKey('stra\u00dfe')).toBe(foldKey('STRASSE'));
    expect(foldKey('a.txt')).not.toBe(foldKey('b.txt'));
  });
});
