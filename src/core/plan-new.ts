/**
 * Decisions for entries without a merge-base row: local-new and remote-new ones, and both at once (the first
 * run, or the same name created on both sides). PURE.
 *
 * Local-new: symlinks and special files are reported; of several local names that Box would see as one
 * (case or Unicode normalization), one syncs (the one already synced, else the one spelled like Box, else an
 * NFC-spelled one, else the first in code-unit order) and the others are reported; names Box refuses are reported; nothing below a
 * reported or waiting folder is planned. Otherwise upload / create the folder, once its parent exists on Box.
 * Both-new at one name: two folders, or files with equal SHA-1, are linked; a local file next to a Box web
 * link of the same name is taken as its link file; anything else keeps both (the local one is moved aside as
 * a conflict copy, then the Box one is downloaded and the copy uploaded).
 * Remote-new: downloaded / created / written as a link file once its local parent exists; names longer than
 * Linux's 255 bytes are reported.
 */
import type { LocalEntry, RelPath, RemoteEntry } from './model.js';
import type { ProblemCode } from './operations.js';
import { checkBoxName } from './names.js';
import { basename, depth, foldKey, nfc, parentOf } from './paths.js';
import { candidate, localParentExists, remoteParentId, utf8Bytes, type Candidate, type PlanContext } from './plan-context.js';
import { conflictCopy, download, kindWord, link, report, writeWeblink } from './plan-ops.js';
import { conflictPath } from './plan-synced.js';

function byDepth<T>(items: readonly T[], pathOf: (t: T) => RelPath): T[] {
  return [...items].sort((a, b) => depth(pathOf(a)) - depth(pathOf(b)));
}

export function planLocalNew(ctx: PlanContext): Candidate[] {
  const out: Candidate[] = [];
  // Paths whose descendants must wait: reported, waiting, deferred, or moved aside in this pass.
  const blocked = new Set<RelPath>();
  const { index } = ctx;
  for (const l of byDepth(index.localNew, (l) => l.path)) {
    const parent = parentOf(l.path);
    if ((parent !== '' && blocked.has(parent)) || index.isDeferred(l.path)) {
      blocked.add(l.path);
      continue;
    }
    const c = decideLocalNew(ctx, l);
    if (c.candidate) out.push(c.candidate);
    if (c.block) blocked.add(l.path);
  }
  return out;
}

function decideLocalNew(ctx: PlanContext, l: LocalEntry): { candidate?: Candidate; block: boolean } {
  const { index } = ctx;
  if (l.kind === 'symlink') return { candidate: report(ctx, l.path, 'symlink', `symbolic links are not synced (Box has no links); leaving it alone`), block: true };
  if (l.kind === 'other') return { candidate: report(ctx, l.path, 'special-file', `special files (devices, sockets, pipes) are not synced; leaving it alone`), block: true };
  const key = foldKey(l.path);
  const twins = index.localByKey.get(key) ?? [];
  const remote = index.remoteByKey.get(key);
  if (twins.length > 1) {
    const winner = pickTwin(ctx, twins, remote);
    if (winner.path !== l.path) {
      const problem: ProblemCode = nfc(winner.path) === nfc(l.path) ? 'unicode-clash' : 'case-clash';
      const how = problem === 'unicode-clash' ? 'differs only in Unicode normalization from' : 'differs only in case from';
      return { candidate: report(ctx, l.path, problem, `${how} "${winner.path}", and Box treats both as one name; only that one syncs, rename this one to sync it`), block: true };
    }
  }
  const check = checkBoxName(basename(l.path));
  if (!check.ok) return { candidate: report(ctx, l.path, check.problem, check.message), block: true };
  // The path's merge-base row still belongs to an item that is moving or going away: it leaves first.
  if (index.syncedByKey.has(key)) return { block: true };
  if (remote !== undefined) {
    // Owned by a synced item: that item decides first (it is moving, trashed, or re-created there).
    if (index.itemById.has(remote.id)) return { block: true };
    return bothNew(ctx, l, remote);
  }
  if (!ctx.mayWriteRemote) return { block: true };
  const parentId = remoteParentId(ctx, l.path);
  if (parentId === null) return { block: true };
  const name = basename(l.path);
  if (l.kind === 'folder') {
    return {
      candidate: candidate({ kind: 'create-remote-folder', root: ctx.root, path: l.path, parentId, name, reason: `new folder here; creating it on Box` }),
      block: false,
    };
  }
  return {
    candidate: candidate({
      kind: 'upload',
      root: ctx.root,
      path: l.path,
      parentId,
      name,
      guard: { state: 'file', sizeBytes: l.sizeBytes, mtimeMs: l.mtimeMs, inode: l.inode },
      reason: `new file here; uploading it`,
    }),
    block: false,
  };
}

