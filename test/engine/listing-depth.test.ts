/**
 * Issue 26, point 11: a listing never goes deeper than a Linux path can hold (core/path-limits.ts). A tree with no
 * bottom (every folder lists one more folder, named `d`) under a root at `/m` is listed down to the last folder
 * whose absolute path fits in 4,031 bytes (2,014 levels: 2 + 2 * 2,014 = 4,030); the next one is parked with its
 * Box id and the reason, and never listed. The parent walks that place it (2,048 levels) reach that deep.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { asRemoteId, asRootId, type RemoteEntry, type SyncRoot } from '../../src/core/model.js';
import { MAX_LOCAL_PATH_BYTES } from '../../src/core/path-limits.js';
import { listSubtree } from '../../src/engine/observe-remote.js';
import { REJECTED_CODE } from '../../src/engine/remote-listing.js';
import { silentLogger } from '../../src/logger.js';
import type { RemoteId } from '../../src/core/model.js';
import type { ListingPage } from '../../src/ports/remote-store.js';
import { FakeRemoteStore } from '../support/fake-remote-store.js';

/** Below its seeded top folder, every folder lists one new child folder `d` (id + 1), forever. */
class Bottomless extends FakeRemoteStore {
  listings = 0;
  constructor(private readonly topId: RemoteId) {
    super({ pageSize: 10 });
  }

  override async *listFolder(id: RemoteId): AsyncIterable<ListingPage> {
    this.listings += 1;
    const base = id === this.topId ? 1_000_000 : Number(id) + 1;
    const child: RemoteEntry = { id: asRemoteId(String(base)), kind: 'folder', parentId: id, name: 'd', etag: '0', sequenceId: '0', sha1: null, sizeBytes: 0, modifiedAtMs: 0, versionId: null, url: null, status: 'active' };
    yield { entries: [child], rejected: [] };
  }
}
import { tempJournal } from './support/journal.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

describe('listSubtree: the depth a Linux path can hold', () => {
  it('lists a deep chain down to the path bound, parks the folder beyond it, and lists nothing deeper', async () => {
    const j = await tempJournal();
    cleanups.push(j.cleanup);
    const top = new FakeRemoteStore({ pageSize: 10 }).seedFolder(asRemoteId('0'), 'Sync');
    const store = new Bottomless(top.id);
    const chain = Array.from({ length: 2100 }, (_, i) => ({ id: asRemoteId(String(1_000_000 + i)) }));
    const root: SyncRoot = { id: asRootId('r'), remoteId: top.id, localPath: '/m', direction: 'two-way', exclude: [] };
    j.journal.putRemote({ ...top, parentId: null });
    const r = await listSubtree({ journal: j.journal, remote: store, logger: silentLogger, roots: [root], nowMs: () => 0 }, top.id);
    const levels = Math.floor((MAX_LOCAL_PATH_BYTES - 2) / 2);
    expect(levels).toBe(2014);
    // Every folder that fits is in the journal; the next one is not, and nothing below it was listed.
    expect(j.journal.getRemote(chain[levels - 1]!.id)).toBeDefined();
    expect(j.journal.getRemote(chain[levels]!.id)).toBeUndefined();
    expect(store.listings).toBe(levels + 1);
    expect(r.problems.rejected.map((x) => x.id)).toEqual([chain[levels]!.id]);
    // Parked under its parent's path (found by a parent walk 2,014 levels long), with its Box id and the reason.
    const parked = j.journal.failures(root.id);
    expect(parked).toHaveLength(1);
    expect(parked[0]!.code).toBe(REJECTED_CODE);
    expect(parked[0]!.path.split('/')).toHaveLength(levels + 1);
    expect(parked[0]!.message).toContain(`Box id ${chain[levels]!.id}`);
    expect(parked[0]!.message).toMatch(/would take 4032 bytes, more than the 4031/);
  });
});
