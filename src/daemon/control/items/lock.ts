/** `boxsync lock` and `unlock`, and the Box lock as the other commands show it. */
import { escapeText } from '../../../core/escape.js';
import type { ItemLock } from '../../../remote/box/index.js';
import { ItemCommandError, type ItemRequest, type LockView, type MessageResult } from '../item-protocol.js';
import { fileOnly, gone, resolveItem, type ItemCommandDeps, type ResolvedItem } from './context.js';

export async function lockItem(deps: ItemCommandDeps, req: Extract<ItemRequest, { command: 'lock' }>): Promise<MessageResult> {
  const it = fileOnly(resolveItem(deps, req.path), 'lock');
  await refuseOthersLock(deps, it);
  const lock = await deps.actions.lock(it.boxId, {
    ...(req.expiresAtMs === undefined ? {} : { expiresAtMs: req.expiresAtMs }),
    ...(req.preventDownload === undefined ? {} : { preventDownload: req.preventDownload }),
  });
  const until = lock?.expiresAtMs ? ` until ${new Date(lock.expiresAtMs).toISOString()}` : '';
  const dl = lock?.isDownloadPrevented ? '; others cannot download it' : '';
  return { path: it.absPath, message: `${escapeText(it.absPath)}: locked${until}${dl}` };
}

export async function unlockItem(deps: ItemCommandDeps, absPath: string): Promise<MessageResult> {
  const it = fileOnly(resolveItem(deps, absPath), 'unlock');
  await refuseOthersLock(deps, it);
  await deps.actions.unlock(it.boxId);
  return { path: it.absPath, message: `${escapeText(it.absPath)}: unlocked` };
}

/** The Box lock of a synced file (null: none, or not a synced file). For `boxsync status PATH`. */
export async function lockAt(deps: ItemCommandDeps, absPath: string): Promise<LockView | null> {
  let it: ResolvedItem;
  try {
    it = resolveItem(deps, absPath);
  } catch {
    return null;
  }
  if (it.kind !== 'file') return null;
  const info = await deps.actions.itemInfo(it.boxId, 'file');
  return info?.lock ? lockView(deps, info.lock) : null;
}

/** Another user's lock: a clear refusal (exit 6) before Box refuses with less to say. */
export async function refuseOthersLock(deps: ItemCommandDeps, it: ResolvedItem): Promise<void> {
  const info = await deps.actions.itemInfo(it.boxId, it.kind);
  if (!info) throw gone(it);
  const lock = info.lock ? await lockView(deps, info.lock) : null;
  if (lock && !lock.ours) {
    throw new ItemCommandError('locked-by-other', `${escapeText(it.absPath)} is locked by another Box user (id ${escapeText(lock.byUserId ?? 'unknown')}); only they can change or unlock it`);
  }
}

export async function lockView(deps: ItemCommandDeps, lock: ItemLock): Promise<LockView> {
  const me = await deps.remote.account();
  return {
    ours: lock.createdByUserId === null || lock.createdByUserId === me.userId,
    byUserId: lock.createdByUserId,
    expiresAtMs: lock.expiresAtMs,
    preventDownload: lock.isDownloadPrevented,
  };
}
