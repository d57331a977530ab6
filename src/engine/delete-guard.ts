/**
 * The mass-delete guard (SYNC-LESSONS #1): a pass that would trash more than `maxDeletes` items AND more than
 * `maxDeleteFraction` of the root, on either side, is refused. `sync --once` stops with outcome 'guard' (exit 3);
 * the daemon holds the guard until the user confirms it. A trashed folder counts with every synced item below it.
 */
import type { RootId } from '../core/model.js';
import type { Operation } from '../core/operations.js';
import type { Journal } from '../ports/journal.js';
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
}): DeleteGuardVerdict | null {
  let deletes = 0;
  for (const op of args.ops) {
    if (op.kind !== 'remote-trash' && op.kind !== 'local-trash') continue;
    deletes += 1;
    for (const _ of args.journal.syncedUnder(args.root, op.path)) deletes += 1;
  }
  if (deletes === 0) return null;
  const counts = args.journal.countSynced(args.root);
  const totalItems = counts.files + counts.folders;
  if (deletes <= args.maxDeletes || deletes <= args.maxDeleteFraction * totalItems) return null;
  return {
    deletes,
    totalItems,
    id: guardIdText({ kind: 'mass-delete', root: args.root, deletes }),
    message:
      `refusing to delete ${deletes} of ${totalItems} synced items in ${args.localPath} in one pass ` +
      `(limit ${args.maxDeletes} items and ${Math.round(args.maxDeleteFraction * 100)} %); nothing was deleted. ` +
      'If this is intended, confirm it (daemon) or raise maxDeletes and run again.',
  };
}
