/** `boxsync versions` and `restore-version`: a synced file's earlier versions on Box. */
import { escapeText } from '../../../core/escape.js';
import { ItemCommandError, type ItemRequest, type MessageResult, type VersionsResult } from '../item-protocol.js';
import { fileOnly, gone, resolveItem, type ItemCommandDeps } from './context.js';
import { refuseOthersLock } from './lock.js';

export async function versions(deps: ItemCommandDeps, absPath: string): Promise<VersionsResult> {
  const it = fileOnly(resolveItem(deps, absPath), 'keep versions of');
  const info = await deps.actions.itemInfo(it.boxId, 'file');
  if (!info) throw gone(it);
  const past = await deps.actions.listVersions(it.boxId);
  const current = {
    id: info.entry.versionId ?? '(current)',
    current: true,
    sizeBytes: info.entry.sizeBytes,
    sha1: info.entry.sha1,
    modifiedAtMs: info.entry.modifiedAtMs,
    by: null,
  };
  const older = past
    .filter((v) => v.trashedAtMs === null && v.id !== current.id)
    .map((v) => ({ id: v.id, current: false, sizeBytes: v.sizeBytes, sha1: v.sha1, modifiedAtMs: v.modifiedAtMs ?? v.createdAtMs, by: v.modifiedBy?.login ?? v.modifiedBy?.name ?? null }))
    .sort((a, b) => (b.modifiedAtMs ?? 0) - (a.modifiedAtMs ?? 0));
  return { path: it.absPath, boxId: it.boxId, versions: [current, ...older] };
}

export async function restoreVersion(deps: ItemCommandDeps, req: Extract<ItemRequest, { command: 'restore-version' }>): Promise<MessageResult> {
  const it = fileOnly(resolveItem(deps, req.path), 'restore a version of');
  await refuseOthersLock(deps, it);
  const known = await deps.actions.listVersions(it.boxId);
  if (!known.some((v) => v.id === req.versionId)) {
    throw new ItemCommandError('failed', `${escapeText(it.absPath)} has no earlier version ${escapeText(req.versionId)}; \`boxsync versions ${escapeText(it.absPath)}\` lists them`);
  }
  await deps.actions.promoteVersion(it.boxId, req.versionId);
  deps.hintRemote?.([it.boxId]);
  const next = deps.hintRemote ? 'the daemon brings it down now' : 'the next sync (`boxsync sync --once`, or the daemon) brings it down';
  return { path: it.absPath, message: `${escapeText(it.absPath)}: version ${escapeText(req.versionId)} is the current one on Box again; ${next}` };
}
