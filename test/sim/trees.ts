/**
 * The two trees as the simulation sees them, read without the engine: the local folder from the disk, Box from
 * box-server's control actor (what a web user sees) and from box-server's persisted state (every item, trashed
 * ones and old versions included).
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ServerActor } from '../../src/box-server/index.js';
import { Persistence } from '../../src/box-server/persistence.js';
import { isTempName } from '../../src/local/temp-name.js';

export type Entry = { readonly kind: 'dir' } | { readonly kind: 'file'; readonly sha1: string; readonly size: number };

export interface LocalTree {
  /** Relative '/'-separated path -> entry, boxsync's temp files left out. */
  readonly entries: Map<string, Entry>;
  /** Paths of boxsync temp files (TEMP_PREFIX) found anywhere. */
  readonly temps: string[];
  /** Anything that is neither a file nor a folder (symlinks, sockets...). */
  readonly odd: string[];
  /** Names that are not UTF-8 (read with U+FFFD in their place): boxsync parks them, they are in no tree. */
  readonly undecodable: string[];
}

export function sha1Of(data: Buffer | string): string {
  return createHash('sha1').update(data).digest('hex');
}

export async function readLocalTree(root: string): Promise<LocalTree> {
  const entries = new Map<string, Entry>();
  const temps: string[] = [];
  const odd: string[] = [];
  const undecodable: string[] = [];
  async function walk(rel: string): Promise<void> {
    let list;
    try {
      list = await readdir(join(root, rel), { withFileTypes: true });
    } catch (e) {
      // Gone since its parent was listed: only a running daemon moves things while the simulation reads.
      if (['ENOENT', 'ENOTDIR'].includes((e as NodeJS.ErrnoException).code ?? '')) return;
      throw e;
    }
    for (const d of list) {
      const p = rel === '' ? d.name : `${rel}/${d.name}`;
      if (d.name.includes('\uFFFD')) {
        undecodable.push(p);
      } else if (isTempName(d.name)) {
        temps.push(p);
      } else if (d.isDirectory()) {
        entries.set(p, { kind: 'dir' });
        await walk(p);
      } else if (d.isFile()) {
        let data: Buffer;
        try {
          data = await readFile(join(root, p));
        } catch (e) {
          if (['ENOENT', 'EISDIR'].includes((e as NodeJS.ErrnoException).code ?? '')) continue;
          throw e;
        }
        entries.set(p, { kind: 'file', sha1: sha1Of(data), size: data.length });
      } else {
        odd.push(p);
      }
    }
  }
  await walk('');
  return { entries, temps, odd, undecodable };
}

export interface BoxEntryRef {
  readonly type: 'file' | 'folder' | 'web_link';
  readonly id: string;
}

/** The Box tree under `rootId`, as the web user sees it: path -> entry, plus path -> id. */
export function readBoxTree(web: ServerActor, rootId: string): { entries: Map<string, Entry>; ids: Map<string, BoxEntryRef> } {
  const entries = new Map<string, Entry>();
  const ids = new Map<string, BoxEntryRef>();
  const walk = (folderId: string, rel: string): void => {
    for (const c of web.listFolder(folderId)) {
      const p = rel === '' ? c.name : `${rel}/${c.name}`;
      if (c.type === 'folder') {
        entries.set(p, { kind: 'dir' });
        ids.set(p, { type: 'folder', id: c.id });
        walk(c.id, p);
      } else if (c.type === 'file') {
        entries.set(p, { kind: 'file', sha1: c.sha1 ?? '', size: -1 });
        ids.set(p, { type: 'file', id: c.id });
      } else {
        ids.set(p, { type: 'web_link', id: c.id });
      }
    }
  };
  walk(rootId, '');
  return { entries, ids };
}

/**
 * Every content Box can still give back, from box-server's persisted state: each version (current, old, or
 * deleted-but-restorable) of each file that is not purged, wherever it is (a folder, the trash, inside a trashed
 * folder). sha1 -> where.
 */
export function readBoxRecoverable(boxDataDir: string): Map<string, string> {
  const state = new Persistence(boxDataDir).load();
  if (!state) throw new Error(`sim: box-server persisted no state in ${boxDataDir}`);
  const out = new Map<string, string>();
  for (const it of Object.values(state.items)) {
    if (it.type !== 'file' || it.status === 'deleted') continue;
    for (const v of it.versions) {
      const where = `Box file ${it.id} "${it.name}" (${it.status}), ${v.id === it.currentVersionId ? 'current version' : `version ${v.id}${v.trashedAtMs !== null ? ' (deleted version)' : ''}`}`;
      if (!out.has(v.sha1)) out.set(v.sha1, where);
    }
  }
  return out;
}

/** Every file under a directory (the local trash): sha1 -> path. */
export async function readFilesUnder(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  let list;
  try {
    list = await readdir(dir, { recursive: true, withFileTypes: true });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return out;
    throw e;
  }
  for (const d of list) {
    if (!d.isFile()) continue;
    const p = join(d.parentPath, d.name);
    out.set(sha1Of(await readFile(p)), p);
  }
  return out;
}

export function formatTree(entries: Map<string, Entry>): string {
  const lines = [...entries.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([p, e]) => (e.kind === 'dir' ? `  ${p}/` : `  ${p}  ${e.sha1.slice(0, 10)}`));
  return lines.length === 0 ? '  (empty)' : lines.join('\n');
}
