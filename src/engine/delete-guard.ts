/**
 * The mass-delete guard: a pass that would trash more than `maxDeletes` items AND more than
 * `maxDeleteFraction` of the root, on either side, is refused. `sync --once` stops with outcome 'guard' (exit 3);
 * the daemon holds the guard until the user confirms it. A trashed folder counts with every synced item below it.
 *
 * Deleting everything under a root always asks, whatever the count (a small mirror on a disk that is
 * not mounted would otherwise go into the Box trash below the 100-item limit), unless `maxDeleteFraction` is 1 (the
 * user allows deleting all of a root in one pass). Everything: every synced item, while the side the deletions
 * come from holds nothing (a file replaced by a folder of the same name trashes the file, but is no emptied root).
 */
import type { RelPath, RootId, SyncRoot } from '../core/model.js';
import type { Operation } from '../core/operations.js';
import type { Journal } from '../ports/journal.js';
import { escapeText } from '../core/escape.js';
import { guardIdText } from './guard-id.js';

export interface DeleteGuardVerdict {
  readonly deletes: number;
  readonly totalItems: number;
  /** Stable for the same situation, so a confirmation releases exactly what the user saw. */
  readonly id: string;
  readonly message: string;
}

export function checkMassDelete(args: {
  /** Only these two reads (the dry run hands in its simulated merge base). */
  journal: Pick<Journal, 'syncedUnder' | 'countSynced'>;
  root: RootId;
  localPath: string;
  ops: readonly Operation[];
  maxDeletes: number;
  maxDeleteFraction: number;
  /** Does the root hold nothing (ignored names aside) on that side now? ('local': the disk, 'remote': Box.) */
  sideEmpty: (side: 'local' | 'remote') => boolean;
}): DeleteGuardVerdict | null {
  let deletes = 0;
  const from = new Set<'local' | 'remote'>();
  for (const op of args.ops) {
    if (op.kind !== 'remote-trash' && op.kind !== 'local-trash') continue;
    deletes += 1;
    // Trashed on Box because it is gone here, and the other way round.
    from.add(op.kind === 'remote-trash' ? 'local' : 'remote');
    for (const _ of args.journal.syncedUnder(args.root, op.path)) deletes += 1;
  }
  if (deletes === 0) return null;
  const counts = args.journal.countSynced(args.root);
  const totalItems = counts.files + counts.folders;
  const id = guardIdText({ kind: 'mass-delete', root: args.root, deletes });
  if (deletes >= totalItems && totalItems > 0 && args.maxDeleteFraction < 1 && [...from].every(args.sideEmpty)) {
    return {
      deletes,
      totalItems,
      id,
      message:
        `refusing to delete all ${totalItems} synced item${totalItems === 1 ? '' : 's'} in ${escapeText(args.localPath)} in one pass; nothing was deleted. ` +
        `If this is intended, confirm it (boxsync confirm ${id} while the daemon runs, or boxsync sync --once --confirm ${id}).`,
    };
  }
  if (deletes <= args.maxDeletes || deletes <= args.maxDeleteFraction * totalItems) return null;
  return {
    deletes,
    totalItems,
    id,
    message:
      `refusing to delete ${deletes} of ${totalItems} synced items in ${escapeText(args.localPath)} in one pass ` +
      `(limit ${args.maxDeletes} items and ${Math.round(args.maxDeleteFraction * 100)} %); nothing was deleted. ` +
      `If this is intended, confirm it (boxsync confirm ${id} while the daemon runs, or boxsync sync --once --confirm ${id}) or raise maxDeletes and run again.`,
  };
}

/** Does the journal's tree of this side of the root hold nothing but ignored names? (For checkMassDelete.) */
export function rootSideEmpty(
  journal: Pick<Journal, 'localChildren' | 'remoteChildren'>,
  root: SyncRoot,
  isIgnored: (path: RelPath, isDir: boolean) => boolean,
  side: 'local' | 'remote',
): boolean {
  if (side === 'local') return journal.localChildren(root.id, '').every((e) => isIgnored(e.path, e.kind === 'folder'));
  return journal.remoteChildren(root.remoteId).every((e) => isIgnored(e.name as RelPath, e.kind === 'folder'));
}
