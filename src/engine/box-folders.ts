/**
 * Selective sync reads the Box folder tree one folder at a time: the subfolders of one folder (one listing, every
 * page), a folder found by walking its names from a folder pair's Box folder, and one folder's size. Shared by
 * `boxsync selective list`, the terminal picker (cli/selective-picker.ts) and the daemon's web page (the item
 * command `selective-tree`), so all three list alike. The listing is the RemoteStore's: validated and bounded
 * (a refused entry is left out, an incomplete listing throws).
 */
import { escapeText } from '../core/escape.js';
import type { RemoteId } from '../core/model.js';
import { foldKey } from '../core/paths.js';
import type { RemoteStore } from '../ports/remote-store.js';

export interface BoxFolder {
  readonly id: RemoteId;
  readonly name: string;
  readonly sizeBytes: number;
}

/** The subfolders of one Box folder, sorted by name. */
export async function listSubfolders(store: Pick<RemoteStore, 'listFolder'>, id: RemoteId): Promise<BoxFolder[]> {
  const out: BoxFolder[] = [];
  for await (const page of store.listFolder(id)) {
    for (const e of page.entries) if (e.kind === 'folder') out.push({ id: e.id, name: e.name, sizeBytes: e.sizeBytes });
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * The Box folder at `rel` below the folder `fromId` (`rel` '' is that folder), found by walking its names (case
 * folded, as Box compares them). Throws, naming `rel` and `where`, when a name is not a folder there.
 */
export async function folderBelow(store: Pick<RemoteStore, 'listFolder'>, fromId: RemoteId, rel: string, where: string): Promise<RemoteId> {
  let id = fromId;
  for (const name of rel === '' ? [] : rel.split('/')) {
    const hit = (await listSubfolders(store, id)).find((f) => foldKey(f.name) === foldKey(name));
    if (!hit) throw new Error(`there is no folder ${escapeText(rel)} on Box in the folder pair ${escapeText(where)}`);
    id = hit.id;
  }
  return id;
}

/** One Box folder's size (null when Box no longer has it). */
export async function folderSize(store: Pick<RemoteStore, 'getItem'>, id: RemoteId): Promise<number | null> {
  return (await store.getItem(id, 'folder'))?.sizeBytes ?? null;
}
