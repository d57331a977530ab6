/**
 * Selective sync: a folder no longer selected frees the disk, safely.
 *
 * By the time this runs the merge base of the folder is forgotten (scope-change.ts), so nothing here can become a
 * Box delete: the folder is ignored by the root's matcher and planned for no more. What is left is the local copy.
 * It is removed only when every file in it is exactly what the merge base had (same inode, size and mtime as
 * the last sync agreed on, so Box has that content): then the folder goes to the local trash, or with
 * `selective exclude --free-space` it is removed. A single file that differs, or that Box never had, keeps the
 * whole folder where it is, and the notice names the files that hold it. `boxsync selective exclude` uploads
 * local changes before it deselects, so this check is the backstop (an edit made in between, or a daemon that
 * reloaded the config), not the usual path.
 */
import { join } from 'node:path';
import { escapeText } from '../core/escape.js';
import type { LocalEntry, RelPath } from '../core/model.js';
import type { LocalGuard } from '../core/operations.js';
import type { LocalFs } from '../ports/local-fs.js';
import type { Deselected } from './scope-change.js';
import { localUnchanged } from '../core/same-item.js';

/** Files looked at per deselected folder; a bigger folder is kept, and said so (nothing removed unchecked). */
const MAX_CHECKED = 200_000;
/** Files named in a notice; more are counted. */
const MAX_NAMED = 10;

export interface FreeResult {
  readonly path: RelPath;
  /** Where the local copy went, 'removed' (--free-space), or null when it was kept (see `holders`) or absent. */
  readonly freedTo: string | null;
  readonly files: number;
  readonly bytes: number;
  /** Files with content Box lacks (changed since the last sync, or never synced): they keep the folder here. */
  readonly holders: readonly RelPath[];
  readonly tooBig: boolean;
  /** Why freeing it failed (the guard refused, the disk said no); the copy stays. */
  readonly failed?: string;
}

/** The files under `path` whose content differs from the merge base, with the totals of the ones that match. */
export async function checkAgainstBase(
  fs: Pick<LocalFs, 'stat' | 'childNames'>,
  d: Pick<Deselected, 'path' | 'base'>,
): Promise<{ holders: RelPath[]; files: number; bytes: number; tooBig: boolean; top: LocalEntry | undefined }> {
  const top = await fs.stat(d.path);
  const holders: RelPath[] = [];
  let files = 0;
  let bytes = 0;
  const stack: RelPath[] = top === undefined ? [] : [d.path];
  let seen = 0;
  while (stack.length > 0) {
    const rel = stack.pop()!;
    const st = rel === d.path ? top : await fs.stat(rel);
    if (st === undefined) continue;
    if (++seen > MAX_CHECKED) return { holders, files, bytes, tooBig: true, top };
    if (st.kind === 'folder') {
      for (const n of await fs.childNames(rel)) stack.push(join(rel, n) as RelPath);
      continue;
    }
    const b = d.base.get(rel);
    const same = b !== undefined && b.kind !== 'folder' && st.kind === b.kind && localUnchanged(b, st);
    if (!same) holders.push(rel);
    else {
      files++;
      bytes += st.sizeBytes;
    }
  }
  holders.sort();
  return { holders, files, bytes, tooBig: false, top };
}

/** Free the local copy of one deselected path (see the header); a folder that changed meanwhile is refused by the guard. */
export async function freeDeselected(fs: LocalFs, d: Deselected, opts: { readonly removeOutright: boolean }): Promise<FreeResult> {
  const c = await checkAgainstBase(fs, d);
  const base = { path: d.path, files: c.files, bytes: c.bytes, holders: c.holders, tooBig: c.tooBig };
  if (c.top === undefined || c.holders.length > 0 || c.tooBig) return { ...base, freedTo: null };
  const t = c.top;
  const guard: LocalGuard = t.kind === 'folder' ? { state: 'folder', inode: t.inode } : { state: 'file', inode: t.inode, sizeBytes: t.sizeBytes, mtimeMs: t.mtimeMs };
  try {
    if (opts.removeOutright) {
      await fs.removeTree(d.path, guard);
      return { ...base, freedTo: 'removed' };
    }
    return { ...base, freedTo: await fs.trash(d.path, guard) };
  } catch (e) {
    return { ...base, freedTo: null, holders: [d.path], failed: e instanceof Error ? e.message : String(e) };
  }
}

/** The start of every notice freeNotice writes for `path` (the daemon's live `selective` verb finds its answer by it). */
export function freeNoticeHead(path: string): string {
  return `${escapeText(path)} is not selected`;
}

/** What to tell the user about one freed (or kept) path. */
export function freeNotice(r: FreeResult): string {
  const name = `${escapeText(r.path)}`;
  const head = freeNoticeHead(r.path);
  const files = `${r.files} file${r.files === 1 ? '' : 's'}`;
  if (r.freedTo === 'removed') return `${head}: its local copy (${files}, ${r.bytes} bytes, all on Box) was removed to free the space; Box keeps it`;
  if (r.freedTo !== null) return `${head}: its local copy (${files}, ${r.bytes} bytes, all on Box) was moved to the local trash (${escapeText(r.freedTo)}); Box keeps it`;
  if (r.failed !== undefined) return `${head}, but its local copy is kept: ${escapeText(r.failed)}`;
  if (r.tooBig) return `${head}, but its local copy is kept: it holds more than ${MAX_CHECKED} entries to check; remove it yourself once you are sure Box has them`;
  if (r.holders.length === 0) return `${head}; there was no local copy to free`;
  const named = r.holders.slice(0, MAX_NAMED).map((p) => escapeText(p)).join(', ');
  const more = r.holders.length > MAX_NAMED ? ` and ${r.holders.length - MAX_NAMED} more` : '';
  return `${head}, but its local copy is kept (nothing removed): ${r.holders.length} file${r.holders.length === 1 ? '' : 's'} there ${r.holders.length === 1 ? 'has' : 'have'} content Box lacks: ${named}${more}. Run \`boxsync selective include ${name}\` to sync them, or move them out`;
}
