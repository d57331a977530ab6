/**
 * The dry run's executor (`sync --once --dry-run`, dry-run.ts): the real planner and reconciler run unchanged,
 * and where the executor would act, this records the operation and answers what its success would have produced,
 * without touching the disk or Box. The reconciler commits that answer to the journal (a throw-away copy) as it
 * commits a real outcome, so the next pass, the follow-ups of a new folder, the windows, the held deletes and the
 * guards see what they would see in the real run.
 *
 * The answer comes from core/apply.ts `simulate` (the executable model of a successful operation), run over the
 * few journal rows the operation reads: its Box item, the Box folder it creates in, its local paths, its merge-base
 * row. Fresh Box ids, etags and inodes are made up here (negative inodes: never a real file's).
 */
import { simulate, type Allocator, type World } from '../core/apply.js';
import { SyncError } from '../core/errors.js';
import { asRemoteId, type RelPath, type RemoteEntry, type RemoteId, type RootId, type SyncedEntry, type LocalEntry } from '../core/model.js';
import type { Operation } from '../core/operations.js';
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
      const remote = hashed && entries.remote?.kind === 'file' && entries.remote.sha1 === null ? { ...entries.remote, sha1: hashed.sha1 } : entries.remote;
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
