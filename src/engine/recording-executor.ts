/**
 * The dry run's executor (`sync --once --dry-run`, dry-run.ts): the real planner and reconciler run unchanged,
 * and where the executor would act, this records the operation and answers what its success would have produced,
 * without touching the disk or Box. The reconciler commits that answer to the journal (a throw-away copy) as it
 * commits a real outcome, so the next pass, the follow-ups of a new folder, the windows, the held deletes and the
 * guards see what they would see in the real run.
 *
 * The answer comes from core/apply.ts `simulate` (the executable model of a successful operation), run over the
 * few journal rows the operation reads: its Box item, the Box folder it creates in, its local paths, its merge-base
 * row (an item in the Box trash, which the journal no longer lists, by its merge-base row; a restored folder
 * comes back with what the merge base knew below it, as the real executor lists it back into the journal).
 * Fresh Box ids, etags and inodes are made up here (negative inodes: never a real file's).
 */
import { simulate, type Allocator, type World } from '../core/apply.js';
import { SyncError } from '../core/errors.js';
import { asRemoteId, type RelPath, type RemoteEntry, type RemoteId, type RootId, type SyncedEntry, type LocalEntry } from '../core/model.js';
import type { Operation } from '../core/operations.js';
import { basename, parentOf } from '../core/paths.js';
import type { Journal } from '../ports/journal.js';
import type { ExecContext, Executor, Outcome } from './executor.js';

/** One operation the reconciler handed to the executor, in the order it did. */
export interface RecordedOperation {
  readonly root: RootId;
  /** The run's pass of its plan (follow-ups share their folder's pass). */
  readonly pass: number;
  readonly op: Operation;
  /** Set when the journal's rows did not allow the operation to succeed (the rest of the plan is the real run's to see). */
  readonly unpredictable?: string;
}

export class RecordingExecutor implements Executor {
  readonly recordsOnly = true;
  readonly records: RecordedOperation[] = [];
  private n = 0;
  private readonly alloc: Allocator;

  constructor(nowMs: () => number) {
    this.alloc = {
      remoteId: () => asRemoteId(`dry-run-${++this.n}`),
      etag: () => `dry-run-${++this.n}`,
      inode: () => -++this.n,
      weblinkSha1: (url) => `dry-run-link:${url}`,
      nowMs,
    };
  }

  async execute(op: Operation, ctx: ExecContext): Promise<Outcome> {
    try {
      const entries = simulate(worldAround(ctx.journal, ctx.root.id, op), op, this.alloc);
      // The scan hashes what changed; a file it kept unhashed gets the hash the upload would compute (a read).
      const local = entries.local;
      const hashed = local?.kind === 'file' && local.sha1 === null && (op.kind === 'upload' || op.kind === 'upload-version') ? { ...local, sha1: await ctx.fs.hash(op.path) } : local;
      const answer = hashed && entries.remote?.kind === 'file' && entries.remote.sha1 === null ? { ...entries.remote, sha1: hashed.sha1 } : entries.remote;
      // Box keeps whole seconds (a local mtime has a fraction).
      const remote = answer && { ...answer, modifiedAtMs: Math.floor(answer.modifiedAtMs / 1000) * 1000 };
      // The real executor lists a restored Box folder into the journal: it comes back as the merge base knew it.
      if (op.kind === 'remote-restore' && op.itemKind === 'folder') restoreBelow(ctx.journal, ctx.root.id, op.remoteId);
      this.records.push({ root: ctx.root.id, pass: ctx.pass ?? 0, op });
      return { status: 'done', result: { ...(remote ? { remote } : {}), ...(hashed ? { local: hashed } : {}), bytes: 0 } };
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      this.records.push({ root: ctx.root.id, pass: ctx.pass ?? 0, op, unpredictable: why });
      // Parked in the journal copy only: the dry run plans around it, as the real run plans around a failure.
      return { status: 'failed', error: new SyncError({ code: 'dry_run_unpredictable', disposition: 'skip', message: `dry run: ${why}` }) };
    }
  }
}

/** The journal rows `simulate` reads for this operation, as a small world (it changes only this copy). */
function worldAround(journal: Journal, root: RootId, op: Operation): World {
  const remote = new Map<RemoteId, RemoteEntry>();
  const local = new Map<RelPath, LocalEntry>();
  const synced = new Map<RelPath, SyncedEntry>();
  const addRemote = (id: RemoteId): void => {
    const r = journal.getRemote(id);
    if (r) remote.set(r.id, r);
    const s = journal.syncedByRemoteId(root, id);
    if (s) synced.set(s.path, s);
  };
  const addLocal = (path: RelPath): void => {
    const l = journal.getLocal(root, path);
    if (l) local.set(l.path, l);
  };
  if ('remoteId' in op) addRemote(op.remoteId);
  // The journal keeps only Box's live tree: an item in the Box trash is known by its merge-base row.
  if (op.kind === 'remote-restore' && !remote.has(op.remoteId)) {
    const s = journal.syncedByRemoteId(root, op.remoteId);
    if (s && journal.isTrashed(op.remoteId)) remote.set(s.remoteId, { ...fromBase(s, op.parentId), status: 'trashed' });
  }
  // A new Box item must not take a name its folder already has.
  if (op.kind === 'upload' || op.kind === 'create-remote-folder') for (const c of journal.remoteChildren(op.parentId)) remote.set(c.id, c);
  if ('path' in op) addLocal(op.path);
  if (op.kind === 'local-move' || op.kind === 'remote-move') {
    addLocal(op.from);
    addLocal(op.to);
  }
  if (op.kind === 'conflict-copy') addLocal(op.to);
  return { remote, local, synced, remoteTrashed: new Set(), localTrash: [], remoteVersions: new Map() };
}

/** A Box item as the merge base knew it, in the folder `parentId`. */
function fromBase(s: SyncedEntry, parentId: RemoteId): RemoteEntry {
  const name = basename(s.path);
  return {
    id: s.remoteId,
    kind: s.kind,
    parentId,
    name: s.kind === 'weblink' && name.endsWith('.url') ? name.slice(0, -'.url'.length) : name,
    etag: s.etag,
    sequenceId: '0',
    sha1: s.sha1,
    sizeBytes: s.sizeBytes,
    modifiedAtMs: Math.floor(s.mtimeMs / 1000) * 1000,
    versionId: s.versionId,
    url: s.url,
    status: 'active',
  };
}

/** The items below a restored Box folder, as its merge base knew them, back in the journal's live tree. */
function restoreBelow(journal: Journal, root: RootId, folderId: RemoteId): void {
  const top = journal.syncedByRemoteId(root, folderId);
  if (!top) return;
  const below = [...journal.syncedUnder(root, top.path)].filter((s) => s.path !== top.path && journal.getRemote(s.remoteId) === undefined);
  journal.transaction(() => {
    for (const s of below) {
      const parent = journal.getSynced(root, parentOf(s.path) as RelPath);
      if (!parent) continue;
      journal.putRemote(fromBase(s, parent.remoteId));
      journal.markTrashed(s.remoteId, false);
    }
  });
}
