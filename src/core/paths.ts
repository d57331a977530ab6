/**
 * Path helpers for RelPath values. PURE.
 *
 * A RelPath is '/'-separated, relative to a sync root, without leading or trailing slash, never '' for an
 * item. The root itself is represented by '' where a parent is asked for ("the parent of `a.txt` is ''").
 *
 * Box compares names case-insensitively and treats NFC/NFD spellings of one name as the same name, while
 * Linux file systems compare bytes. `foldKey` is the single comparison key for "would Box consider these the
 * same name": Unicode NFC, then case folding (toLowerCase after toUpperCase, so that e.g. 'ß' and 'SS' and
 * the Kelvin sign fold together as far as JavaScript's full case mappings allow).
 */
import { asRelPath, type RelPath } from './model.js';

/** The parent of a path, '' when the parent is the root. */
export function parentOf(path: RelPath): RelPath | '' {
  const i = path.lastIndexOf('/');
  return i < 0 ? '' : asRelPath(path.slice(0, i));
}

/** The last segment of a path. */
export function basename(path: RelPath): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? path : path.slice(i + 1);
}

/** Join a parent ('' for the root) and one name. The name must not contain '/'. */
export function joinPath(parent: RelPath | '', name: string): RelPath {
  return asRelPath(parent === '' ? name : `${parent}/${name}`);
}

/** The segments of a path, root first. */
export function segments(path: RelPath): readonly string[] {
  return path.split('/');
}

/** Number of segments: 1 for a direct child of the root. */
export function depth(path: RelPath): number {
  let n = 1;
  for (let i = 0; i < path.length; i++) if (path.charCodeAt(i) === 47) n++;
  return n;
}

/** True when `ancestor` is a strict ancestor of `path` ('' is the ancestor of every path). */
export function isAncestor(ancestor: RelPath | '', path: RelPath): boolean {
  if (ancestor === '') return true;
  return path.length > ancestor.length && path.startsWith(ancestor) && path.charCodeAt(ancestor.length) === 47;
}

/** `isAncestor` with the names compared as Box compares them (case and Unicode normalization folded). */
export function isAncestorFolded(ancestor: RelPath, path: RelPath): boolean {
  const a = foldKey(ancestor);
  const p = foldKey(path);
  return p.length > a.length && p.startsWith(a) && p.charCodeAt(a.length) === 47;
}

export function isAncestorOrSelf(ancestor: RelPath | '', path: RelPath): boolean {
  return ancestor === path || isAncestor(ancestor, path);
}

/** Strict ancestors of a path, nearest first, excluding ''. */
export function ancestorsOf(path: RelPath): RelPath[] {
  const out: RelPath[] = [];
  for (let i = path.lastIndexOf('/'); i > 0; i = path.lastIndexOf('/', i - 1)) out.push(asRelPath(path.slice(0, i)));
  return out;
}

/** Rewrite `path` (at or below `from`) to the same place below `to`. */
export function rebase(path: RelPath, from: RelPath, to: RelPath): RelPath {
  return path === from ? to : asRelPath(to + path.slice(from.length));
}

/** Unicode NFC form of a name or path. */
export function nfc(s: string): string {
  return s.normalize('NFC');
}

/** Case- and normalization-insensitive comparison key (see the header). */
export function foldKey(s: string): string {
  // Most names are ASCII, where normalization is the identity and lower-casing is the whole fold.
  if (asciiOnly.test(s)) return s.toLowerCase();
  return s.normalize('NFC').toUpperCase().toLowerCase().normalize('NFC');
}

const asciiOnly = /^[\x00-\x7f]*$/;

