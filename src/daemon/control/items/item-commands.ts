/**
 * ItemCommands: the one implementation of the item commands (info, share, unshare, lock, unlock, versions,
 * restore-version, history, conflicts, trash), one file per family beside this one. The daemon runs it behind
 * its control socket (verb `item`), with its own journal and Box client; the CLI runs the same class directly,
 * under the state lock, when no daemon answers. So the journal stays the single source of truth either way.
 *
 * Every command starts from a local path (context.ts resolveItem). Box errors become ItemCommandErrors with their
 * exit code (locked by another user 6, credentials refused 7, anything else 1). Everything that came from Box or
 * disk is escaped before it reaches a message. The disk is reached only through each root's LocalFs.
 */
import { isSyncError } from '../../../core/errors.js';
import { safeText } from '../../../core/escape.js';
import { ItemCommandError, type ConflictsResult, type HistoryResult, type ItemInfoResult, type ItemRequest, type LockView, type MessageResult, type SelectiveTreeResult, type ShareResult, type TrashListResult, type VersionsResult } from '../item-protocol.js';
import { conflicts, resolveConflict } from './conflicts.js';
import { resolveItem, type ItemCommandDeps, type ResolvedItem } from './context.js';
import { history } from './history.js';
import { info } from './info.js';
import { lockAt, lockItem, unlockItem } from './lock.js';
import { selectiveTree } from './selective-tree.js';
import { share, unshare } from './share.js';
import { trashEntries, trashRestore } from './trash.js';
import { restoreVersion, versions } from './versions.js';

export type { ItemCommandDeps, ResolvedItem } from './context.js';

export type ItemResult = ItemInfoResult | ShareResult | MessageResult | VersionsResult | HistoryResult | ConflictsResult | TrashListResult | SelectiveTreeResult;

export class ItemCommands {
  constructor(private readonly deps: ItemCommandDeps) {}

  async run(req: ItemRequest): Promise<ItemResult> {
    try {
      return await this.dispatch(req);
    } catch (e) {
      throw toItemError(e);
    }
  }

  /** The Box lock of a synced file (null: none, or not a synced file). For `boxsync status PATH`. */
  lockAt(absPath: string): Promise<LockView | null> {
    return lockAt(this.deps, absPath);
  }

  /** The root, relative path and journal row of an absolute local path. */
  resolveItem(absPath: string): ResolvedItem {
    return resolveItem(this.deps, absPath);
  }

  private async dispatch(req: ItemRequest): Promise<ItemResult> {
    const deps = this.deps;
    switch (req.command) {
      case 'info':
        return info(deps, req.path);
      case 'share':
        return share(deps, req);
      case 'unshare':
        return unshare(deps, req.path);
      case 'lock':
        return lockItem(deps, req);
      case 'unlock':
        return unlockItem(deps, req.path);
      case 'versions':
        return versions(deps, req.path);
      case 'restore-version':
        return restoreVersion(deps, req);
      case 'history':
        return history(deps, req);
      case 'conflicts':
        return { conflicts: await conflicts(deps, req.path) };
      case 'trash-list':
        return { entries: (await trashEntries(deps, req.path)).map(({ restore: _r, ...view }) => view) };
      case 'trash-restore':
        return trashRestore(deps, req);
      case 'conflicts-resolve':
        return resolveConflict(deps, req.path, req.keep);
      case 'selective-tree':
        return selectiveTree(deps, req);
      default: {
        const never: never = req;
        throw new ItemCommandError('fatal', `unknown item command ${JSON.stringify(never)}`);
      }
    }
  }
}

/** Box and journal errors as item command errors, with the exit code their kind picks. */
export function toItemError(e: unknown): ItemCommandError {
  if (e instanceof ItemCommandError) return e;
  if (isSyncError(e)) {
    const msg = safeText(e.message);
    if (e.code === 'locked') return new ItemCommandError('locked-by-other', `${msg}; only the user who locked it can change or unlock it`);
    if (e.code === 'auth_revoked' || e.code === 'unauthorized') return new ItemCommandError('auth', `${msg}; run \`boxsync login\` (or set a fresh developer token)`);
    return new ItemCommandError(e.disposition === 'fatal' ? 'fatal' : 'failed', msg);
  }
  return new ItemCommandError('failed', safeText(e instanceof Error ? e.message : String(e)));
}
