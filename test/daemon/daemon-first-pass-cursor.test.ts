/**
 * The daemon started on a mirror `sync --once` made: `sync --once` stored its cursor on the `changes` stream, the
 * daemon reads the `sync` stream. Its first pass catches up from the stored `changes` position (what changed on
 * Box meanwhile arrives) instead of listing every Box folder again, and from then on reads its own stream from the
 * position it took before that pass (issue 29 point 6: at a million files the relisting took 1,038 s).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { waitFor } from '../support/wait.js';
import { createHarness, type Harness } from './daemon-harness.js';

const BOUND = { timeoutMs: 60_000, intervalMs: 50 };

/** The folder listings Box answered (GET /2.0/folders/ID/items). */
const listings = (h: Harness): number => h.srv.control.requests().filter((r) => r.method === 'GET' && /^\/2\.0\/folders\/[^/]+\/items$/.test(r.path)).length;

/** stream_type and stream_position of every GET /2.0/events that read from a stored position. */
function positionReads(h: Harness): { stream: string | null; position: string | null }[] {
  return h.srv.control
    .requests()
    .filter((r) => r.method === 'GET' && r.path === '/2.0/events')
    .map((r) => {
      const q = new URLSearchParams(r.query);
      return { stream: q.get('stream_type'), position: q.get('stream_position') };
    })
    .filter((r) => r.position !== null && /^\d+$/.test(r.position));
}

const has = (path: string, text: string) => async (): Promise<boolean> => (await readFile(path, 'utf8').catch(() => '')) === text;

describe('boxsync daemon: first pass on a mirror sync --once made (real process)', () => {
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.close();
    h = null;
  });

  it("catches up from sync --once's stored changes position without listing a folder, then reads its own stream", async () => {
    h = await createHarness();
    const folders = ['a', 'b', 'c'].map((name) => ({ name, id: h!.web.createFolder(h!.rootId, name).id }));
    for (const f of folders) for (let i = 0; i < 3; i++) h.web.uploadFile(f.id, `f${i}.txt`, `${f.name} ${i}`);
    const once = await runCli(['sync', '--once', '--config', h.configFile], { timeoutMs: 120_000 });
    expect(once.code, once.stdout + once.stderr).toBe(0);
    expect(await readFile(join(h.mirror, 'c', 'f2.txt'), 'utf8')).toBe('c 2');

    // Made while nothing runs: on Box (only events since the stored position tell of it) and here.
    h.web.uploadFile(folders[1]!.id, 'while-down.txt', 'made on Box');
    await writeFile(join(h.mirror, 'a', 'local.txt'), 'made here');
    h.srv.control.clearRequests();
    const first = await h.start();
    await waitFor(has(join(h.mirror, 'b', 'while-down.txt'), 'made on Box'), { ...BOUND, what: 'the Box change made while no daemon ran' });
    await waitFor(() => h!.web.findByPath('Mirror/a/local.txt') !== null, { ...BOUND, what: 'the local file made while no daemon ran, on Box' });
    // No folder was listed: the catch-up read the changes stream from sync --once's position.
    expect(listings(h)).toBe(0);
    expect(positionReads(h).filter((r) => r.stream === 'changes').length).toBeGreaterThan(0);
    expect((await h.status()).remoteStream).toMatchObject({ configured: 'sync', effective: 'sync' });

    // From then on its own stream: a live change, and the catch-up after a restart, are read on `sync`.
    h.srv.control.clearRequests();
    h.web.uploadFile(folders[2]!.id, 'live.txt', 'live');
    await waitFor(has(join(h.mirror, 'c', 'live.txt'), 'live'), { ...BOUND, what: 'a live Box change' });
    expect((await h.stop(first)).code).toBe(0);
    h.web.uploadFile(folders[0]!.id, 'second-down.txt', 'second');
    const second = await h.start();
    await waitFor(has(join(h.mirror, 'a', 'second-down.txt'), 'second'), { ...BOUND, what: 'the Box change made while the daemon was down' });
    await h.stop(second);
    const reads = positionReads(h);
    expect(reads.filter((r) => r.stream === 'sync').length).toBeGreaterThan(0);
    expect(reads.filter((r) => r.stream !== 'sync')).toEqual([]);
    expect(listings(h)).toBe(0);
  });
});
