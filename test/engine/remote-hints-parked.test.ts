/**
 * A changed item gets a fresh chance (engine/remote-hints.ts clearParkedFailures): an incremental pass over a real
 * SQLite journal clears, for each hinted item, the failures Box's refusal of it recorded (by its Box id, in our roots)
 * and the parks ('skip') at its path, and nothing else: the parks of items that did not change, the backoff
 * ('retry') of a hinted item's path, another root's rows. The failures that can be cleared are read in one query.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { asRelPath, asRemoteId, asRootId, type RelPath, type RemoteId, type RootId, type SyncRoot } from '../../src/core/model.js';
import { silentLogger } from '../../src/logger.js';
import { observeRemote, type RemoteObserverDeps } from '../../src/engine/observe-remote.js';
import { REJECTED_CODE } from '../../src/engine/remote-listing.js';
import type { FailureRecord } from '../../src/ports/journal.js';
import { FakeRemoteStore } from '../support/fake-remote-store.js';
import { FakeChanges } from './support/fake-changes.js';
import { tempJournal } from './support/journal.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

const failure = (root: RootId, path: string, code: string, disposition: FailureRecord['disposition'], remoteId: RemoteId | null = null): FailureRecord => ({
  root,
  path: asRelPath(path),
  code,
  message: `${code} at ${path}`,
  attempts: 1,
  nextRetryAtMs: 0,
  disposition,
  remoteId,
});

describe('clearParkedFailures (an incremental pass)', () => {
  it("clears a hinted item's refusals and the parks at its path, and leaves every other row", async () => {
    const j = await tempJournal();
    cleanups.push(j.cleanup);
    const store = new FakeRemoteStore({ pageSize: 50 });
    const top = store.seedFolder(asRemoteId('0'), 'Sync');
    const root: SyncRoot = { id: asRootId('r1'), remoteId: top.id, localPath: '/nonexistent', direction: 'two-way', exclude: [] };
    const other = asRootId('r2');
    const deps: RemoteObserverDeps = { journal: j.journal, remote: store, changes: new FakeChanges(store), roots: [root], streamType: 'changes', logger: silentLogger };
    const docs = store.seedFolder(top.id, 'docs');
    const a = store.seedFile(top.id, 'a.txt', 'a');
    const b = store.seedFile(top.id, 'b.txt', 'b');
    const c = store.seedFile(docs.id, 'c.txt', 'c');
    await observeRemote(deps, { full: false, extraIds: [] });

    const cleared = [
      failure(root.id, 'a.txt', 'name_refused', 'skip'),
      failure(root.id, 'old place of a.txt', REJECTED_CODE, 'skip', a.id),
      failure(root.id, 'a listing of a.txt', REJECTED_CODE, 'retry', a.id),
    ];
    const kept = [
      failure(root.id, 'b.txt', 'name_refused', 'skip'),
      failure(root.id, 'old place of b.txt', REJECTED_CODE, 'skip', b.id),
      failure(root.id, 'docs/c.txt', 'network', 'retry'),
      failure(other, 'a.txt', REJECTED_CODE, 'skip', a.id),
    ];
    for (const f of [...cleared, ...kept]) j.journal.recordFailure(f);

    store.editRemotely(a.id, 'a2');
    store.editRemotely(c.id, 'c2');
    const obs = await observeRemote(deps, { full: false, extraIds: [] });
    expect(obs.full).toBe(false);
    expect(j.journal.getRemote(a.id)?.sha1).toBe(store.allEntries().find((e) => e.id === a.id)?.sha1);

    const left = (rows: readonly FailureRecord[]): [RootId, RelPath][] => rows.map((f) => [f.root, f.path]);
    expect(left(j.journal.failures())).toEqual(left(kept).sort((x, y) => (x[0] + x[1] < y[0] + y[1] ? -1 : 1)));
  });
});
