/**
 * `boxsync conflicts` and `conflicts resolve`. The copies are looked at, copied, renamed and trashed through the
 * root's LocalFs, each step guard-checked: a copy or original that changed since it was looked at is left alone.
 */
import { basename, dirname, join, relative, resolve } from 'node:path';
import { escapeText } from '../../../core/escape.js';
import { asRelPath, type LocalEntry, type RelPath } from '../../../core/model.js';
import { parseConflictName, splitExtension } from '../../../core/names.js';
import type { LocalGuard } from '../../../core/operations.js';
import { isAncestorOrSelf } from '../../../core/paths.js';
import { ItemCommandError, type ConflictView, type MessageResult } from '../item-protocol.js';
import { selfAndBelow } from '../../../engine/hinted-scope.js';
import { timeSlicer } from '../../../engine/time-slice.js';
import { rootAt, type ItemCommandDeps } from './context.js';

/** How many numbered names `--keep both` tries before it gives up. */
const MAX_NUMBERED_NAMES = 1000;

/**
 * The conflict copies that exist now: the journal's local tree names them (a copy's name carries its marker,
 * core/names.ts), and each is checked on disk, so one the user deleted or renamed since the last pass is not
 * listed. The Box side is the item at the original name, as last observed. Only the rows under the path asked
 * about are read, and the walk gives the event loop a turn every 20 ms (a million rows took seconds, during which
 * the daemon answered nothing).
 */
export async function conflicts(deps: ItemCommandDeps, scopePath?: string): Promise<ConflictView[]> {
  let roots = deps.roots;
  let under: RelPath | '' = '';
  if (scopePath !== undefined) {
    const at = rootAt(deps.roots, scopePath);
    roots = [at.root];
    under = at.relPath;
  }
  const out: ConflictView[] = [];
  const slice = timeSlicer();
  for (const root of roots) {
    const disk = deps.localFsFor(root);
    const self = under === '' ? undefined : deps.journal.getLocal(root.id, under);
    for (const e of selfAndBelow(self, deps.journal.localUnder(root.id, under))) {
      await slice();
      if (e.kind !== 'file' || (under !== '' && !isAncestorOrSelf(under, e.path))) continue;
      const parsed = parseConflictName(basename(e.path));
      if (!parsed) continue;
      const st = await disk.stat(e.path).catch(() => undefined);
      if (st?.kind !== 'file') continue;
      const dir = dirname(e.path);
      const originalRel = asRelPath(dir === '.' ? parsed.original : `${dir}/${parsed.original}`);
      const synced = deps.journal.getSynced(root.id, originalRel);
      const r = synced ? deps.journal.getRemote(synced.remoteId) : undefined;
      out.push({
        copyPath: join(root.localPath, e.path),
        originalPath: join(root.localPath, originalRel),
        madeAtMs: parsed.atMs,
        local: { sizeBytes: st.sizeBytes, mtimeMs: st.mtimeMs },
        remote: r ? { boxId: r.id, sizeBytes: r.sizeBytes, modifiedAtMs: r.modifiedAtMs } : null,
      });
    }
  }
  return out.sort((a, b) => a.copyPath.localeCompare(b.copyPath));
}

/** Settle one conflict: PATH is the copy, or the original when it has exactly one copy. */
export async function resolveConflict(deps: ItemCommandDeps, path: string, keep: 'local' | 'remote' | 'both'): Promise<MessageResult> {
  const p = resolve(path);
  const { root } = rootAt(deps.roots, p);
  let copy: string;
  if (parseConflictName(basename(p))) {
    copy = p;
  } else {
    const copies = (await conflicts(deps, dirname(p))).filter((c) => c.originalPath === p);
    if (copies.length === 0) throw new ItemCommandError('failed', `${escapeText(p)} has no conflict copy (\`boxsync conflicts\` lists them)`);
    if (copies.length > 1) {
      throw new ItemCommandError('failed', `${escapeText(p)} has ${copies.length} conflict copies; name the one to settle: ${copies.map((c) => escapeText(c.copyPath)).join(', ')}`);
    }
    copy = copies[0]!.copyPath;
  }
  const disk = deps.localFsFor(root);
  const relOf = (abs: string): RelPath => asRelPath(relative(root.localPath, abs));
  const st = copy === root.localPath ? undefined : await disk.stat(relOf(copy)).catch(() => undefined);
  if (st?.kind !== 'file') throw new ItemCommandError('failed', `${escapeText(copy)} does not exist (any more); nothing to settle`);
  const original = join(dirname(copy), parseConflictName(basename(copy))!.original);
  const next = deps.hintRemote ? 'the daemon syncs it now' : 'the next sync takes it to Box';
  try {
    switch (keep) {
      case 'remote': {
        const where = await disk.trash(st.path, fileGuard(st));
        return { path: copy, message: `kept the Box version of ${escapeText(original)}; your copy went to the local trash (${escapeText(where)}); ${next}` };
      }
      case 'local': {
        const there = await disk.stat(relOf(original));
        if (there) {
          if (there.kind !== 'file') throw new ItemCommandError('failed', `${escapeText(original)} is a ${there.kind} now, not a file; nothing was changed`);
          // In place (same inode): the sync sees an edit of the original and uploads it as a new version, so Box
          // keeps the version it had as an earlier one.
          await disk.copyInto(st.path, there.path, fileGuard(there));
          await disk.trash(st.path, fileGuard(st));
        } else {
          await disk.move(st.path, relOf(original), fileGuard(st));
        }
        return { path: original, message: `kept your version as ${escapeText(original)} (Box keeps its version as an earlier one); ${next}` };
      }
      case 'both': {
        const { stem, ext } = splitExtension(basename(original));
        for (let n = 2; n < MAX_NUMBERED_NAMES + 2; n++) {
          const target = join(dirname(copy), `${stem} (${n})${ext}`);
          if (await disk.stat(relOf(target))) continue;
          await disk.move(st.path, relOf(target), fileGuard(st));
          return { path: target, message: `kept both: the Box version as ${escapeText(original)}, yours as ${escapeText(target)}; ${next}` };
        }
        throw new ItemCommandError('failed', `${escapeText(dirname(copy))} already has ${MAX_NUMBERED_NAMES} numbered copies of ${escapeText(basename(original))}; nothing was changed`);
      }
      default: {
        const never: never = keep;
        throw new ItemCommandError('fatal', `unknown choice ${String(never)}`);
      }
    }
  } finally {
    await disk.durable().catch(() => undefined);
  }
}

/** What a file must still be for a step to touch it: as it was when looked at. */
function fileGuard(e: LocalEntry): Extract<LocalGuard, { state: 'file' }> {
  return { state: 'file', sizeBytes: e.sizeBytes, mtimeMs: e.mtimeMs, inode: e.inode };
}
