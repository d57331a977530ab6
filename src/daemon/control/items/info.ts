/** `boxsync info`: a synced item as Box and the journal see it, with its sync state. */
import type { ItemInfoResult } from '../item-protocol.js';
import { pathStatus } from '../path-status.js';
import { gone, resolveItem, type ItemCommandDeps } from './context.js';
import { lockView } from './lock.js';
import { linkView } from './share.js';

export async function info(deps: ItemCommandDeps, absPath: string): Promise<ItemInfoResult> {
  const it = resolveItem(deps, absPath);
  const found = await deps.actions.itemInfo(it.boxId, it.kind);
  if (!found) throw gone(it);
  const status = await pathStatus(it.absPath, { roots: deps.roots, journal: deps.journal, ops: { get: () => null }, isIgnoredFor: deps.isIgnoredFor, localFsFor: deps.localFsFor });
  const e = found.entry;
  return {
    path: it.absPath,
    root: it.root.id,
    rootPath: it.root.localPath,
    relPath: it.relPath,
    kind: e.kind,
    boxId: e.id,
    etag: e.etag,
    versionId: e.versionId,
    sizeBytes: e.sizeBytes,
    sha1: e.sha1,
    state: status.state,
    stateDetail: status.detail,
    lock: found.lock ? await lockView(deps, found.lock) : null,
    sharedLink: found.sharedLink ? linkView(found.sharedLink) : null,
    webUrl: webUrlOf(deps.apiUrl, e.kind, e.id),
    lastOperation: it.relPath === '' ? null : (deps.journal.lastOperation(it.root.id, it.relPath) ?? null),
  };
}

/** `https://app.box.com/file/ID` for the real Box; the same path on the configured server otherwise. */
export function webUrlOf(apiUrl: string, kind: 'file' | 'folder' | 'weblink', id: string): string {
  const segment = kind === 'weblink' ? 'web_link' : kind;
  let origin: string;
  try {
    const u = new URL(apiUrl);
    origin = u.hostname === 'api.box.com' ? 'https://app.box.com' : u.origin;
  } catch {
    origin = 'https://app.box.com';
  }
  return `${origin}/${segment}/${encodeURIComponent(id)}`;
}
