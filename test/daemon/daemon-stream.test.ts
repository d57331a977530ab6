/**
 * One process, one Box event stream: the daemon's long poll and its engine's catch-up read the stream the daemon
 * chose (config `daemon.streamType`, default `sync`; `changes` after a fallback), never the top-level
 * `streamType` that `sync --once` reads.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait.js';
import { createHarness, type Harness } from './daemon-harness.js';

const BOUND = { timeoutMs: 30_000, intervalMs: 50 };

/** stream_type and stream_position of every GET/OPTIONS of /2.0/events the server answered. */
function eventReads(h: Harness): { stream: string | null; position: string | null }[] {
  return h.srv.control
    .requests()
    .filter((r) => r.path === '/2.0/events')
    .map((r) => {
      const q = new URLSearchParams(r.query);
      return { stream: q.get('stream_type'), position: q.get('stream_position') };
    });
}

const arrived = (h: Harness, name: string, text: string) => async (): Promise<boolean> => (await readFile(join(h.mirror, name), 'utf8').catch(() => '')) === text;

describe('boxsync daemon: the event stream (real process)', () => {
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.close();
    h = null;
  });

  it('reads only the sync stream by default, for live hints and for the catch-up after a restart', async () => {
    h = await createHarness();
    h.srv.control.clearRequests();
    const first = await h.start();
    h.web.uploadFile(h.rootId, 'live.txt', 'live');
    await waitFor(arrived(h, 'live.txt', 'live'), { ...BOUND, what: 'a live remote change' });
    expect((await h.stop(first)).code).toBe(0);

    // Made while no daemon runs: only the engine's catch-up from its stored cursor can find it.
    h.web.uploadFile(h.rootId, 'while-down.txt', 'caught up');
    const second = await h.start();
    await waitFor(arrived(h, 'while-down.txt', 'caught up'), { ...BOUND, what: 'the change made while the daemon was down' });
    expect((await h.status()).remoteStream).toMatchObject({ configured: 'sync', effective: 'sync' });
    await h.stop(second);

    const reads = eventReads(h);
    expect(reads.filter((r) => r.position !== null && /^\d+$/.test(r.position)).length).toBeGreaterThan(0);
    expect(reads.filter((r) => r.stream !== 'sync')).toEqual([]);
  });

  it('reads only the stream set by config daemon.streamType', async () => {
    h = await createHarness({ config: { streamType: 'all', daemon: { streamType: 'changes' } } });
    h.srv.control.clearRequests();
    await h.start();
    expect((await h.status()).remoteStream).toMatchObject({ configured: 'changes', effective: 'changes' });
    h.web.uploadFile(h.rootId, 'c.txt', 'changes');
    await waitFor(arrived(h, 'c.txt', 'changes'), { ...BOUND, what: 'a remote change over the changes stream' });
    const reads = eventReads(h);
    expect(reads.length).toBeGreaterThan(0);
    expect(reads.filter((r) => r.stream !== 'changes')).toEqual([]);
  });

  it('moves the engine to the changes stream too when the sync stream cannot be set up', async () => {
    h = await createHarness();
    h.srv.control.failNext({ method: 'PUT', path: `/2.0/folders/${h.rootId}`, status: 403, count: 1 });
    h.srv.control.clearRequests();
    await h.start();
    expect((await h.status()).remoteStream.effective).toBe('changes');
    h.web.uploadFile(h.rootId, 'after-fallback.txt', 'f');
    await waitFor(arrived(h, 'after-fallback.txt', 'f'), { ...BOUND, what: 'a remote change after the fallback' });
    const reads = eventReads(h);
    // The sync stream was only asked for its current position while it was being set up; every read of
    // events since a position (the engine's catch-up and the long poll's fetches) is on `changes`.
    expect(reads.filter((r) => r.stream === 'sync' && r.position !== 'now')).toEqual([]);
    expect(reads.filter((r) => r.stream === 'changes' && r.position !== null && /^\d+$/.test(r.position)).length).toBeGreaterThan(0);
  });
});
