import { Volume, createFsFromVolume } from 'memfs';
import { describe, expect, it } from 'vitest';
import type { FsModule } from '../../src/local/fs-module.js';
import { createIgnoreMatcher, DEFAULT_IGNORE_PATTERNS, IGNORE_CACHE_QUESTIONS, loadIgnoreMatcher } from '../../src/local/ignore.js';
import { newTempName, TEMP_PREFIX } from '../../src/local/temp-name.js';

describe('createIgnoreMatcher', () => {
  const m = createIgnoreMatcher([]);

  it.each([
    'notes.txt~',
    'dir/.#notes.txt',
    '#notes.txt#',
    'a/.notes.txt.swp',
    '.notes.txt.swo',
    '~$report.docx',
    'x/.~lock.report.odt#',
    '.DS_Store',
    'deep/er/Thumbs.db',
    'desktop.ini',
    `${TEMP_PREFIX}0123abcd`,
    `some/dir/${newTempName()}`,
  ])('ignores editor and OS litter and our temp files: %s', (p) => {
    expect(m(p, false)).toBe(true);
  });

  it.each(['notes.txt', 'a/b/c.docx', 'report~final.txt', 'hash#tag', 'Thumbs.db.bak', '.boxsyncignore', '.gitignore'])(
    'keeps ordinary files: %s',
    (p) => {
      expect(m(p, false)).toBe(false);
    },
  );

  it('applies user patterns with gitignore semantics, directory-only patterns included', () => {
    const u = createIgnoreMatcher(['node_modules/', '/build', '*.log', '!keep.log', 'docs/**/draft-*']);
    expect(u('node_modules', true)).toBe(true);
    expect(u('a/node_modules', true)).toBe(true);
    expect(u('node_modules', false)).toBe(false);
    expect(u('build', true)).toBe(true);
    expect(u('src/build', true)).toBe(false);
    expect(u('x/y.log', false)).toBe(true);
    expect(u('keep.log', false)).toBe(false);
    expect(u('docs/a/b/draft-1.md', false)).toBe(true);
    expect(u('docs/final.md', false)).toBe(false);
  });

  it('never lets a user pattern re-include our temp files', () => {
    const u = createIgnoreMatcher([`!${TEMP_PREFIX}*`]);
    expect(u(`a/${TEMP_PREFIX}x`, false)).toBe(true);
  });

  it('answers the same across the fresh starts that keep its memory bounded (more questions than it remembers)', () => {
    const u = createIgnoreMatcher(['node_modules/', '*.log', '!keep.log']);
    const wrong: string[] = [];
    for (let i = 0; i < IGNORE_CACHE_QUESTIONS * 2 + 10; i++) {
      const d = `d${i % 97}`;
      const cases: [string, boolean, boolean][] = [
        [`${d}/node_modules/f${i}.js`, false, true],
        [`${d}/f${i}.log`, false, true],
        [`${d}/keep.log`, false, false],
        [`${d}/f${i}.txt`, false, false],
      ];
      const [path, isDir, expected] = cases[i % cases.length]!;
      if (u(path, isDir) !== expected) wrong.push(path);
    }
    expect(wrong).toEqual([]);
  });

  it('exports the defaults it applies', () => {
    expect(DEFAULT_IGNORE_PATTERNS).toContain(`${TEMP_PREFIX}*`);
    expect(DEFAULT_IGNORE_PATTERNS).toContain('desktop.ini');
  });
});

describe('loadIgnoreMatcher', () => {
  it('adds the .boxsyncignore file at the root to the config excludes', async () => {
    const fs = createFsFromVolume(Volume.fromJSON({ '/r/.boxsyncignore': '# comment\n\n*.tmp\r\nsecret/\n' })) as unknown as FsModule;
    const m = await loadIgnoreMatcher(fs, '/r', ['*.bak']);
    expect(m('a.tmp', false)).toBe(true);
    expect(m('secret', true)).toBe(true);
    expect(m('x.bak', false)).toBe(true);
    expect(m('# comment', false)).toBe(false);
    expect(m('a.txt', false)).toBe(false);
  });

  it('works without a .boxsyncignore file', async () => {
    const fs = createFsFromVolume(Volume.fromJSON({ '/r/a': '' })) as unknown as FsModule;
    const m = await loadIgnoreMatcher(fs, '/r', []);
    expect(m('a', false)).toBe(false);
    expect(m('a~', false)).toBe(true);
  });
});
