import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BoxServer } from '../../../src/box-server/index.js';
import { isSyncError } from '../../../src/core/errors.js';
import type { BoxAdapter } from '../../../src/remote/box/create-box-adapter.js';
import { waitFor } from '../../support/wait.js';
import { adapterFor, startServer } from './harness.js';

describe('Box adapter: event stream', () => {
  let server: BoxServer;
  let adapter: BoxAdapter;
  let n = 0;
  const actor = () => server.control.as('1');

  beforeAll(async () => {
    server = await startServer({ longPollTimeoutMs: 30_000 });
    adapter = adapterFor(server);
  });
  afterAll(async () => {
    await adapter.close();
    await server.close();
  });

  it('initialises with now and returns hints for later changes, positions as decimal strings', async () => {
    const pos = await adapter.changes.now('changes');
    expect(pos).toMatch(/^\d+$/);
    const folder = actor().createFolder('0', `ev-${++n}`);
    const file = actor().uploadFile(folder.id, 'a.txt', 'a');
    const batch = await adapter.changes.fetch('changes', pos);
    expect(batch.nextPosition).toMatch(/^\d+$/);
    expect(BigInt(batch.nextPosition) > BigInt(pos)).toBe(true);
    expect(batch.hints.map((h) => [h.id, h.kind])).toEqual(
      expect.arrayContaining([
        [folder.id, 'folder'],
        [file.id, 'file'],
      ]),
    );
    const up = batch.hints.find((h) => h.id === file.id)!;
    expect(up).toMatchObject({ parentId: folder.id, change: 'changed', syncStateSet: false, name: 'a.txt', etag: actor().getItem('file', file.id)!.etag });
    expect((await adapter.changes.fetch('changes', batch.nextPosition)).hints).toEqual([]);
  });

  it('pages through more than 500 events until caught up', async () => {
    const pos = await adapter.changes.now('changes');
    const parent = actor().createFolder('0', `many-${++n}`);
    for (let i = 0; i < 520; i++) actor().createFolder(parent.id, `f${i}`);
    server.control.clearRequests();
    const batch = await adapter.changes.fetch('changes', pos);
    expect(new Set(batch.hints.map((h) => h.id)).size).toBe(521);
    const gets = server.control.requests().filter((r) => r.method === 'GET' && r.path === '/2.0/events');
    expect(gets.length).toBeGreaterThanOrEqual(3);
    expect(gets.every((g) => new URLSearchParams(g.query).get('limit') === '500')).toBe(true);
  });

  it('maxPages: one page and no more, saying whether the stream goes on (the long poll\'s look at its news)', async () => {
    const pos = await adapter.changes.now('changes');
    const parent = actor().createFolder('0', `look-${++n}`);
    for (let i = 0; i < 520; i++) actor().createFolder(parent.id, `f${i}`);
    server.control.clearRequests();
    const first = await adapter.changes.fetch('changes', pos, { stopAtShortPage: true, maxPages: 1 });
    expect(first.more).toBe(true);
    expect(first.hints.length).toBe(500);
    expect(server.control.requests().filter((r) => r.method === 'GET' && r.path === '/2.0/events')).toHaveLength(1);
    const rest = await adapter.changes.fetch('changes', first.nextPosition, { stopAtShortPage: true, maxPages: 1 });
    expect(rest.more).toBeUndefined();
    expect(rest.hints.length).toBe(21);
  });

  it('drops duplicated and out-of-order events (by event_id and by sequence_id)', async () => {
    const fresh = adapterFor(server);
    const pos = await fresh.changes.now('changes');
    const parent = actor().createFolder('0', `chaos-${++n}`);
    const f = actor().uploadFile(parent.id, 'c.txt', 'c');
    for (let i = 0; i < 6; i++) actor().rename('file', f.id, `c${i}.txt`);
    server.control.setEventChaos({ duplicate: true, reorder: true });
    try {
      const batch = await fresh.changes.fetch('changes', pos);
      // Duplicates and stale repeats collapse into one hint per item, at its newest sequence id.
      const forFile = batch.hints.filter((h) => h.id === f.id);
      expect(forFile).toHaveLength(1);
      const latest = actor().getItem('file', f.id)!;
      expect(forFile[0]!.sequenceId).toBe(String(latest.sequence_id));
      // Reading the same range again yields the same hints: nothing is remembered across calls, so a pass that
      // failed or was killed after a fetch gets its changes again from the stored cursor.
      const again = await fresh.changes.fetch('changes', pos);
      expect(again.hints.filter((h) => h.id === f.id)).toEqual(forFile);
    } finally {
      server.control.setEventChaos({ duplicate: false, reorder: false });
    }
  });

  it('keeps no memory across calls: the same position gives the same hints to a second reader and a second call', async () => {
    const fresh = adapterFor(server);
    const pos = await fresh.changes.now('changes');
    const f = actor().uploadFile('0', `known-${++n}.txt`, 'k');
    const first = await fresh.changes.fetch('changes', pos);
    const second = await fresh.changes.fetch('changes', pos);
    expect(first.hints.filter((h) => h.id === f.id)).toHaveLength(1);
    expect(second).toEqual(first);
  });

  it('long poll wakes within 1 s of a remote change', async () => {
    const pos = await adapter.changes.now('changes');
    server.control.clearRequests();
    const waiting = adapter.changes.waitForChange('changes', pos);
    let wokeAtMs = 0;
    void waiting.then(() => (wokeAtMs = Date.now()));
    await waitFor(() => server.control.requests().some((r) => r.method === 'OPTIONS' && r.path === '/2.0/events'), { what: 'OPTIONS /events' });
    const changedAtMs = Date.now();
    actor().createFolder('0', `wake-${++n}`);
    expect(await waiting).toBe('changed');
    expect(wokeAtMs - changedAtMs).toBeLessThan(1000);
  });

  it('answers timeout on reconnect and fetches fresh options for the next poll', async () => {
    const quick = await startServer({ longPollTimeoutMs: 200 });
    try {
      const a = adapterFor(quick);
      const pos = await a.changes.now('changes');
      expect(await a.changes.waitForChange('changes', pos)).toBe('timeout');
      expect(await a.changes.waitForChange('changes', pos)).toBe('timeout');
      expect(quick.control.requests().filter((r) => r.method === 'OPTIONS')).toHaveLength(2);
    } finally {
      await quick.close();
    }
  });

  it('backs off after a failed poll, then gets fresh options and still sees the change', async () => {
    const fresh = adapterFor(server);
    const pos = await fresh.changes.now('changes');
    server.control.failNext({ method: 'GET', path: '/subscribe', status: 500 });
    server.control.clearRequests();
    actor().createFolder('0', `after-error-${++n}`);
    expect(await fresh.changes.waitForChange('changes', pos)).toBe('changed');
    const polls = server.control.requests().filter((r) => r.path === '/subscribe' || r.method === 'OPTIONS');
    expect(polls.map((r) => `${r.method} ${r.status}`)).toEqual(['OPTIONS 200', 'GET 500', 'OPTIONS 200', 'GET 200']);
    // 1 s nominal with equal jitter (core/retry.ts streamBackoff): never sooner than half of it.
    expect(polls[2]!.atMs - polls[1]!.atMs).toBeGreaterThanOrEqual(450);
  });

  it('backs off when asked again from the position it last answered changed for (that news held nothing new)', async () => {
    const a = adapterFor(server);
    try {
      const pos = await a.changes.now('changes');
      server.control.failNext({ method: 'GET', path: '/subscribe', count: 2, body: { message: 'new_change' } });
      server.control.clearRequests();
      expect(await a.changes.waitForChange('changes', pos)).toBe('changed');
      expect(await a.changes.waitForChange('changes', pos)).toBe('changed');
      const polls = server.control.requests().filter((r) => r.path === '/subscribe');
      expect(polls).toHaveLength(2);
      // 1 s nominal (core/retry.ts streamBackoff, no jitter for answers without news); timers may fire a hair early.
      expect(polls[1]!.atMs - polls[0]!.atMs).toBeGreaterThanOrEqual(950);
    } finally {
      await a.close();
    }
  });

  it('rejects when aborted', async () => {
    const pos = await adapter.changes.now('changes');
    const ctrl = new AbortController();
    const waiting = adapter.changes.waitForChange('changes', pos, ctrl.signal);
    await waitFor(() => server.control.requests().some((r) => r.method === 'OPTIONS'), { what: 'poll started' });
    ctrl.abort();
    await expect(waiting).rejects.toMatchObject({ code: 'aborted' });
  });

  it('close() ends a long poll in flight with aborted', async () => {
    const a = adapterFor(server);
    const pos = await a.changes.now('changes');
    server.control.clearRequests();
    const waiting = a.changes.waitForChange('changes', pos);
    await waitFor(() => server.control.requests().some((r) => r.method === 'OPTIONS'), { what: 'poll started' });
    await a.close();
    await expect(waiting).rejects.toMatchObject({ code: 'aborted' });
  });

  it('serves the sync stream for folders marked synced only', async () => {
    const synced = actor().createFolder('0', `synced-${++n}`);
    const other = actor().createFolder('0', `other-${++n}`);
    await adapter.store.setSyncState(synced.id as never, 'synced');
    const pos = await adapter.changes.now('sync');
    const inSynced = actor().uploadFile(synced.id, 'in.txt', 'in');
    const outside = actor().uploadFile(other.id, 'out.txt', 'out');
    const ids = (await adapter.changes.fetch('sync', pos)).hints.map((h) => h.id);
    expect(ids).toContain(inSynced.id);
    expect(ids).not.toContain(outside.id);
  });

  it('reports an unusable stream position as stream_position_invalid (replan)', async () => {
    try {
      await adapter.changes.fetch('changes', 'not-a-position');
      expect.unreachable();
    } catch (e) {
      expect(isSyncError(e) && [e.code, e.disposition]).toEqual(['stream_position_invalid', 'replan']);
    }
  });
});
