/**
 * Ignore rules, in gitignore syntax (the `ignore` package gives the exact semantics users know from git).
 *
 * Three sources, in order: the built-in defaults (editor and OS litter, and boxsync's own temp files), the root's
 * `exclude` list from the config, and the optional `.boxsyncignore` file at the root of the sync folder. Paths are
 * root-relative and '/'-separated. A later `!pattern` can re-include what an earlier one excluded, except
 * boxsync's own temp files, which are always ignored.
 */
import ignore from 'ignore';
import type { RelPath } from '../core/model.js';
import type { FsModule } from './fs-module.js';
import { isTempName, TEMP_PREFIX } from './temp-name.js';

/** Editor temp files, lock files and OS metadata that must never be synced. */
export const DEFAULT_IGNORE_PATTERNS: readonly string[] = [
  '*~',
  '.#*',
  // Emacs autosave files; the backslash keeps gitignore from reading the line as a comment.
  '\\#*#',
  '*.swp',
  '*.swo',
  '~$*',
  '.~lock.*#',
  '.DS_Store',
  'Thumbs.db',
  'desktop.ini',
  `${TEMP_PREFIX}*`,
];

export const IGNORE_FILE_NAME = '.boxsyncignore';

export type IgnoreMatcher = (path: RelPath | string, isDir: boolean) => boolean;

/**
 * The `ignore` package remembers the answer for every path it was asked about, for the life of the instance: in
 * a daemon that runs for months, every name ever seen (editors' temp files with fresh names included). The
 * matcher starts a fresh instance after this many questions, so that memory stays bounded; a folder's answer
 * is simply worked out again.
 */
export const IGNORE_CACHE_QUESTIONS = 20_000;

export function createIgnoreMatcher(userPatterns: readonly string[]): IgnoreMatcher {
  const build = () => ignore().add([...DEFAULT_IGNORE_PATTERNS]).add([...userPatterns]);
  let ig = build();
  let asked = 0;
  return (path, isDir) => {
    const name = path.slice(path.lastIndexOf('/') + 1);
    if (isTempName(name)) return true;
    if (++asked > IGNORE_CACHE_QUESTIONS) {
      ig = build();
      asked = 1;
    }
    return ig.ignores(isDir ? `${path}/` : path);
  };
}

/**
 * The patterns of `<root>/.boxsyncignore` (one per line, '#' comments and blank lines skipped by `ignore`), or
 * [] when there is none. The file itself is synced like any other file, so every machine sees the same rules.
 */
export async function readIgnoreFile(fs: FsModule, rootPath: string): Promise<readonly string[]> {
  try {
    const text = await fs.promises.readFile(`${rootPath.replace(/\/+$/, '')}/${IGNORE_FILE_NAME}`, 'utf8');
    return text.split(/\r?\n/);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
}

/** The matcher for one root: built-in defaults, then the config `exclude` list, then `.boxsyncignore`. */
export async function loadIgnoreMatcher(fs: FsModule, rootPath: string, exclude: readonly string[]): Promise<IgnoreMatcher> {
  return createIgnoreMatcher([...exclude, ...(await readIgnoreFile(fs, rootPath))]);
}
