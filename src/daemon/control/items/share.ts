/** `boxsync share` and `unshare`: a Box shared link for a synced file or folder. */
import { isSyncError } from '../../../core/errors.js';
import { escapeText, safeText } from '../../../core/escape.js';
import type { SharedLinkInfo } from '../../../remote/box/index.js';
import { ItemCommandError, type ItemRequest, type MessageResult, type SharedLinkView, type ShareResult } from '../item-protocol.js';
import { resolveItem, type ItemCommandDeps, type ResolvedItem } from './context.js';

export async function share(deps: ItemCommandDeps, req: Extract<ItemRequest, { command: 'share' }>): Promise<ShareResult> {
  const it = resolveItem(deps, req.path);
  if (req.password !== undefined && req.access !== undefined && req.access !== 'open') {
    throw new ItemCommandError('failed', `a password can only protect a link with --access open (Box's rule); nothing was changed`);
  }
  if (req.password !== undefined && req.password.length < 8) {
    throw new ItemCommandError('failed', 'Box needs a shared-link password of at least 8 characters; nothing was changed');
  }
  let link: SharedLinkInfo;
  try {
    link = await deps.actions.createSharedLink(it.boxId, shareKind(it), {
      ...(req.access === undefined ? (req.password === undefined ? {} : { access: 'open' as const }) : { access: req.access }),
      ...(req.password === undefined ? {} : { password: req.password }),
      ...(req.expiresAtMs === undefined ? {} : { unsharedAtMs: req.expiresAtMs }),
      ...(req.noDownload ? { canDownload: false } : {}),
    });
  } catch (e) {
    if (isSyncError(e) && (req.password !== undefined || req.expiresAtMs !== undefined) && ['bad_request', 'forbidden', 'invalid_request'].includes(e.code)) {
      const what = [req.password !== undefined ? 'a password' : null, req.expiresAtMs !== undefined ? 'an expiry date' : null].filter(Boolean).join(' and ');
      throw new ItemCommandError(
        'failed',
        `Box refused ${what} for this shared link (${safeText(e.message)}). Free and personal Box accounts cannot set passwords or expiry dates, and a password needs --access open; nothing was changed`,
      );
    }
    throw e;
  }
  const view = linkView(link);
  return { path: it.absPath, url: view.url, printed: view.url, link: view };
}

export async function unshare(deps: ItemCommandDeps, absPath: string): Promise<MessageResult> {
  const it = resolveItem(deps, absPath);
  await deps.actions.removeSharedLink(it.boxId, shareKind(it));
  return { path: it.absPath, message: `${escapeText(it.absPath)}: shared link removed` };
}

function shareKind(it: ResolvedItem): 'file' | 'folder' {
  if (it.kind === 'weblink') throw new ItemCommandError('failed', `${escapeText(it.absPath)} is a Box web link; boxsync shares files and folders`);
  return it.kind;
}

export function linkView(l: SharedLinkInfo): SharedLinkView {
  return { url: l.url, downloadUrl: l.downloadUrl, access: l.access, passwordEnabled: l.isPasswordEnabled, expiresAtMs: l.unsharedAtMs };
}
