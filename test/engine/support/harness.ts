/**
 * An engine wired to real parts for integration tests: a real SQLite journal in a temp dir, the real LocalFs
 * on a real temp folder (trash in the state dir), and the in-memory FakeRemoteStore with the FakeChanges event
 * stream (the Box adapter against box-server is exercised by the CLI end-to-end tests).
 */
import { createEngine } from '../../../src/engine/index.js';
import type { Engine, EngineEvents, EngineOptions, RunSummary, StatusReport } from '../../../src/engine/types.js';
import { asRemoteId, asRootId, type RemoteEntry, type SyncRoot } from '../../../src/core/model.js';
import { openJournal } from '../../../src/journal/index.js';
import { silentLogger } from '../../../src/logger.js';
import { systemClock } from '../../../src/ports/clock.js';
import type { Journal } from '../../../src/ports/journal.js';
import type { LocalFs } from '../../../src/ports/local-fs.js';
import { FakeRemoteStore } from '../../support/fake-remote-store.js';
import { engineTestOptions, ignoreFor, makeEngineWorkspace, mirrorFiles } from './engine-workspace.js';
import { FakeChanges } from './fake-changes.js';

export type OpLine = Parameters<NonNullable<EngineEvents['onOperation']>>[0];

export interface Harness {
  readonly dir: string;
  readonly localPath: string;
  readonly stateDir: string;
  readonly journalPath: string;
  journal: Journal;
  readonly store: FakeRemoteStore;
  readonly changes: FakeChanges;
  readonly top: RemoteEntry;
  readonly root: SyncRoot;
  readonly localFs: LocalFs;
  engine: Engine;
  readonly opLines: OpLine[];
  /** Every status the engine pushed through onStatus. */
  readonly statuses: StatusReport[];
  run(opts?: { fullRescan?: boolean }): Promise<RunSummary>;
  /** Re-open the journal and build a new engine (a new process, as `sync --once` would be). */
  restart(): Promise<{ rebuilt: boolean }>;
  write(rel: string, content: string | Buffer): Promise<void>;
  read(rel: string): Promise<string>;
  exists(rel: string): Promise<boolean>;
  list(rel?: string): Promise<string[]>;
  remove(rel: string): Promise<void>;
  /** Store calls of a method since the mark (or since the start). */
  callsOf(method: string, since?: number): number;
  mark(): number;
  close(): Promise<void>;
}

export async function makeHarness(overrides: Partial<EngineOptions> = {}, rootExtra: Partial<SyncRoot> = {}, onOperation?: (o: OpLine, journal: Journal) => void): Promise<Harness> {
  const ws = await makeEngineWorkspace('boxsync-engine-');
  const { localPath, stateDir, journalPath, localFs } = ws;
  const store = new FakeRemoteStore({ pageSize: 50 });
  const top = store.seedFolder(asRemoteId('0'), 'Sync');
  const root: SyncRoot = { id: asRootId('r1'), remoteId: top.id, localPath, direction: 'two-way', exclude: [], ...rootExtra };
  const changes = new FakeChanges(store);
  const options = engineTestOptions(stateDir, overrides);
  const opLines: OpLine[] = [];
  const statuses: StatusReport[] = [];
  const build = (journal: Journal): Engine =>
    createEngine(
      { journal, remote: store, changes, roots: [root], localFsFor: () => localFs, isIgnoredFor: ignoreFor, logger: silentLogger, clock: systemClock, options },
      {
        onOperation: (o) => {
          opLines.push(o);
          onOperation?.(o, journal);
        },
        onStatus: (st) => statuses.push(st),
      },
    );
  const journal = openJournal(journalPath).journal;
  const h: Harness = {
    ...mirrorFiles(localPath),
    dir: ws.dir,
    localPath,
    stateDir,
    journalPath,
    journal,
    store,
    changes,
    top,
    root,
    localFs,
    engine: build(journal),
    opLines,
    statuses,
    run: (opts) => h.engine.runOnce(opts ?? {}),
    async restart() {
      await h.engine.close();
      h.journal.close();
      const opened = openJournal(journalPath);
      h.journal = opened.journal;
      h.engine = build(opened.journal);
      return { rebuilt: opened.rebuilt };
    },
    mark: () => store.calls.length,
    callsOf: (method, since = 0) => store.calls.slice(since).filter((c) => c.method === method).length,
    async close() {
      await h.engine.close();
      h.journal.close();
      await ws.cleanup();
    },
  };
  return h;
}

/** Fail loudly with the summary when a run did not converge. */
export function expectConverged(s: RunSummary): RunSummary {
  if (s.outcome !== 'converged') throw new Error(`run did not converge: ${s.message}`);
  return s;
}
