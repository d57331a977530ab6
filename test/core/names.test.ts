import { describe, expect, it } from 'vitest';
import { checkBoxName, conflictCopyName, parseConflictName, splitExtension, utcStamp } from '../../src/core/names.js';

const at = Date.UTC(2026, 10, 22, 13, 45, 1);

describe('checkBoxName', () => {
  it('accepts ordinary names, including Unicode and inner spaces', () => {
    for (const n of ['a.txt', 'My Report (final).docx', 'caf\u00e9', ' leading', 'x'.repeat(255), '\u{1F600}'.repeat(255)]) {
      expect(checkBoxName(n)).toEqual({ ok: true });
    }
  });

  it('refuses what Box refuses, with the right problem code', () => {
    const cases: [string, string][] = [
      ['', 'name-invalid'],
      ['.', 'name-invalid'],
      ['..', 'name-invalid'],
      ['a/b', 'name-invalid'],
      ['a\\b', 'name-invalid'],
      ['tab\there', 'name-invalid'],
      ['del\u007f', 'name-invalid'],
      ['trailing ', 'name-invalid'],
      ['x'.repeat(256), 'name-too-long'],
    ];
    for (const [name, problem] of cases) {
      const r = checkBoxName(name);
      expect(r.ok, name).toBe(false);
      if (!r.ok) {
        expect(r.problem).toBe(problem);
        expect(r.message).toMatch(/Box/);
      }
    }
  });
});

describe('conflict names', () => {
  it('formats the UTC stamp arithmetically', () => {
    expect(utcStamp(at)).toBe('2026-11-22 134501');
    expect(utcStamp(0)).toBe('1970-01-01 000000');
    expect(utcStamp(Date.UTC(2000, 1, 29, 23, 59, 59))).toBe('2000-02-29 235959');
  });

  it('puts the marker before the extension and round-trips', () => {
    const name = conflictCopyName('report.docx', at);
    expect(name).toBe('report (conflicted copy 2026-11-22 134501).docx');
    expect(parseConflictName(name)).toEqual({ original: 'report.docx', atMs: at, counter: 1 });
    expect(conflictCopyName('.bashrc', at)).toBe('.bashrc (conflicted copy 2026-11-22 134501)');
    expect(parseConflictName('.bashrc (conflicted copy 2026-11-22 134501)')?.original).toBe('.bashrc');
    expect(parseConflictName(conflictCopyName('v1.2', at))?.original).toBe('v1.2');
    expect(parseConflictName('plain.txt')).toBeNull();
  });

  it('does not grow names for a conflict of a conflict', () => {
    const first = conflictCopyName('a.txt', at);
    const second = conflictCopyName(first, at + 3_600_000);
    expect(second).toBe('a (conflicted copy 2026-11-22 144501).txt');
    expect(parseConflictName(second)?.original).toBe('a.txt');
  });

  it('counts up when the name is taken', () => {
    const taken = new Set(['a (conflicted copy 2026-11-22 134501).txt', 'a (conflicted copy 2026-11-22 134501 2).txt']);
    const name = conflictCopyName('a.txt', at, (c) => taken.has(c));
    expect(name).toBe('a (conflicted copy 2026-11-22 134501 3).txt');
    expect(parseConflictName(name)).toEqual({ original: 'a.txt', atMs: at, counter: 3 });
  });

  it('stays within 255 characters', () => {
    const long = 'n'.repeat(250) + '.txt';
    const name = conflictCopyName(long, at);
    expect([...name].length).toBe(255);
    expect(checkBoxName(name)).toEqual({ ok: true });
    expect(name.endsWith('(conflicted copy 2026-11-22 134501).txt')).toBe(true);
  });

  it('splits extensions sensibly', () => {
    expect(splitExtension('a.tar.gz')).toEqual({ stem: 'a.tar', ext: '.gz' });
    expect(splitExtension('noext')).toEqual({ stem: 'noext', ext: '' });
    expect(splitExtension('dots.')).toEqual({ stem: 'dots.', ext: '' });
  });
});
