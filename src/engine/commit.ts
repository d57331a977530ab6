/**
 * Committing an operation's outcome: the journal rows each successful operation changes, written by the
 * reconciler inside ONE transaction per outcome (so a crash leaves either the old or the new state, and the
 * next plan, rebuilt from the trees, picks up from there).
 *
 * What changes is decided by the merge-base rules of core/tree-effects.ts (the same rules the planner's
 * simulation applies to its maps); this file only carries the edits out on the journal. Moves rename whole
 * subtrees in one statement each, so a folder rename costs one row update per tree, not one per descendant.
 */
import type { RootId } from '../core/model.js';
import { assertNever, type Operation } from '../core/operations.js';
import { effectsOf, type TreeEffect, type TreesBefore } from '../core/tree-effects.js';
import type { Journal } from '../ports/journal.js';
import type { OpResult } from './executor.js';

function journalTrees(journal: Journal, root: RootId): TreesBefore {
  return {
    remote: (id) => journal.getRemote(id),
    local: (path) => journal.getLocal(root, path),
    syncedOf: (id) => journal.syncedByRemoteId(root, id),
  };
}

/** Carry out the edits of core/tree-effects.ts on the journal. Call inside journal.transaction. */
export function applyEffectsToJournal(journal: Journal, root: RootId, effects: readonly TreeEffect[]): void {
  for (const e of effects) {
    switch (e.edit) {
      case 'put':
        if (e.tree === 'remote') {
          journal.putRemote(e.entry);
          journal.markTrashed(e.entry.id, false);
        } else if (e.tree === 'local') journal.putLocal(root, e.entry);
        else journal.putSynced(root, e.entry);
        break;
      case 'trash':
        // The journal keeps only the live remote tree: a trashed folder's rows go; a restore lists it again.
        journal.deleteRemoteSubtree(e.id);
        journal.deleteRemote(e.id);
        journal.markTrashed(e.id, true);
        break;
      case 'delete':
        if (e.tree === 'local') journal.deleteLocalSubtree(root, e.path);
        else journal.deleteSyncedSubtree(root, e.path);
        break;
      case 'move':
        if (e.tree === 'local') journal.moveLocalSubtree(root, e.from, e.to);
        else journal.moveSyncedSubtree(root, e.from, e.to);
        break;
      default:
        assertNever(e);
    }
  }
}

/** Apply one successful outcome to the journal. Call inside journal.transaction. */
export function commitOutcome(journal: Journal, root: RootId, op: Operation, result: OpResult): void {
  applyEffectsToJournal(journal, root, effectsOf(op, result, journalTrees(journal, root)));
}
