/**
 * `boxsync status PATH`: where an absolute path stands, from the journal's three trees, the failures table and
 * the operation log. Pure reads; it never touches the disk beyond one lstat, through the root's LocalFs.
 */
import { pairHolding } from '../../config/folder-pair.js';
import { asRelPath, type SyncRoot } from '../../core/model.js';
import type { Journal } from '../../ports/journal.js';
import type { LocalFs } from '../../ports/local-fs.js';
import type { PathStatus } from './control-protocol.js';
import type { OperationLog } from './operation-log.js';
import { reasonText } from '../../engine/scope-change.js';
import { readSelecting, unselectedAt } from '../../engine/selective.js';
import { escapeText } from '../../core/escape.js';
import { localUnchanged } from '../../core/same-item.js';

export async function pathStatus(
  absPath: string,
  deps: {
    roots: readonly SyncRoot[];
    journal: Journal;
    ops: Pick<OperationLog, 'get'>;
    isIgnoredFor: (root: SyncRoot) => (p: string, isDir: boolean) => boolean;
    localFsFor: (root: SyncRoot) => LocalFs;
  },
): Promise<PathStatus> {
  const hit = pairHolding(deps.roots, absPath);
  if (!hit) {
    return { path: absPath, root: null, relPath: null, state: 'outside', detail: 'not inside any configured sync root', lastOperation: null, failure: null };
  }
  const { pair: root, rel } = hit;
  if (rel === '') {
    return { path: absPath, root: root.id, relPath: null, state: 'in-sync', detail: `this is a sync root, mirrored with Box folder ${root.remoteId}`, lastOperation: null, failure: null };
  }
  const relPath = asRelPath(rel);
  const st = await deps.localFsFor(root).stat(relPath).catch(() => undefined);
  const lastOperation = deps.ops.get(root.id, rel);
  const f = deps.journal.getFailure(root.id, relPath);
  const failure = f ? { code: f.code, message: f.message, attempts: f.attempts, nextRetryAtMs: f.nextRetryAtMs } : null;
  const base = { path: absPath, root: root.id, relPath, lastOperation, failure };
  if (deps.isIgnoredFor(root)(rel, st?.kind === 'folder')) {
    // Synced before and excluded since (a change of scope): say which rule, and that the local copy stays.
    const sel = unselectedAt(root, rel);
    if (sel !== undefined) {
      const what = `not synced: not selected (selective sync: ${escapeText(sel)} is in folders[].selective.unselected)`;
      return { ...base, state: 'excluded', detail: `${what}; Box keeps it${st ? ', and this local copy is not synced' : ''}; \`boxsync selective include ${escapeText(sel)}\` brings it back` };
    }
    const was = deps.journal.unsyncedPaths(root.id).find((u) => rel === u.path || rel.startsWith(`${u.path}/`));
    const detail = was
      ? `excluded by ${reasonText(was.reason)} since ${new Date(was.sinceMs).toISOString()} (it was synced before); the local copy stays where it is, unsynced, and Box keeps its own`
      : 'not synced: excluded by an exclude rule (or it is a boxsync temp file)';
    return { ...base, state: 'excluded', detail };
  }
  const selecting = readSelecting(deps.journal, root.id).find((p) => rel === p || rel.startsWith(`${p}/`));
  if (selecting !== undefined && !failure && (rel === selecting || !deps.journal.getSynced(root.id, relPath))) {
    return { ...base, state: 'pending', detail: `downloading for selective sync (${escapeText(selecting)}/ was selected again)` };
  }
  if (failure) return { ...base, state: 'failed', detail: `the last attempt failed: ${failure.message}` };
  const synced = deps.journal.getSynced(root.id, relPath);
  if (!synced && !st) return { ...base, state: 'unknown', detail: 'neither on disk nor known to the journal' };
  if (!synced) return { ...base, state: 'pending', detail: 'on disk but not yet on Box; it will be uploaded by the next pass' };
  if (!st) return { ...base, state: 'pending', detail: `deleted locally; Box item ${synced.remoteId} will be moved to the Box trash by the next pass` };
  const sameLocal = synced.kind === 'folder' ? st.kind === 'folder' : localUnchanged(synced, st);
  const remote = deps.journal.getRemote(synced.remoteId);
  const sameRemote = remote !== undefined && remote.etag === synced.etag;
  if (sameLocal && sameRemote) return { ...base, state: 'in-sync', detail: `in sync with Box ${synced.kind} ${synced.remoteId}` };
  return { ...base, state: 'pending', detail: sameLocal ? 'changed on Box; the next pass downloads it' : 'changed locally; the next pass uploads it' };
}
