/**
 * Live changes at any moment of the daemon's first pass (issue 29 point 8): the real daemon process on an empty
 * mirror of a Box folder big enough to be planned in windows (planWindowEntries 10), against box-server whose hooks
 * hold the first pass at two moments: its listing (one folder's listing request held), then its first window (the
 * download of a big file held). A new local file and a new Box file made while the listing is held, then a new Box
 * file and a new local file made one at a time while the big download is held, all cross over before the first
 * pass ends. No wall-clock speed is asserted: the pass is held, not slow; each wait is bounded.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait.js';
import { createHarness, holdRequest, type DaemonRun, type Harness } from './daemon-harness.js';

const BIG = Buffer.alloc(2 * 1024 * 1024, 5);

describe('boxsync daemon: live changes during the first pass', () => {
  let h: Harness;
  let run: DaemonRun | null = null;
  const releases: (() => void)[] = [];

  beforeAll(async () => {
    h = await createHarness({ config: { planWindowEntries: 10 } });
  });

  afterAll(async () => {
    for (const r of releases) r();
    if (run) {
      const end = await h.stop(run);
      if (end.code !== 0) console.log(`DAEMON EXIT ${end.code}\n${run.output().slice(-6000)}`);
      expect(end.code).toBe(0);
    }
    await h?.close();
  });

  it('new files on both sides cross over while the first pass is held in its listing and in its first window', async () => {
    try {
      await scenario();
    } catch (e) {
      throw new Error(`${String(e)}\n--- daemon output ---\n${run?.output().slice(-8000) ?? ''}`);
    }
  }, 240_000);

  async function scenario(): Promise<void> {
    // "a-big.bin" sorts first: the first window holds it and folder d0; d1 and d2 come in later windows.
    const bigId = h.web.uploadFile(h.rootId, 'a-big.bin', BIG).id;
    const folders = [0, 1, 2].map((d) => h.web.createFolder(h.rootId, `d${d}`).id);
    folders.forEach((id, d) => {
      for (let i = 0; i < 5; i++) h.web.uploadFile(id, `f${i}.txt`, `file ${d}/${i}`);
    });

    const listing = holdRequest(h.srv, 'GET', `/2.0/folders/${folders[1]}/items`);
    const big = holdRequest(h.srv, 'GET', `/2.0/files/${bigId}/content`);
    releases.push(listing.release, big.release);
    let bigReleased = false;

    run = h.launch();
    const firstPassRunning = async (): Promise<void> => {
      const s = await h.status();
      expect(s.engine.lastSuccessfulSyncAtMs).toBeNull();
      expect(bigReleased).toBe(false);
    };
    const local = (name: string): Promise<string | null> => readFile(join(h.mirror, name), 'utf8').catch(() => null);
    const onBox = (name: string): string | null => {
      const f = h.web.findByPath(`Mirror/${name}`);
      return f === null ? null : h.web.readFile(f.id).toString();
    };

    // 1. While the listing is held: a file saved here and a file created on Box.
    await waitFor(() => listing.started(), { timeoutMs: 60_000, what: 'the first pass to list d1 (held)' });
    await writeFile(join(h.mirror, 'early-local.txt'), 'saved during the listing');
    h.web.uploadFile(h.rootId, 'early-box.txt', 'created on Box during the listing');
    // The watcher's hint comes after a short settle; the listing goes on once the daemon had time to take it.
    await waitFor(async () => (await h.status()).watchers.every((w) => w.health.state === 'ok'), { timeoutMs: 30_000, what: 'the watcher to run' });
    listing.release();

    await waitFor(() => big.started(), { timeoutMs: 60_000, what: 'the first window to download the big file (held)' });
    await waitFor(() => onBox('early-local.txt') === 'saved during the listing', { timeoutMs: 30_000, intervalMs: 50, what: 'early-local.txt on Box' });
    await waitFor(async () => (await local('early-box.txt')) === 'created on Box during the listing', { timeoutMs: 30_000, intervalMs: 50, what: 'early-box.txt here' });
    await firstPassRunning();
    // The later windows have not run: their folders are not here yet.
    expect(await local('d2/f0.txt')).toBeNull();

    // 2. While the big download is held: a new Box file alone (only the event stream says so), then a local file alone.
    h.web.uploadFile(h.rootId, 'late-box.txt', 'created on Box during the big download');
    await waitFor(async () => (await local('late-box.txt')) === 'created on Box during the big download', { timeoutMs: 30_000, intervalMs: 50, what: 'late-box.txt here' });
    await firstPassRunning();
    await writeFile(join(h.mirror, 'late-local.txt'), 'saved during the big download');
    await waitFor(() => onBox('late-local.txt') === 'saved during the big download', { timeoutMs: 30_000, intervalMs: 50, what: 'late-local.txt on Box' });
    await firstPassRunning();
    expect(await local('a-big.bin')).toBeNull();

    // 3. Let the pass go: the first mirror completes, and everything made meanwhile is on both sides.
    bigReleased = true;
    big.release();
    await waitFor(
      async () => {
        const s = await h.status();
        return s.engine.lastSuccessfulSyncAtMs !== null && s.engine.phase === 'idle';
      },
      { timeoutMs: 60_000, what: 'the first pass to end' },
    );
    expect((await readFile(join(h.mirror, 'a-big.bin'))).equals(BIG)).toBe(true);
    for (let d = 0; d < 3; d++) for (let i = 0; i < 5; i++) expect(await local(`d${d}/f${i}.txt`)).toBe(`file ${d}/${i}`);
    for (const name of ['early-local.txt', 'late-local.txt']) expect(onBox(name)).not.toBeNull();
    for (const name of ['early-box.txt', 'late-box.txt']) expect(await local(name)).not.toBeNull();
  }
});

describe('boxsync daemon: small edits beside a big upload of the first pass', () => {
  const SMALL = 5;
  let h: Harness;
  let run: DaemonRun | null = null;
  let releaseBig: () => void = () => undefined;

  beforeAll(async () => {
    h = await createHarness();
    // The small files are on both sides already (the first pass links them); the big one is new here.
    for (let i = 0; i < SMALL; i++) {
      h.web.uploadFile(h.rootId, `small-${i}.txt`, `v1 of ${i}`);
      await writeFile(join(h.mirror, `small-${i}.txt`), `v1 of ${i}`);
    }
    await writeFile(join(h.mirror, 'big.bin'), BIG);
  });

  afterAll(async () => {
    releaseBig();
    if (run) {
      const end = await h.stop(run);
      if (end.code !== 0) console.log(`DAEMON EXIT ${end.code}\n${run.output().slice(-6000)}`);
      expect(end.code).toBe(0);
    }
    await h?.close();
  });

  it('edits to small files reach Box while the first pass still uploads the big one', async () => {
    const big = holdRequest(h.srv, 'POST', '/api/2.0/files/content');
    releaseBig = big.release;
    run = h.launch();
    try {
      await waitFor(() => big.started(), { timeoutMs: 60_000, what: 'the first pass to upload big.bin (held)' });
      await waitFor(async () => (await h.status()).engine.roots[0]!.inSync.files >= SMALL, { timeoutMs: 30_000, what: 'the small files linked' });
      for (let i = 0; i < SMALL; i++) await writeFile(join(h.mirror, `small-${i}.txt`), `v2 of ${i}, edited during the first pass`);
      const onBox = (i: number): string => h.web.readFile(h.web.findByPath(`Mirror/small-${i}.txt`)!.id).toString();
      await waitFor(() => [...Array(SMALL).keys()].every((i) => onBox(i) === `v2 of ${i}, edited during the first pass`), {
        timeoutMs: 30_000,
        intervalMs: 50,
        what: 'every small edit on Box while the big upload is held',
      });
      expect((await h.status()).engine.lastSuccessfulSyncAtMs).toBeNull();
      expect(h.web.findByPath('Mirror/big.bin')).toBeNull();
      releaseBig();
      await waitFor(() => h.web.findByPath('Mirror/big.bin') !== null, { timeoutMs: 30_000, what: 'big.bin on Box once let go' });
      await waitFor(async () => (await h.status()).engine.lastSuccessfulSyncAtMs !== null, { timeoutMs: 30_000, what: 'the first pass to end' });
    } catch (e) {
      throw new Error(`${String(e)}\n--- daemon output ---\n${run.output().slice(-6000)}`);
    }
  }, 180_000);
});
