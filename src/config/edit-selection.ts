/**
 * Writes `folders[index].selective.unselected` into the config file, keeping every other key as it is (the file
 * is JSON; it is replaced atomically, with its mode). Used by `boxsync selective exclude|include` and by the
 * engine's `selective.newFolders: "skip"` (daemon/compose.ts) and the daemon's `selective` verb (daemon/selective-command.ts).
 */
import { randomBytes } from 'node:crypto';
import { readFile, rename, stat, writeFile } from 'node:fs/promises';

export async function writeSelection(file: string, index: number, unselected: readonly string[]): Promise<void> {
  const text = await readFile(file, 'utf8');
  const raw = JSON.parse(text) as { folders: Record<string, unknown>[] };
  const folder = raw.folders[index];
  if (folder === undefined) throw new Error(`${file} has no folders[${index}] any more; the selection was not written`);
  folder['selective'] = { ...((folder['selective'] as Record<string, unknown> | undefined) ?? {}), unselected: [...unselected] };
  const mode = (await stat(file)).mode & 0o777;
  // Unique per write: the daemon's `selective` verb and its newFolders skip may both write in one process.
  const tmp = `${file}.boxsync-${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(tmp, `${JSON.stringify(raw, null, 2)}\n`, { mode });
  await rename(tmp, file);
}
