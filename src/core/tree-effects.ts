/**
 * The merge-base rules, written once: for an operation that succeeded and what its outcome reported, which
 * edits the three trees (remote, local, synced) take. PURE. Two appliers carry the edits out: the planner's
 * simulation on in-memory maps (core/apply.ts) and the reconciler's commit on the SQLite journal
 * (engine/commit.ts), so the model the property tests drive and what production records cannot drift apart.
 *
 * The rules:
 * - Every operation that leaves both sides in agreement about an item records its base from both sides
 *   (`baseFrom`): Box etag/SHA-1/version/URL, the local inode and mtime. A download records the version it
 *   fetched (the op's expectation), not whatever the remote row says by the time the commit runs.
 * - The base follows the Box id, not a path: when the item's row sits elsewhere (moved on both sides, moved
 *   aside by an earlier pass), that row and the rows below it move to the operation's path first.
 * - remote-move / local-move move the item's base rows and refresh the Box etag and version only while Box
 *   still holds the agreed content (`rebaseOnMove`). The local stat is never refreshed there: a local edit made
 *   before the move must still read as an edit on the next pass (a refreshed inode/mtime would hide it).
 * - remote-trash, local-trash and forget drop the base rows at and below the path.
 * - conflict-copy moves the local entry aside and drops the base rows at and below the original path, so the
 *   next pass sees the Box item as new there (download) and the copy as new here (upload).
 * - remote-restore makes the Box item active again (same id, history and links); its base row stays where it
 *   was, and takes the restored etag only when the content is still the agreed one, so a local edit is still
 *   seen against the base (upload-version) and a restore that changed the etag is not read as a Box edit.
 * - A web link's base row records the link file's size (the only local stat a link file has besides mtime and
 *   inode), so a synced link file does not read as stale on every pass.
 * - report changes nothing.
 */
import { SyncError } from './errors.js';
import type { LocalEntry, RelPath, RemoteEntry, RemoteId, SyncedEntry } from './model.js';
import { assertNever, type Operation } from './operations.js';

/** What a successful operation reported: the Box answer and the local stat, when it yields them. */
export interface OutcomeEntries {
  readonly remote?: RemoteEntry;
  readonly local?: LocalEntry;
}

/** The trees as they were before the outcome is applied (reads only). */
export interface TreesBefore {
  remote(id: RemoteId): RemoteEntry | undefined;
  local(path: RelPath): LocalEntry | undefined;
  /** The base row of a Box item, wherever it is. */
  syncedOf(id: RemoteId): SyncedEntry | undefined;
}

/**
 * One primitive edit. Deletes and moves take the whole subtree at and below the path. A remote `put` is a Box
 * answer for an active item (so the item is no longer in the trash); a remote `trash` takes the item and
 * everything below it out of the remote tree and remembers its id as trashed.
 */
export type TreeEffect =
  | { readonly tree: 'remote'; readonly edit: 'put'; readonly entry: RemoteEntry }
  | { readonly tree: 'remote'; readonly edit: 'trash'; readonly id: RemoteId }
  | { readonly tree: 'local' | 'synced'; readonly edit: 'delete'; readonly path: RelPath }
  | { readonly tree: 'local' | 'synced'; readonly edit: 'move'; readonly from: RelPath; readonly to: RelPath }
  | { readonly tree: 'local'; readonly edit: 'put'; readonly entry: LocalEntry }
  | { readonly tree: 'synced'; readonly edit: 'put'; readonly entry: SyncedEntry };

/** The base row recording that both sides agree on an item at `path`. */
export function baseFrom(path: RelPath, r: RemoteEntry, l: LocalEntry | undefined): SyncedEntry {
  return {
    path,
    remoteId: r.id,
    kind: r.kind,
    etag: r.etag,
    sha1: r.kind === 'file' ? r.sha1 : null,
    versionId: r.versionId,
    sizeBytes: r.kind === 'file' ? r.sizeBytes : r.kind === 'weblink' ? (l?.sizeBytes ?? 0) : 0,
    inode: l?.inode ?? 0,
    mtimeMs: l?.mtimeMs ?? 0,
    url: r.url,
  };
}

/** True while Box holds the content the base agreed on (an unknown SHA-1 never counts as the same). */
function sameContent(s: SyncedEntry, r: RemoteEntry): boolean {
  switch (r.kind) {
    case 'file':
      return r.sha1 !== null && r.sha1 === s.sha1;
    case 'weblink':
      return r.url === s.url;
    case 'folder':
      return true;
    default:
      return assertNever(r.kind);
  }
}

/** A base row after its item moved (or came back from the trash): at `path`, with Box's etag when content agrees. */
export function rebaseOnMove(s: SyncedEntry, path: RelPath, r: RemoteEntry | undefined): SyncedEntry {
  const fresh = r !== undefined && r.kind === s.kind && sameContent(s, r) ? { etag: r.etag, versionId: r.versionId } : {};
  return { ...s, path, ...fresh };
}

/** A rename does not change content: keep the SHA-1 the moved row already had rather than hashing again. */
function keepHash(moved: LocalEntry, before: LocalEntry | undefined): LocalEntry {
  if (moved.sha1 !== null || moved.kind !== 'file') return moved;
  return before && before.sizeBytes === moved.sizeBytes && before.mtimeMs === moved.mtimeMs ? { ...moved, sha1: before.sha1 } : moved;
}

