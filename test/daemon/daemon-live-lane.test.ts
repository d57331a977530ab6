/**
 * Small edits never wait behind a big upload (engine/live-lane.ts): the real daemon process against box-server,
 * whose hook holds a big file's upload request open until the test lets it go. Edits to small synced files made
 * meanwhile all reach Box while it is held; box-server's request log shows their uploads began after the big
 * one and ended before it. No wall-clock speed is asserted: the big upload is held, not slow.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait.js';
import { createHarness, type DaemonRun, type Harness } from './daemon-harness.js';

const SMALL = 10;

describe('boxsync daemon: the live lane', () => {
  let h: Harness;
  let run: DaemonRun;
  let release: () => void = () => undefined;

  beforeAll(async () => {
    h = await createHarness();
    for (let i = 0; i < SMALL; i++) h.web.uploadFile(h.rootId, `small-${i}.txt`, `v1 of ${i}`);
    run = await h.start();
  });

  afterAll(async () => {
    release();
    if (run) expect((await h.stop(run)).code).toBe(0);
    await h?.close();
  });

  it('edits to small files reach Box while a big upload is still in flight', async () => {
    const held = new Promise<void>((r) => (release = r));
    let bigStarted = false;
    h.srv.control.clearRequests();
    h.srv.control.failNext({
      method: 'POST',
      path: '/api/2.0/files/content',
      hook: async () => {
        bigStarted = true;
        await held;
      },
    });
    await writeFile(join(h.mirror, 'big.bin'), Buffer.alloc(2 * 1024 * 1024, 7));
    await waitFor(() => bigStarted, { timeoutMs: 30_000, what: 'the big upload to reach box-server' });

    for (let i = 0; i < SMALL; i++) await writeFile(join(h.mirror, `small-${i}.txt`), `v2 of ${i}, edited during the big upload`);
    // The big file itself rewritten meanwhile: its path is busy, so no second upload starts beside the held one.
    await writeFile(join(h.mirror, 'big.bin'), Buffer.alloc(2 * 1024 * 1024, 8));
    const onBox = (i: number): string => h.web.readFile(h.web.findByPath(`Mirror/small-${i}.txt`)!.id).toString();
    await waitFor(() => [...Array(SMALL).keys()].every((i) => onBox(i) === `v2 of ${i}, edited during the big upload`), {
      timeoutMs: 30_000,
      intervalMs: 50,
      what: 'every small edit on Box while the big upload is held',
    });
    expect(h.web.findByPath('Mirror/big.bin')).toBeNull();
    expect(h.srv.control.requests().filter((r) => r.method === 'POST' && r.path === '/api/2.0/files/content')).toEqual([]);

    release();
    // The held upload's bytes no longer match its SHA-1 (Box refuses them) or it sends the first content; either
    // way the next pass uploads what the file holds now.
    await waitFor(
      () => {
        const f = h.web.findByPath('Mirror/big.bin');
        return f !== null && h.web.readFile(f.id).equals(Buffer.alloc(2 * 1024 * 1024, 8));
      },
      { timeoutMs: 30_000, what: 'the big file on Box, with its last content, once let go' },
    );

    // The log is written as each request ends: every small upload began after the big one and ended before it.
    const log = h.srv.control.requests();
    const big = log.findIndex((r) => r.method === 'POST' && r.path === '/api/2.0/files/content');
    const bigId = h.web.findByPath('Mirror/big.bin')!.id;
    const smalls = log
      .map((r, i) => ({ r, i }))
      .filter(({ r }) => r.method === 'POST' && /^\/api\/2\.0\/files\/\d+\/content$/.test(r.path) && r.path !== `/api/2.0/files/${bigId}/content` && r.status === 200);
    expect(big).toBeGreaterThanOrEqual(0);
    expect(smalls.length).toBe(SMALL);
    for (const { r, i } of smalls) {
      expect(i).toBeLessThan(big);
      expect(r.atMs).toBeGreaterThanOrEqual(log[big]!.atMs);
    }
  }, 120_000);
});
