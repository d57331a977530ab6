/**
 * Selective sync: per folder pair, the Box subfolders not kept on this disk (`folders[].selective.unselected`,
 * root-relative paths). They are ignored like an exclude rule, under their own reason `not-selected`, so a change
 * of selection goes through scope-change.ts (never a delete: the merge base is forgotten first) and the freeing of
 * the disk through selective-free.ts.
 */
import { createHash } from 'node:crypto';
import type { RelPath, RootId, SyncRoot } from '../core/model.js';
import type { Journal } from '../ports/journal.js';
import type { ScopeRules } from './scope-rules.js';
import { unselectedAt } from '../core/unselected.js';

type Matcher = (path: RelPath | string, isDir: boolean) => boolean;

export { unselectedAt } from '../core/unselected.js';

/**
 * A folder's selection state: `synced` (it and all below it are kept here), `not synced` (it or a folder above it
 * is unselected), `partly` (some folder below it is unselected).
 */
export function selectionState(root: Pick<SyncRoot, 'unselected'>, path: string): 'synced' | 'not synced' | 'partly' {
  if (path !== '' && unselectedAt(root, path) !== undefined) return 'not synced';
  const below = (root.unselected ?? []).some((u) => path === '' || u.startsWith(`${path}/`));
  return below ? 'partly' : 'synced';
}

/**
 * The root's matcher and scope rules with its unselected folders added (reason `not-selected`). `skipped` holds the
 * new top-level folders this process left unselected (`selective.newFolders: "skip"`) before the config it read
 * had them: they count at once, and the fingerprint is the one the next process computes from the config.
 */
export function withSelective<M extends Matcher>(root: SyncRoot, isIgnored: M, rules: ScopeRules, skipped: ReadonlySet<string> = new Set()): { isIgnored: M; rules: ScopeRules } {
  const listed = (): string[] => (skipped.size === 0 ? [...(root.unselected ?? [])] : [...new Set([...(root.unselected ?? []), ...skipped])].sort());
  const at = (p: string): boolean => listed().some((u) => p === u || p.startsWith(`${u}/`));
  if (listed().length === 0 && root.newFolders !== 'skip') return { isIgnored, rules };
  const matcher = ((p: RelPath | string, isDir: boolean) => at(p) || isIgnored(p, isDir)) as M;
  return {
    isIgnored: matcher,
    rules: {
      // A pair with nothing unselected keeps the fingerprint it had before selective sync existed.
      get fingerprint(): string {
        const now = listed();
        return now.length === 0 ? rules.fingerprint : `${rules.fingerprint}:${createHash('sha1').update(JSON.stringify(now)).digest('hex')}`;
      },
      reasonFor: (p, isDir) => (at(p) ? 'not-selected' : rules.reasonFor(p, isDir)),
    },
  };
}

/**
 * `selective.newFolders: "skip"`: the folders at the top of the pair on Box that appeared since the last pass (their
 * Box ids are not in the journal meta `top-folders:<root>`) and that this disk has never had (no merge base, by
 * path or by Box id, no local entry) and no rule ignores. The first pass with "skip" only records what is there,
 * and so does the pair's first sync: that one takes what Box has. A folder once seen is never new again, so one
 * selected again with `selective include` is synced.
 */
export function newTopFolders(journal: Journal, root: SyncRoot, isIgnored: (p: RelPath, isDir: boolean) => boolean): string[] {
  if (root.newFolders !== 'skip') return [];
  const key = `top-folders:${root.id}`;
  const top = journal.remoteChildren(root.remoteId).filter((e) => e.kind === 'folder' && e.status === 'active');
  const ids = JSON.stringify(top.map((e) => e.id).sort());
  const stored = journal.getMeta(key);
  let seen: Set<string> | null = null;
  try {
    const v = stored === undefined || stored === '' ? null : (JSON.parse(stored) as unknown);
    if (Array.isArray(v)) seen = new Set(v.filter((x): x is string => typeof x === 'string'));
  } catch {
    seen = null;
  }
  if (stored !== ids) journal.setMeta(key, ids);
  if (seen === null || journal.syncedChildren(root.id, '').length === 0) return [];
  return top
    .filter((e) => !seen.has(e.id) && e.name !== '' && !e.name.includes('/'))
    .filter((e) => {
      const p = e.name as RelPath;
      return !journal.getSynced(root.id, p) && !journal.syncedByRemoteId(root.id, e.id) && !journal.getLocal(root.id, p) && !isIgnored(p, true);
    })
    .map((e) => e.name);
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
