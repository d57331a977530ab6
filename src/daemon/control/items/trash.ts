/**
 * `boxsync trash list` and `trash restore`: both trashes (Box's and boxsync's local one), limited to the roots.
 * A local entry is restored by local/local-trash-entries.ts, the owner of the local trash's layout.
 */
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { pairHolding, within } from '../../../config/folder-pair.js';
import { isSyncError } from '../../../core/errors.js';
import { escapeText } from '../../../core/escape.js';
import type { RemoteId } from '../../../core/model.js';
import { remotePathOf } from '../../../engine/remote-tree.js';
import { listLocalTrash, restoreLocalTrashEntry } from '../../../local/local-trash-entries.js';
import { ItemCommandError, type ItemRequest, type MessageResult, type TrashEntryView } from '../item-protocol.js';
import { resolveItem, rootAt, type ItemCommandDeps } from './context.js';

export type RestorableEntry = TrashEntryView & { restore: (to: { dir?: string; name?: string }) => Promise<string> };

/** Both trashes, newest first, limited to the roots (or to one path and what was below it). */
export async function trashEntries(deps: ItemCommandDeps, scopePath?: string): Promise<RestorableEntry[]> {
  const scope = scopePath === undefined ? null : resolve(scopePath);
  if (scope !== null) rootAt(deps.roots, scope);
  const inScope = (abs: string): boolean => {
    const hit = pairHolding(deps.roots, abs);
    return hit !== null && hit.rel !== '' && (scope === null || within(abs, scope));
  };
  const out: RestorableEntry[] = [];
  for (const t of await deps.actions.listTrash()) {
    if (t.parentId === null) continue;
    for (const root of deps.roots) {
      const parent = remotePathOf(deps.journal, root, t.parentId);
      if (parent === null) continue;
      const name = t.kind === 'weblink' ? `${t.name}.url` : t.name;
      const abs = join(root.localPath, parent, name);
      if (!inScope(abs)) break;
      out.push({
        source: 'box',
        id: t.id,
        path: abs,
        kind: t.kind,
        sizeBytes: t.sizeBytes,
        trashedAtMs: t.trashedAtMs,
        restore: async (to) => {
          if (t.kind === 'weblink') throw new ItemCommandError('failed', `${escapeText(abs)} is a Box web link; restore it on box.com`);
          const parentId = to.dir === undefined ? undefined : folderIdOf(deps, to.dir);
          const e = await deps.actions.restoreFromTrash(t.id, t.kind, { ...(to.name === undefined ? {} : { name: to.name }), ...(parentId === undefined ? {} : { parentId }) });
          deps.hintRemote?.([t.id, ...(e.parentId ? [e.parentId] : [])]);
          return `restored Box ${t.kind} ${t.id} from the Box trash (same id)`;
        },
      });
      break;
    }
  }
  if (deps.trashPlaces) {
    const places = deps.trashPlaces;
    for (const l of await listLocalTrash(places)) {
      if (!inScope(l.originalPath)) continue;
      out.push({
        source: 'local',
        id: l.id,
        path: l.originalPath,
        kind: l.kind,
        sizeBytes: l.sizeBytes,
        trashedAtMs: l.trashedAtMs,
        restore: async (to) => {
          const target = join(to.dir === undefined ? dirname(l.originalPath) : resolve(to.dir), to.name ?? basename(l.originalPath));
          rootAt(deps.roots, target);
          try {
            await restoreLocalTrashEntry(places, l, target);
          } catch (e) {
            if ((e as NodeJS.ErrnoException).code === 'EEXIST') throw clash(target);
            throw e;
          }
          return `restored ${escapeText(target)} from the local trash`;
        },
      });
    }
  }
  return out.sort((a, b) => (b.trashedAtMs ?? 0) - (a.trashedAtMs ?? 0));
}

/**
 * Restore one item. By id: that entry. By path: the newest entry that was there, preferring the Box trash
 * (a Box restore keeps the item's id, versions and shared links; the sync brings it down) over the local one.
 */
export async function trashRestore(deps: ItemCommandDeps, req: Extract<ItemRequest, { command: 'trash-restore' }>): Promise<MessageResult> {
  const all = await trashEntries(deps);
  const id = /^box:/.test(req.target) ? req.target.slice(4) : req.target;
  let entry = all.find((e) => e.id === id);
  if (!entry && isAbsolute(req.target)) {
    const p = resolve(req.target);
    rootAt(deps.roots, p);
    const there = all.filter((e) => e.path === p);
    entry = there.find((e) => e.source === 'box') ?? there[0];
  }
  if (!entry) {
    throw new ItemCommandError('not-synced', `nothing in the Box trash or the local trash matches ${escapeText(req.target)} under the synced folders; \`boxsync trash list\` shows what is there`);
  }
  let done: string;
  try {
    done = await entry.restore({ ...(req.to === undefined ? {} : { dir: req.to }), ...(req.name === undefined ? {} : { name: req.name }) });
  } catch (e) {
    if (isSyncError(e) && e.code === 'item_name_in_use') throw clash(req.name ?? entry.path);
    throw e;
  }
  const next = entry.source === 'box' ? (deps.hintRemote ? 'the daemon brings it down now' : 'the next sync brings it down') : deps.hintRemote ? 'the daemon uploads it now' : 'the next sync uploads it';
  return { path: entry.path, message: `${done}; ${next}` };
}

/** The Box id of a synced folder (or a root), for `trash restore --to DIR`. */
function folderIdOf(deps: ItemCommandDeps, dir: string): RemoteId {
  const it = resolveItem(deps, dir);
  if (it.kind !== 'folder') throw new ItemCommandError('failed', `${escapeText(it.absPath)} is not a folder`);
  return it.boxId;
}

function clash(what: string): ItemCommandError {
  return new ItemCommandError('failed', `something named ${escapeText(basename(what))} is already there; nothing was restored. Pick another name with --name NEW (or another folder with --to DIR)`);
}
