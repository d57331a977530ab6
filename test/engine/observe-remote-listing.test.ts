/** The full listing lists folders below the top several at a time: same rows as one at a time, errors still surface. */
import { afterEach, describe, expect, it } from 'vitest';
import { asRemoteId, type RemoteEntry, type RemoteId } from '../../src/core/model.js';
import { LIST_CONCURRENCY, listSubtree } from '../../src/engine/observe-remote.js';
import { silentLogger } from '../../src/logger.js';
import { remoteError } from '../../src/remote/box/error-codes.js';
import type { Journal } from '../../src/ports/journal.js';
import type { ListingPage } from '../../src/ports/remote-store.js';
import { FakeRemoteStore } from '../support/fake-remote-store.js';
import { tempJournal } from './support/journal.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

/** A fake store that counts listings in flight, waits a tick inside each page, and can fail one folder. */
class SlowStore extends FakeRemoteStore {
  inFlight = 0;
  maxInFlight = 0;
  failing: RemoteId | null = null;
  failWith: Error | null = null;

  override async *listFolder(id: RemoteId): AsyncIterable<ListingPage> {
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      if (id === this.failing) throw this.failWith ?? new Error(`listing ${id} failed`);
      for await (const page of super.listFolder(id)) {
        await new Promise((resolve) => setImmediate(resolve));
        yield page;
      }
    } finally {
      this.inFlight -= 1;
    }
  }
}

async function setup(): Promise<{ journal: Journal; store: SlowStore; top: RemoteEntry; expected: string[] }> {
  const j = await tempJournal();
  cleanups.push(j.cleanup);
  const store = new SlowStore({ pageSize: 3 });
  const top = store.seedFolder(asRemoteId('0'), 'Sync');
  const expected: string[] = [];
  for (let a = 0; a < 6; a++) {
    const fa = store.seedFolder(top.id, `a${a}`);
    expected.push(fa.id);
    for (let b = 0; b < 3; b++) {
      const fb = store.seedFolder(fa.id, `b${b}`);
      expected.push(fb.id);
      for (let f = 0; f < 4; f++) expected.push(store.seedFile(fb.id, `f${f}.txt`, `${a}/${b}/${f}`).id);
    }
  }
  return { journal: j.journal, store, top, expected: expected.sort() };
}

function idsBelow(journal: Journal, id: RemoteId): string[] {
  const out: string[] = [];
  for (const c of journal.remoteChildren(id)) {
    out.push(c.id);
    if (c.kind === 'folder') out.push(...idsBelow(journal, c.id));
  }
  return out.sort();
}

describe('listSubtree', () => {
  it('lists every folder of a tree, several at a time but never more than LIST_CONCURRENCY', async () => {
    const { journal, store, top, expected } = await setup();
    const r = await listSubtree({ journal, remote: store, logger: silentLogger }, top.id);
    expect(r.refused).toBe(false);
    expect(r.problems).toEqual({ rejected: [], incomplete: [] });
    expect(idsBelow(journal, top.id)).toEqual(expected);
    expect(store.maxInFlight).toBeGreaterThan(1);
    expect(store.maxInFlight).toBeLessThanOrEqual(LIST_CONCURRENCY);
  });

  it('a relisting drops what Box no longer has, at any depth', async () => {
    const { journal, store, top } = await setup();
    const deps = { journal, remote: store, logger: silentLogger };
    await listSubtree(deps, top.id);
    const a2 = journal.remoteChildren(top.id).find((c) => c.name === 'a2')!;
    const b1 = journal.remoteChildren(journal.remoteChildren(top.id).find((c) => c.name === 'a4')!.id).find((c) => c.name === 'b1')!;
    await store.trash(a2.id, 'folder');
    await store.trash(b1.id, 'folder');
    await listSubtree(deps, top.id);
    expect(journal.getRemote(a2.id)).toBeUndefined();
    expect(journal.getRemote(b1.id)).toBeUndefined();
    expect(journal.remoteChildren(a2.id)).toEqual([]);
    expect(idsBelow(journal, top.id)).toHaveLength(6 * 3 * 5 + 6 - (3 * 5 + 1) - 5);
  });

  it('a subfolder whose listing fails with a SyncError keeps its rows, is reported, and the walk goes on', async () => {
    const { journal, store, top } = await setup();
    const deps = { journal, remote: store, logger: silentLogger };
    await listSubtree(deps, top.id);
    const a1 = journal.remoteChildren(top.id).find((c) => c.name === 'a1')!;
    const a5 = journal.remoteChildren(top.id).find((c) => c.name === 'a5')!;
    const keptBelowA1 = idsBelow(journal, a1.id);
    // a5 gains a file, a1 loses a folder on Box, but a1 cannot be listed this time.
    const added = store.seedFile(journal.remoteChildren(a5.id)[0]!.id, 'new.txt', 'x');
    await store.trash(journal.remoteChildren(a1.id)[0]!.id, 'folder');
    store.failing = a1.id;
    store.failWith = remoteError('listing_incomplete', 'test: a1 listed in part');
    const r = await listSubtree(deps, top.id);
    expect(r.problems.incomplete.map((p) => p.folderId)).toEqual([a1.id]);
    expect(idsBelow(journal, a1.id)).toEqual(keptBelowA1);
    expect(journal.getRemote(added.id)?.name).toBe('new.txt');
  });

  it('a failing subfolder fails the listing once the listings in flight have ended', async () => {
    const { journal, store, top } = await setup();
    const a3 = store.seedFolder(top.id, 'a3-extra');
    store.failing = a3.id;
    await expect(listSubtree({ journal, remote: store, logger: silentLogger }, top.id)).rejects.toThrow(`listing ${a3.id} failed`);
    expect(store.inFlight).toBe(0);
  });

  it('refuses a top folder that lists empty while the journal knows children, and changes nothing', async () => {
    const { journal, store, top } = await setup();
    const deps = { journal, remote: store, logger: silentLogger };
    await listSubtree(deps, top.id);
    const before = idsBelow(journal, top.id);
    for (const c of journal.remoteChildren(top.id)) await store.trash(c.id, 'folder');
    expect((await listSubtree(deps, top.id, undefined, { refuseEmpty: true })).refused).toBe(true);
    expect(idsBelow(journal, top.id)).toEqual(before);
  });

  it('a folder moved between two folders listed at the same time keeps its row and its subtree', async () => {
    const { journal, store, top } = await setup();
    const deps = { journal, remote: store, logger: silentLogger };
    const [a0, a1] = store.allEntries().filter((e) => e.parentId === top.id).sort((x, y) => x.name.localeCompare(y.name));
    // a0 takes many pages to list, a1 one: a1 is done while a0 is still paging.
    for (let f = 0; f < 12; f++) store.seedFile(a0!.id, `more${f}.txt`, `more ${f}`);
    await listSubtree(deps, top.id);
    const b1 = journal.remoteChildren(a0!.id).find((c) => c.name === 'b1')!;
    await store.move({ id: b1.id, kind: 'folder', parentId: a1!.id, name: 'b1-from-a0' });
    // a0's listing starts while the row still hangs below a0; a1's puts it below a1; a0's then no longer sees it.
    const r = await listSubtree(deps, top.id);
    expect(r.problems).toEqual({ rejected: [], incomplete: [] });
    expect(journal.getRemote(b1.id)?.parentId).toBe(a1!.id);
    expect(journal.remoteChildren(b1.id)).toHaveLength(4);
  });
});
