/**
 * The daemon never goes silently stale: a degraded watcher falls back to periodic scans, a broken long poll
 * reconnects, and a `sync` stream that cannot be set up falls back to `changes` — each said in status.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { waitFor } from '../support/wait.js';
import { createHarness, type Harness } from './daemon-harness.js';

const BOUND = { timeoutMs: 20_000, intervalMs: 50 };

describe('boxsync daemon fallbacks (real process)', () => {
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.close();
    h = null;
  });

  it('falls back to periodic full scans when the watcher runs out of watches, and says so in status and the log', async () => {
    h = await createHarness();
    const deep = h.web.createFolder(h.rootId, 'A');
    h.web.createFolder(deep.id, 'B');
    const run = await h.start({ BOXSYNC_MAX_WATCHES: '1', BOXSYNC_FALLBACK_SCAN_SEC: '1' });
    const s = await h.status();
    const health = s.watchers[0]!.health;
    expect(health.state).toBe('degraded');
    if (health.state === 'degraded') expect(health.reason).toMatch(/watch budget of 1 .*falling back to a full scan every 1 s/);
    expect(s.notices.some((n) => /watch budget/.test(n))).toBe(true);
    const text = await runCli(['status', '--config', h.configFile]);
    expect(text.stdout).toMatch(/watcher \(inotify\): DEGRADED/);
    expect(run.output()).toMatch(/watcher degraded/);

    // A change deep in the tree, where no watch reaches, still gets to Box through the fallback scans.
    await writeFile(join(h.mirror, 'A/B/unwatched.txt'), 'found by a scan');
    await waitFor(() => h!.web.findByPath('Mirror/A/B/unwatched.txt'), { ...BOUND, what: 'the fallback scan to upload it' });
    await waitFor(async () => (await h!.status()).watchers[0]!.lastFallbackScanAtMs !== null, BOUND);
  });

  it('uses the fs.watch watcher when the native inotify addon cannot load, says so once, and still syncs local changes live', async () => {
    h = await createHarness();
    const run = await h.start({ BOXSYNC_INOTIFY_ADDON: '/nonexistent/boxsync_inotify.node' });
    const s = await h.status();
    expect(s.watchers[0]!.kind).toBe('dirs');
    expect(s.watchers[0]!.health.state).toBe('ok');
    await writeFile(join(h.mirror, 'live.txt'), 'seen by the fallback watcher');
    await waitFor(() => h!.web.findByPath('Mirror/live.txt'), { ...BOUND, what: 'the upload of live.txt' });
    expect(run.output().match(/native inotify watcher unavailable \(.*is not built/g)).toHaveLength(1);
  });

  it('recovers when the server breaks the long poll', async () => {
    h = await createHarness();
    await h.start();
    h.srv.control.clearRequests();
    h.srv.control.failNext({ path: '/subscribe', reset: 'before-response', count: 3 });
    h.web.uploadFile(h.rootId, 'first.txt', 'one');
    await waitFor(async () => (await readFile(join(h!.mirror, 'first.txt'), 'utf8').catch(() => '')) === 'one', { ...BOUND, what: 'first.txt' });
    await waitFor(() => h!.srv.control.requests().filter((r) => r.path === '/subscribe' && r.status === 0).length >= 3, { ...BOUND, what: 'three broken long polls' });
    h.web.uploadFile(h.rootId, 'second.txt', 'two');
    await waitFor(async () => (await readFile(join(h!.mirror, 'second.txt'), 'utf8').catch(() => '')) === 'two', { ...BOUND, what: 'second.txt after the long poll recovered' });
    expect((await h.status()).remoteStream.state).not.toBe('stopped');
  });

  it('falls back to a full listing when the event stream position is refused as too old', async () => {
    h = await createHarness();
    await h.start();
    const before = (await h.status()).passes;
    h.srv.control.clearRequests();
    h.srv.control.failNext({ method: 'GET', path: '/2.0/events', status: 400, count: 1 });
    h.web.uploadFile(h.rootId, 'after-expiry.txt', 'listed');
    await waitFor(async () => (await readFile(join(h!.mirror, 'after-expiry.txt'), 'utf8').catch(() => '')) === 'listed', { ...BOUND, what: 'the change found by the full listing' });
    const s = await h.status();
    // The engine, the one reader of the stream, met the refused position and listed the root in full.
    const log = h.srv.control.requests();
    const refused = log.findIndex((r) => r.path === '/2.0/events' && r.status === 400);
    expect(refused).toBeGreaterThanOrEqual(0);
    expect(log.slice(refused).some((r) => r.method === 'GET' && r.path === `/2.0/folders/${h!.rootId}/items`)).toBe(true);
    expect(s.passes).toBeGreaterThan(before);
    h.web.uploadFile(h.rootId, 'later.txt', 'live again');
    await waitFor(async () => (await readFile(join(h!.mirror, 'later.txt'), 'utf8').catch(() => '')) === 'live again', { ...BOUND, what: 'live changes after the fallback' });
  });

  it('falls back from the sync stream to changes when the roots cannot be marked, and keeps the verified sync stream across restarts', async () => {
    h = await createHarness();
    h.srv.control.failNext({ method: 'PUT', path: `/2.0/folders/${h.rootId}`, status: 403, count: 1 });
    const first = await h.start();
    const s1 = await h.status();
    expect(s1.remoteStream.effective).toBe('changes');
    expect(s1.notices.some((n) => /could not mark the root folders sync_state=synced.*changes stream filtered to the roots/.test(n))).toBe(true);
    h.web.uploadFile(h.rootId, 'via-changes.txt', 'c');
    await waitFor(async () => (await readFile(join(h!.mirror, 'via-changes.txt'), 'utf8').catch(() => '')) === 'c', { ...BOUND, what: 'a remote change over the changes stream' });
    expect((await h.stop(first)).code).toBe(0);

    // Next start: marking works, ITEM_SYNC arrives, the sync stream is used and remembered.
    const second = await h.start();
    expect((await h.status()).remoteStream.effective).toBe('sync');
    expect((await h.stop(second)).code).toBe(0);
    await h.start();
    const s3 = await h.status();
    expect(s3.remoteStream.effective).toBe('sync');
    await mkdir(join(h.mirror, 'after-restart'));
    await writeFile(join(h.mirror, 'after-restart/x.txt'), 'x');
    await waitFor(() => h!.web.findByPath('Mirror/after-restart/x.txt'), { ...BOUND, what: 'upload after the restart' });
  });
});
