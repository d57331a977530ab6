/**
 * The item command `selective-tree` (the web page's selective sync view): the Box subfolders of one folder of a
 * folder pair, a page at a time, each with its size on Box and its selection state, listed from Box when asked
 * (engine/box-folders.ts, the listing `boxsync selective list` and the terminal picker use). Only folders inside
 * a configured pair can be asked for (`outside-root` otherwise): the folder's Box id comes from the journal's
 * merge base, or for a folder not kept here, by walking its names from the nearest synced folder above it. The
 * change of selection itself is the daemon's `selective` verb (selective-command.ts), with its safety rules.
 */
import { resolve } from 'node:path';
import type { RelPath, RemoteId, SyncRoot } from '../../../core/model.js';
import { folderBelow, listSubfolders } from '../../../engine/box-folders.js';
import { selectionState } from '../../../engine/selective.js';
import { createIgnoreMatcher } from '../../../local/ignore.js';
import type { ItemRequest, SelectionStateView, SelectiveTreeResult } from '../item-protocol.js';
import { rootAt, type ItemCommandDeps } from './context.js';

/** Folders per page when the request names no limit. */
const DEFAULT_LIMIT = 200;

export async function selectiveTree(deps: ItemCommandDeps, req: Extract<ItemRequest, { command: 'selective-tree' }>): Promise<SelectiveTreeResult> {
  const { root, relPath } = rootAt(deps.roots, req.path);
  const rel: string = relPath;
  const id = await boxIdOf(deps, root, rel);
  const all = await listSubfolders(deps.remote, id);
  const offset = req.offset ?? 0;
  const page = all.slice(offset, offset + (req.limit ?? DEFAULT_LIMIT));
  const excluded = createIgnoreMatcher(root.exclude);
  const stateOf = (p: string): SelectionStateView => (p !== '' && excluded(p, true) ? 'excluded' : selectionState(root, p));
  return {
    path: resolve(root.localPath, rel),
    state: stateOf(rel),
    offset,
    total: all.length,
    folders: page.map((f) => {
      const childRel = rel === '' ? f.name : `${rel}/${f.name}`;
      return { name: f.name, path: resolve(root.localPath, childRel), sizeBytes: f.sizeBytes, state: stateOf(childRel) };
    }),
  };
}

/** The Box id of the folder at `rel`: from the merge base, or walked on Box from the nearest synced folder above. */
async function boxIdOf(deps: ItemCommandDeps, root: SyncRoot, rel: string): Promise<RemoteId> {
  const names = rel === '' ? [] : rel.split('/');
  for (let n = names.length; n > 0; n--) {
    const above = names.slice(0, n).join('/');
    const row = deps.journal.getSynced(root.id, above as RelPath);
    if (row?.kind === 'folder') return folderBelow(deps.remote, row.remoteId, names.slice(n).join('/'), root.localPath);
  }
  return folderBelow(deps.remote, root.remoteId, rel, root.localPath);
}