function missing(what: string, path: RelPath): SyncError {
  return new SyncError({ code: 'journal_row_missing', disposition: 'replan', message: `${what} for ${path} is no longer known; will look again` });
}

function required<T>(value: T | undefined, what: string, path: RelPath): T {
  if (value === undefined) throw missing(what, path);
  return value;
}

/** Move the item's base rows to `to` when they are somewhere else. */
function follow(before: TreesBefore, id: RemoteId, to: RelPath): TreeEffect[] {
  const s = before.syncedOf(id);
  return s && s.path !== to ? [{ tree: 'synced', edit: 'move', from: s.path, to }] : [];
}

/** Record the base of an item both sides now agree on at `path`. */
function record(before: TreesBefore, path: RelPath, base: SyncedEntry): TreeEffect[] {
  return [...follow(before, base.remoteId, path), { tree: 'synced', edit: 'put', entry: base }];
}

/** After a move: the item's base rows go to `to`, refreshed by `rebaseOnMove`; nothing when it has no row. */
function relocate(before: TreesBefore, id: RemoteId, to: RelPath, r: RemoteEntry | undefined): TreeEffect[] {
  const s = before.syncedOf(id);
  return s ? [...follow(before, id, to), { tree: 'synced', edit: 'put', entry: rebaseOnMove(s, to, r) }] : [];
}

function localPut(entry: LocalEntry | undefined): TreeEffect[] {
  return entry ? [{ tree: 'local', edit: 'put', entry }] : [];
}

/** The local side moved from `from` to `to`; the stat taken after the move replaces the moved row. */
function localMoved(before: TreesBefore, from: RelPath, to: RelPath, stat: LocalEntry | undefined): TreeEffect[] {
  const moved: TreeEffect[] = from === to ? [] : [{ tree: 'local', edit: 'move', from, to }];
  return [...moved, ...localPut(stat && keepHash(stat, before.local(from)))];
}

/**
 * The edits that record one successful outcome, in order. Throws a `replan` SyncError when the outcome or the
 * trees lack an entry the rule needs (the next plan, made from fresh observations, decides again).
 */
export function effectsOf(op: Operation, outcome: OutcomeEntries, before: TreesBefore): TreeEffect[] {
  switch (op.kind) {
    case 'download': {
      const l = required(outcome.local, 'the downloaded file', op.path);
      const base: SyncedEntry = {
        path: op.path,
        remoteId: op.remoteId,
        kind: 'file',
        etag: op.expect.etag,
        sha1: l.sha1 ?? op.expect.sha1,
        versionId: op.expect.versionId,
        sizeBytes: l.sizeBytes,
        inode: l.inode,
        mtimeMs: l.mtimeMs,
        url: null,
      };
      return [...localPut(l), ...record(before, op.path, base)];
    }
    case 'upload':
    case 'upload-version':
    case 'create-remote-folder': {
      const r = required(outcome.remote, 'the Box answer', op.path);
      const l = outcome.local ?? before.local(op.path);
      return [{ tree: 'remote', edit: 'put', entry: r }, ...localPut(outcome.local), ...record(before, op.path, baseFrom(op.path, r, l))];
    }
    case 'create-local-folder': {
      const r = required(before.remote(op.remoteId), 'the Box folder', op.path);
      return [...localPut(outcome.local), ...record(before, op.path, baseFrom(op.path, r, outcome.local))];
    }
    case 'remote-move': {
      const r = required(outcome.remote, 'the Box answer', op.to);
      return [{ tree: 'remote', edit: 'put', entry: r }, ...relocate(before, op.remoteId, op.to, r)];
    }
    case 'local-move':
      return [...localMoved(before, op.from, op.to, outcome.local), ...relocate(before, op.remoteId, op.to, before.remote(op.remoteId))];
    case 'remote-trash':
      return [
        { tree: 'remote', edit: 'trash', id: op.remoteId },
        { tree: 'synced', edit: 'delete', path: op.path },
      ];
    case 'local-trash':
      return [
        { tree: 'local', edit: 'delete', path: op.path },
        { tree: 'synced', edit: 'delete', path: op.path },
      ];
    case 'remote-restore': {
      const r = required(outcome.remote, 'the Box answer', op.path);
      const s = before.syncedOf(r.id);
      const refreshed: TreeEffect[] = s && s.path === op.path ? [{ tree: 'synced', edit: 'put', entry: rebaseOnMove(s, s.path, r) }] : [];
      return [{ tree: 'remote', edit: 'put', entry: r }, ...refreshed];
    }
    case 'conflict-copy':
      return [...localMoved(before, op.path, op.to, outcome.local), { tree: 'synced', edit: 'delete', path: op.path }];
    case 'link': {
      const r = required(before.remote(op.remoteId), 'the Box item', op.path);
      const l = required(before.local(op.path), 'the local entry', op.path);
      return record(before, op.path, baseFrom(op.path, r, l));
    }
    case 'forget':
      return [{ tree: 'synced', edit: 'delete', path: op.path }];
    case 'write-weblink': {
      const r = required(before.remote(op.remoteId), 'the Box web link', op.path);
      // The link file holds op.url: that is what both sides agree on, even if Box changed the URL meanwhile.
      const base: SyncedEntry = { ...baseFrom(op.path, { ...r, kind: 'weblink' }, outcome.local), url: op.url };
      return [...localPut(outcome.local), ...record(before, op.path, base)];
    }
    case 'report':
      return [];
    default:
      return assertNever(op);
  }
}
