/**
 * Ignore rules, in gitignore syntax (the `ignore` package gives the exact semantics users know from git).
 *
 * Three sources, in order: the built-in defaults (editor and OS litter, and boxsync's own temp files), the root's
 * `exclude` list from the config, and the optional `.boxsyncignore` file at the root of the sync folder. Paths are
 * root-relative and '/'-separated. A later `!pattern` can re-include what an earlier one excluded, except
 * boxsync's own temp files, which are always ignored.
 */
import { createHash } from 'node:crypto';
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

/**
 * How createIgnoreMatcher matches (the `ignore` package's semantics, the temp-name rule, the name prefilter): change
 * this string whenever that changes, so that the scan's listing marks made under the old matching are dropped.
 */
const IGNORE_MATCHING = 'ignore@7 gitignore, temp names always, prefilter v1';

/**
 * Everything that decides which entries of a local listing a root's matcher reports, as one string: boxsync's own
 * rules and how they match, the user's (`userRules`: ScopeRules.fingerprint, which covers the exclude list, the
 * `.boxsyncignore` lines and selective sync's choices) and the root marker. The full scan keeps its listing marks
 * while this stays the same (engine/observe-local.ts); a change of any of them drops them.
 */
export function ignoreSalt(userRules: string, marker: string | null): string {
  return createHash('sha1').update(JSON.stringify([IGNORE_MATCHING, DEFAULT_IGNORE_PATTERNS, userRules, marker])).digest('hex');
}

export type IgnoreMatcher = (path: RelPath | string, isDir: boolean) => boolean;

/**
 * The `ignore` package remembers the answer for every path it was asked about, for the life of the instance: in
 * a daemon that runs for months, every name ever seen (editors' temp files with fresh names included). The
 * matcher starts a fresh instance after this many questions, so that memory stays bounded; a folder's answer
 * is simply worked out again.
 */
export const IGNORE_CACHE_QUESTIONS = 20_000;

export function createIgnoreMatcher(userPatterns: readonly string[]): IgnoreMatcher {
  const patterns = [...DEFAULT_IGNORE_PATTERNS, ...userPatterns];
  const build = () => ignore().add(patterns);
  const mayMatch = namePrefilter(patterns);
  let ig = build();
  let asked = 0;
  return (path, isDir) => {
    const name = path.slice(path.lastIndexOf('/') + 1);
    if (isTempName(name)) return true;
    if (mayMatch !== null && !mayMatch(path)) return false;
    if (++asked > IGNORE_CACHE_QUESTIONS) {
      ig = build();
      asked = 1;
    }
    return ig.ignores(isDir ? `${path}/` : path);
  };
}

/**
 * A quick "certainly not ignored" answer, so that most paths skip the `ignore` package (it tests every pattern's
 * regex against every path: 2.7 us a path with the defaults, 0.2-0.4 s of a no-change scan of 100,000 files).
 *
 * Only when every pattern that can ignore something (not a `!` re-include) is about names: no '/' but a trailing
 * one. Such a pattern matches a path when it matches one of its segments (a folder's or the entry's own name),
 * and a name it matches starts with the literal text before its first wildcard and ends with the literal text
 * after its last one (compared in lower case: `ignore` is case-insensitive). A path none of whose segments could
 * match any of them is not ignored, whatever the `!` patterns say. Conservative everywhere else: a pattern with a
 * backslash or non-ASCII text in its ends, or a name with non-ASCII letters, always goes to `ignore`. null when
 * some pattern is not about names.
 */
/** The characters after which a pattern's text is no longer literal (wildcards, classes, escapes). */
const WILDCARDS = ['*', '?', '[', ']', '\\'];

export function namePrefilter(patterns: readonly string[]): ((path: string) => boolean) | null {
  const ends: { prefix: string; suffix: string }[] = [];
  for (const raw of patterns) {
    if (raw.trim() === '' || raw.startsWith('#') || raw.startsWith('!')) continue;
    const body = raw.endsWith('/') ? raw.slice(0, -1) : raw;
    if (body.includes('/')) return null;
    const wild = WILDCARDS.map((c) => body.indexOf(c)).filter((i) => i >= 0);
    let prefix = wild.length === 0 ? body : body.slice(0, Math.min(...wild));
    const lastWild = Math.max(...WILDCARDS.map((c) => body.lastIndexOf(c)));
    let suffix = lastWild < 0 ? body : body.slice(lastWild + 1);
    // Spaces at either end may be dropped (trailing ones unless escaped): no claim about them. A pattern with no
    // wildcard is its own prefix and suffix, so both lose them (`a ` matches `a`).
    if (/^\s/.test(body)) {
      prefix = '';
      suffix = suffix.replace(/^\s+/, '');
    }
    if (/\s$/.test(body)) {
      suffix = '';
      prefix = prefix.replace(/\s+$/, '');
    }
    const ascii = (t: string): string => (/^[\x20-\x7e]*$/.test(t) ? t.toLowerCase() : '');
    ends.push({ prefix: ascii(prefix), suffix: ascii(suffix) });
  }
  const segmentMay = (seg: string): boolean => {
    if (!/^[\x00-\x7f]*$/.test(seg)) return true;
    const lower = seg.toLowerCase();
    for (const e of ends) if (lower.startsWith(e.prefix) && lower.endsWith(e.suffix)) return true;
    return false;
  };
  return (path) => {
    let from = 0;
    for (;;) {
      const slash = path.indexOf('/', from);
      if (segmentMay(slash < 0 ? path.slice(from) : path.slice(from, slash))) return true;
      if (slash < 0) return false;
      from = slash + 1;
    }
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

/**
 * Which of the three sources excludes a path the root's matcher ignores: the built-in defaults, the config's
 * `exclude` list, or `.boxsyncignore` (told apart by asking the matchers of the earlier sources alone).
 */
export function ignoreReason(exclude: readonly string[]): (path: string, isDir: boolean) => 'built-in' | 'config-exclude' | 'ignore-file' {
  const builtIn = createIgnoreMatcher([]);
  const config = createIgnoreMatcher(exclude);
  return (path, isDir) => (builtIn(path, isDir) ? 'built-in' : config(path, isDir) ? 'config-exclude' : 'ignore-file');
}

/** The matcher for one root: built-in defaults, then the config `exclude` list, then `.boxsyncignore`. */
export async function loadIgnoreMatcher(fs: FsModule, rootPath: string, exclude: readonly string[]): Promise<IgnoreMatcher> {
  return createIgnoreMatcher([...exclude, ...(await readIgnoreFile(fs, rootPath))]);
}
