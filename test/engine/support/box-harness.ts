/**
 * An engine wired to the real Box adapter talking HTTP to box-server on port 0, with a real journal and the
 * real LocalFs on a temp dir. `actor` changes Box "from elsewhere" (another client of the same account);
 * `srv.control.requests()` tells which HTTP calls the engine made.
 */
import { startBoxServer, type BoxServer, type ServerActor } from '../../../src/box-server/index.js';
import { asRemoteId, asRootId, type SyncRoot } from '../../../src/core/model.js';
import { createEngine } from '../../../src/engine/index.js';
import type { Engine, EngineEvents, EngineOptions, RunSummary } from '../../../src/engine/types.js';
import { openJournal } from '../../../src/journal/index.js';
import type { FileWorkerPool } from '../../../src/local/file-workers.js';
import { silentLogger } from '../../../src/logger.js';
import { systemClock } from '../../../src/ports/clock.js';
import type { Journal } from '../../../src/ports/journal.js';
import type { LocalFs } from '../../../src/ports/local-fs.js';
import { createBoxAdapter, type BoxAdapter } from '../../../src/remote/box/index.js';
import type { BoxAdapterOptions } from '../../../src/remote/box/options.js';
import { engineTestOptions, makeEngineWorkspace, mirrorFiles, ignoreFor } from './engine-workspace.js';

const TOKEN = 'T1';

export interface BoxHarness {
  readonly srv: BoxServer;
  readonly actor: ServerActor;
  readonly adapter: BoxAdapter;
  readonly topId: string;
  readonly root: SyncRoot;
  readonly localPath: string;
  journal: Journal;
  engine: Engine;
  run(): Promise<RunSummary>;
  /** A new engine and journal connection on the same state, as a new `sync --once` process would have. */
  restart(): Promise<void>;
  write(rel: string, content: string | Buffer): Promise<void>;
  read(rel: string): Promise<string>;
  list(rel?: string): Promise<string[]>;
  /** Content transfers since the mark: downloads (GET …/content) and uploads (POST to the upload host). */
  transfers(sinceMs: number): { downloads: number; uploads: number; moves: number };
  close(): Promise<void>;
}

/**
 * A Box adapter on box-server: `token`, the journal's upload sessions, `perMinute` calls and uploads a minute (box-server
 * is local: Box's own per-user limits would only slow the tests down).
 */
export function boxServerAdapter(srv: BoxServer, token: string, journal: Journal, perMinute: number, extra: Partial<BoxAdapterOptions> = {}): BoxAdapter {
  return createBoxAdapter({
    apiUrl: srv.apiUrl,
    uploadUrl: srv.uploadUrl,
    tokenUrl: srv.tokenUrl,
    auth: { developerToken: token },
    uploadSessions: journal.uploadSessions,
    rateLimit: { callsPerMinute: perMinute, uploadsPerMinute: perMinute },
    logger: silentLogger,
    ...extra,
  });
}

/** An engine on that adapter for one root and its LocalFs, with the production ignore rules. */
export function engineOnBox(
  parts: { journal: Journal; adapter: BoxAdapter; root: SyncRoot; localFs: LocalFs; options: EngineOptions },
  events: EngineEvents = {},
): Engine {
  const { journal, adapter, root, localFs, options } = parts;
  return createEngine(
    { journal, remote: adapter.store, changes: adapter.changes, roots: [root], localFsFor: () => localFs, isIgnoredFor: ignoreFor, logger: silentLogger, clock: systemClock, options },
    events,
  );
}

export async function makeBoxHarness(
  overrides: Partial<EngineOptions> = {},
  adapterExtra: Partial<BoxAdapterOptions> = {},
  /** The LocalFs's file worker threads (none: the main thread writes and commits downloads). */
  fileWorkers?: FileWorkerPool,
): Promise<BoxHarness> {
  const ws = await makeEngineWorkspace('boxsync-engine-box-', fileWorkers ? { fileWorkers } : {});
  const { localPath, journalPath, localFs } = ws;
  const srv = await startBoxServer({ port: 0, tokens: [TOKEN], longPollTimeoutMs: 1000 });
  const actor = srv.control.as('1');
  const top = actor.createFolder('0', 'Sync');
  const root: SyncRoot = { id: asRootId('r1'), remoteId: asRemoteId(top.id), localPath, direction: 'two-way', exclude: [] };
  const options = engineTestOptions(ws.stateDir, overrides);
  const build = (journal: Journal): { engine: Engine; adapter: BoxAdapter } => {
    const adapter = boxServerAdapter(srv, TOKEN, journal, 60_000, adapterExtra);
    return { engine: engineOnBox({ journal, adapter, root, localFs, options }), adapter };
  };
  const journal = openJournal(journalPath).journal;
  const built = build(journal);
  const files = mirrorFiles(localPath);
  const h: BoxHarness = {
    srv,
    actor,
    adapter: built.adapter,
    topId: top.id,
    root,
    localPath,
    journal,
    engine: built.engine,
    run: () => h.engine.runOnce(),
    async restart() {
      await h.engine.close();
      h.journal.close();
      h.journal = openJournal(journalPath).journal;
      h.engine = build(h.journal).engine;
    },
    write: files.write,
    read: files.read,
    list: files.list,
    transfers(sinceMs) {
      const reqs = srv.control.requests().filter((r) => r.atMs >= sinceMs);
      return {
        downloads: reqs.filter((r) => r.method === 'GET' && /\/files\/[^/]+\/content$/.test(r.path)).length,
        uploads: reqs.filter((r) => r.method === 'POST' && (/\/files\/content$/.test(r.path) || /\/files\/[^/]+\/content$/.test(r.path) || /upload_sessions/.test(r.path))).length,
        moves: reqs.filter((r) => r.method === 'PUT' && /\/(files|folders)\/[^/]+$/.test(r.path)).length,
      };
    },
    async close() {
      await h.engine.close();
      h.journal.close();
      await srv.close();
      await ws.cleanup();
    },
  };
  return h;
}
