/**
 * The clean mark of a root: what lets the cost of a run grow with the change, not the tree.
 *
 * A run that converged leaves the three trees agreeing everywhere except at the paths of the failures table. If
 * the next run starts from that state, what a full plan could do is limited to what changed since: the paths
 * the local scan wrote or dropped, the items the event stream touched, and the failures (whose backoff may have
 * run out). So a run plans just those, as a daemon's hinted pass does, and a no-change run over 100,000 files
 * plans nothing instead of every window.
 *
 * The mark says "the last run of this root converged, under these rules": it is cleared (durably) before a
 * root is reconciled and written only when it converged, so a crash, a stop, a guard or a failure in between
 * leaves it cleared and the next run plans the whole root. It also holds what the plan depends on besides the
 * trees (the root's folders, direction and exclusions, and the revision of the merge rules): a change of
 * configuration or of boxsync's rules plans the whole root again. And a whole-root plan runs at least once a
 * day anyway (FULL_PLAN_EVERY_MS), as the daemon's nightly rescan does, so that nothing the event stream
 * might have missed stays missed.
 */
import { createHash } from 'node:crypto';
import { asRelPath, type RelPath, type SyncRoot } from '../core/model.js';
import type { Journal } from '../ports/journal.js';

/** Bump when the planner or the merge-base rules change what a plan does: every root is planned whole once. */
export const MERGE_RULES_REVISION = 1;

/** A whole-root plan at least this often. */
export const FULL_PLAN_EVERY_MS = 24 * 60 * 60 * 1000;

const markKey = (root: SyncRoot): string => `clean:${root.id}`;
const settlingKey = (root: SyncRoot): string => `settling:${root.id}`;
const fullKey = (root: SyncRoot): string => `lastFullPlanAtMs:${root.id}`;

function fingerprint(root: SyncRoot): string {
  const what = JSON.stringify([MERGE_RULES_REVISION, root.remoteId, root.localPath, root.direction, [...root.exclude]]);
  return createHash('sha1').update(what).digest('hex');
}

type MarkJournal = Pick<Journal, 'getMeta' | 'setMeta'>;

/**
 * May this run plan only what changed? (The last run converged under the same rules, and not too long ago, and
 * the paths a daemon's pass deferred as settling can be read.)
 */
export function isClean(journal: MarkJournal, root: SyncRoot, nowMs: number): boolean {
  if (journal.getMeta(markKey(root)) !== fingerprint(root)) return false;
  if (settlingPaths(journal, root) === undefined) return false;
  const last = Number(journal.getMeta(fullKey(root)) ?? NaN);
  return Number.isFinite(last) && nowMs - last < FULL_PLAN_EVERY_MS && nowMs >= last;
}

/** Before reconciling: whatever happens next, the root is not known to be clean until it converges. */
export function clearClean(journal: MarkJournal, root: SyncRoot): void {
  journal.setMeta(markKey(root), '');
}

/** After the root converged; `wholeRoot` when that run planned the whole root. */
export function markClean(journal: MarkJournal, root: SyncRoot, nowMs: number, wholeRoot: boolean): void {
  journal.setMeta(markKey(root), fingerprint(root));
  if (wholeRoot) journal.setMeta(fullKey(root), String(nowMs));
}

/**
 * The paths a daemon's hinted pass deferred as still settling (found gone with no move in sight: hinted-scope.ts)
 * and no pass has taken up since. The journal already holds "gone" for them, so a converged run's mark does not
 * cover them: a run that plans only what changed plans these too, unless its own process still waits for them to
 * settle. undefined when the stored value cannot be read (the run then plans the whole root).
 */
export function settlingPaths(journal: MarkJournal, root: SyncRoot): RelPath[] | undefined {
  const text = journal.getMeta(settlingKey(root));
  if (text === undefined || text === '') return [];
  try {
    const value: unknown = JSON.parse(text);
    if (!Array.isArray(value) || !value.every((p): p is string => typeof p === 'string' && p !== '' && !p.startsWith('/') && !p.split('/').includes('..'))) return undefined;
    return value.map(asRelPath);
  } catch {
    return undefined;
  }
}

export function setSettlingPaths(journal: MarkJournal, root: SyncRoot, paths: readonly RelPath[]): void {
  journal.setMeta(settlingKey(root), paths.length === 0 ? '' : JSON.stringify(paths));
}
