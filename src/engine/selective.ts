/**
 * Selective sync (issue 27): per folder pair, the Box subfolders not kept on this disk (`folders[].selective.unselected`,
 * root-relative paths). They are ignored like an exclude rule, under their own reason `not-selected`, so a change
 * of selection goes through scope-change.ts (never a delete: the merge base is forgotten first) and the freeing of
 * the disk through selective-free.ts.
 */
import { createHash } from 'node:crypto';
import type { RelPath, RootId, SyncRoot } from '../core/model.js';
import type { Journal } from '../ports/journal.js';
import type { ScopeRules } from './scope-change.js';

type Matcher = (path: RelPath | string, isDir: boolean) => boolean;

/** The unselected entry at or above `path`, if any. */
export function unselectedAt(root: Pick<SyncRoot, 'unselected'>, path: string): string | undefined {
  return (root.unselected ?? []).find((u) => path === u || path.startsWith(`${u}/`));
}

/**
 * A folder's selection state: `synced` (it and all below it are kept here), `not synced` (it or a folder above it
 * is unselected), `partly` (some folder below it is unselected).
 */
export function selectionState(root: Pick<SyncRoot, 'unselected'>, path: string): 'synced' | 'not synced' | 'partly' {
  if (path !== '' && unselectedAt(root, path) !== undefined) return 'not synced';
  const below = (root.unselected ?? []).some((u) => path === '' || u.startsWith(`${path}/`));
  return below ? 'partly' : 'synced';
}

/** The root's matcher and scope rules with its unselected folders added (reason `not-selected`). */
export function withSelective<M extends Matcher>(root: SyncRoot, isIgnored: M, rules: ScopeRules): { isIgnored: M; rules: ScopeRules } {
  const unselected = root.unselected ?? [];
  if (unselected.length === 0) return { isIgnored, rules };
  const matcher = ((p: RelPath | string, isDir: boolean) => unselectedAt(root, p) !== undefined || isIgnored(p, isDir)) as M;
  return {
    isIgnored: matcher,
    rules: {
      // A pair with nothing unselected keeps the fingerprint it had before selective sync existed.
      fingerprint: `${rules.fingerprint}:${createHash('sha1').update(JSON.stringify(unselected)).digest('hex')}`,
      reasonFor: (p, isDir) => (unselectedAt(root, p) !== undefined ? 'not-selected' : rules.reasonFor(p, isDir)),
    },
  };
}

/**
 * Folders selected again whose download has not converged yet (journal meta `selecting:<root>`, a JSON list):
 * `boxsync status` shows them as "downloading for selective sync" until a pass over the root converges.
 */
const selectingKey = (root: string): string => `selecting:${root}`;

export function readSelecting(journal: Pick<Journal, 'getMeta'>, root: RootId): string[] {
  try {
    const v = JSON.parse(journal.getMeta(selectingKey(root)) ?? '[]') as unknown;
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

export function addSelecting(journal: Pick<Journal, 'getMeta' | 'setMeta'>, root: RootId, path: string): void {
  const now = readSelecting(journal, root);
  if (!now.includes(path)) journal.setMeta(selectingKey(root), JSON.stringify([...now, path].sort()));
}

/** A pass over the root converged: everything selected again is down. */
export function clearSelecting(journal: Pick<Journal, 'getMeta' | 'setMeta'>, root: RootId): void {
  if (readSelecting(journal, root).length > 0) journal.setMeta(selectingKey(root), '[]');
}
