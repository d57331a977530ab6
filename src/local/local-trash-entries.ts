/**
 * What is in boxsync's local trash (local-trash.ts), for `boxsync trash list|restore`: the state trash
 * (`<stateDir>/trash/<day>/manifest.jsonl` and the entries it names) and, in 'freedesktop' mode, the desktop trash
 * (`info/*.trashinfo` and `files/`). Only entries whose content is still there are listed.
 *
 * Ids: `local:<entry>` for the state trash (the entry folder name, `<epoch ms>-<hex>`), `desktop:<name>` for the
 * desktop trash (the name under files/). Restoring renames the content back (across devices by copy and verify)
 * and refuses to overwrite anything.
 */
import { basename, dirname, join } from 'node:path';
import { homedir } from 'node:os';
import { moveAcrossDevices } from './cross-device-move.js';
import { errnoOf } from './fs-errors.js';
import type { FsModule } from './fs-module.js';
import type { LocalTrashMode, ManifestLine } from './local-trash.js';

export interface LocalTrashEntry {
  readonly id: string;
  /** Where it was, absolute. */
  readonly originalPath: string;
  /** Where it is now, absolute. */
  readonly location: string;
  readonly kind: 'file' | 'folder';
  readonly sizeBytes: number;
  readonly trashedAtMs: number;
}

export interface TrashPlaces {
  readonly mode: LocalTrashMode;
  readonly stateDir: string;
  readonly fs: FsModule;
  readonly xdgDataHome?: string;
}

export async function listLocalTrash(p: TrashPlaces): Promise<LocalTrashEntry[]> {
  const out: LocalTrashEntry[] = [];
  const stateTrash = join(p.stateDir, 'trash');
  for (const day of await readdirOrEmpty(p.fs, stateTrash)) {
    let text: string;
    try {
      text = await p.fs.promises.readFile(join(stateTrash, day, 'manifest.jsonl'), 'utf8');
    } catch {
      continue;
    }
    for (const l of text.split('\n')) {
      if (l.trim() === '') continue;
      let m: ManifestLine;
      try {
        m = JSON.parse(l) as ManifestLine;
      } catch {
        continue;
      }
      if (typeof m.entry !== 'string' || typeof m.originalPath !== 'string' || typeof m.relPath !== 'string' || !/^\d+-[0-9a-f]+$/.test(m.entry)) continue;
      const location = join(stateTrash, day, m.entry, m.relPath);
      const e = await entryAt(p.fs, `local:${m.entry}`, m.originalPath, location, Number(m.trashedAtMs) || 0);
      if (e) out.push(e);
    }
  }
  if (p.mode === 'freedesktop') {
    const trash = join(p.xdgDataHome ?? process.env.XDG_DATA_HOME ?? join(homedir(), '.local', 'share'), 'Trash');
    for (const info of await readdirOrEmpty(p.fs, join(trash, 'info'))) {
      if (!info.endsWith('.trashinfo')) continue;
      const name = info.slice(0, -'.trashinfo'.length);
      let text: string;
      try {
        text = await p.fs.promises.readFile(join(trash, 'info', info), 'utf8');
      } catch {
        continue;
      }
      const path = /^Path=(.*)$/m.exec(text)?.[1];
      const date = /^DeletionDate=(.*)$/m.exec(text)?.[1];
      if (!path?.startsWith('/')) continue;
      let originalPath: string;
      try {
        originalPath = path.split('/').map(decodeURIComponent).join('/');
      } catch {
        continue;
      }
      const e = await entryAt(p.fs, `desktop:${name}`, originalPath, join(trash, 'files', name), date ? Date.parse(date) || 0 : 0);
      if (e) out.push(e);
    }
  }
  return out.sort((a, b) => b.trashedAtMs - a.trashedAtMs);
}

/** Put an entry back at `target` (absolute); throws EEXIST-coded errors when something is there already. */
export async function restoreLocalTrashEntry(p: TrashPlaces, entry: LocalTrashEntry, target: string): Promise<void> {
  if (await p.fs.promises.lstat(target).then(() => true, () => false)) {
    throw Object.assign(new Error(`${target} exists`), { code: 'EEXIST' });
  }
  await p.fs.promises.mkdir(dirname(target), { recursive: true });
  try {
    await p.fs.promises.rename(entry.location, target);
  } catch (e) {
    if (errnoOf(e) !== 'EXDEV') throw e;
    await moveAcrossDevices(p.fs, entry.location, target);
  }
  if (entry.id.startsWith('desktop:')) {
    await p.fs.promises.unlink(join(dirname(dirname(entry.location)), 'info', `${basename(entry.location)}.trashinfo`)).catch(() => undefined);
  }
}

async function entryAt(fs: FsModule, id: string, originalPath: string, location: string, trashedAtMs: number): Promise<LocalTrashEntry | null> {
  try {
    const st = await fs.promises.lstat(location);
    if (!st.isFile() && !st.isDirectory()) return null;
    return { id, originalPath, location, kind: st.isDirectory() ? 'folder' : 'file', sizeBytes: st.isFile() ? st.size : 0, trashedAtMs };
  } catch {
    return null;
  }
}

async function readdirOrEmpty(fs: FsModule, dir: string): Promise<string[]> {
  try {
    return (await fs.promises.readdir(dir)).map(String).sort();
  } catch (e) {
    if (errnoOf(e) === 'ENOENT') return [];
    throw e;
  }
}