function pickTwin(ctx: PlanContext, twins: readonly LocalEntry[], remote: RemoteEntry | undefined): LocalEntry {
  const owned = twins.find((t) => ctx.index.localOwner.has(t.path));
  if (owned) return owned;
  const remotePath = remote ? ctx.index.remotePathOf.get(remote.id) : undefined;
  const spelled = twins.find((t) => t.path === remotePath);
  if (spelled) return spelled;
  // NFC is what most software writes and what Box shows; among equals, code-unit order decides.
  const pool = twins.some((t) => nfc(t.path) === t.path) ? twins.filter((t) => nfc(t.path) === t.path) : twins;
  return pool.reduce((a, b) => (b.path < a.path ? b : a));
}

function bothNew(ctx: PlanContext, l: LocalEntry, r: RemoteEntry): { candidate?: Candidate; block: boolean } {
  if (l.kind === 'folder' && r.kind === 'folder') {
    return { candidate: link(ctx, l.path, r.id, `a folder with this name exists on both sides; linking them`), block: false };
  }
  if (l.kind === 'file' && r.kind === 'file' && l.sha1 !== null && l.sha1 === r.sha1) {
    return { candidate: link(ctx, l.path, r.id, `the same file (same SHA-1) exists on both sides; linking them without a transfer`), block: false };
  }
  if (l.kind === 'file' && r.kind === 'weblink') {
    return { candidate: link(ctx, l.path, r.id, `the local file is taken as the link file of the Box web link "${r.name}"`), block: false };
  }
  if (!ctx.mayWriteLocal) return { block: true };
  const to = conflictPath(ctx, l.path);
  const what = l.kind === r.kind ? 'different content' : `a ${kindWord(l.kind)} here and a ${kindWord(r.kind)} on Box`;
  return {
    candidate: conflictCopy(ctx, l, to, `exists on both sides with ${what}; keeping both: the local one moves to "${basename(to)}", the Box one takes the name`),
    block: true,
  };
}

export function planRemoteNew(ctx: PlanContext): Candidate[] {
  const out: Candidate[] = [];
  const { index } = ctx;
  const blocked = new Set<RelPath>();
  const entries = index.remoteNew.map((r) => ({ r, path: index.remotePathOf.get(r.id)! }));
  for (const { r, path } of byDepth(entries, (e) => e.path)) {
    const parent = parentOf(path);
    if ((parent !== '' && blocked.has(parent)) || index.isDeferred(path)) {
      blocked.add(path);
      continue;
    }
    if (utf8Bytes(basename(path)) > 255) {
      out.push(report(ctx, path, 'name-too-long', `the Box name is longer than the 255 bytes Linux allows in a name; not downloaded, rename it on Box to sync it`));
      blocked.add(path);
      continue;
    }
    // A local entry under the same name is either a synced item's (it decides first) or local-new (planLocalNew
    // pairs them); a merge-base row there belongs to an item still leaving that path.
    const key = foldKey(path);
    if (index.localByKey.has(key) || index.syncedByKey.has(key) || !ctx.mayWriteLocal || !localParentExists(ctx, path)) {
      blocked.add(path);
      continue;
    }
    out.push(remoteNewOp(ctx, r, path));
  }
  return out;
}

function remoteNewOp(ctx: PlanContext, r: RemoteEntry, path: RelPath): Candidate {
  switch (r.kind) {
    case 'file':
      return download(ctx, path, r, null, `new file on Box; downloading it`);
    case 'folder':
      return candidate({ kind: 'create-local-folder', root: ctx.root, path, remoteId: r.id, reason: `new folder on Box; creating it here` });
    case 'weblink':
      return writeWeblink(ctx, path, r, null, `new web link on Box; writing it here as an Internet shortcut (download-only)`);
    default:
      return r.kind satisfies never;
  }
}
