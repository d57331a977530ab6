/**
 * The daemon refuses to act on a missing root (issue 26, point 1): the mirror folder replaced by a new, empty one
 * at the same path (what an unmounted disk looks like) is reported in `boxsync status` as a held guard, with what
 * to do, and nothing is trashed on Box. Confirming the guard accepts the new folder: it is merged with Box as on
 * a first sync, still nothing is deleted, and the daemon watches the new folder.
 */
import { mkdir, readdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { waitFor } from '../support/wait.js';
import { createHarness, type Harness } from './daemon-harness.js';

describe('daemon: a root is what it was', () => {
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.close();
    h = null;
  });

  it('a replaced root folder is held in status and nothing is trashed on Box; confirmed, the new folder is merged, deleting nothing', async () => {
    h = await createHarness();
    for (let i = 0; i < 4; i++) await writeFile(join(h.mirror, `f${i}.txt`), `file ${i}\n`);
    await h.start();
    const names = ['f0.txt', 'f1.txt', 'f2.txt', 'f3.txt'];
    await waitFor(async () => names.every((n) => h!.web.findByPath(`Mirror/${n}`)) && (await h!.status()).engine.phase === 'idle', {
      timeoutMs: 30_000,
      what: 'the four files on Box',
    });

    await rename(h.mirror, join(h.dir, 'Box.old'));
    await mkdir(h.mirror);
    h.srv.control.clearRequests();
    const sync = await runCli(['sync-now', '--config', h.configFile]);
    expect(sync.code, sync.stderr).toBe(0);
    const held = await waitFor(async () => (await h!.status()).engine.heldGuard, { timeoutMs: 30_000, what: 'the local-root-missing guard' });
    expect(held.id).toMatch(/^local-root-missing:[0-9a-f]{16}$/);
    expect(held.message).toMatch(/is not the folder that was synced \(inode \d+, was \d+\).*nothing is deleted on Box.*Remount or restore it/);
    const status = await runCli(['status', '--config', h.configFile]);
    expect(status.code).toBe(1);
    expect(status.stdout).toMatch(/NEEDS ATTENTION: a safety guard holds syncing \(local-root-missing:/);
    expect(status.stdout).toContain(`confirm with: boxsync confirm ${held.id}`);
    // A change in the new folder is not acted on either while the guard holds.
    await writeFile(join(h.mirror, 'new.txt'), 'new\n');
    const before = (await h.status()).passes;
    await runCli(['sync-now', '--config', h.configFile]);
    await waitFor(async () => {
      const s = await h!.status();
      return s.passes > before && s.engine.phase === 'idle' ? s : null;
    }, { timeoutMs: 30_000, what: 'the pass sync-now started' });
    expect((await h.status()).engine.heldGuard?.id).toBe(held.id);
    expect(h.srv.control.requests().filter((r) => r.method !== 'GET' && r.method !== 'OPTIONS')).toEqual([]);
    for (const n of names) expect(h.web.findByPath(`Mirror/${n}`)).not.toBeNull();

    const confirm = await runCli(['confirm', held.id, '--config', h.configFile]);
    expect(confirm.code, confirm.stderr).toBe(0);
    await waitFor(async () => ((await readdir(h!.mirror)).length === 5 && h!.web.findByPath('Mirror/new.txt') && (await h!.status()).engine.phase === 'idle' ? true : null), {
      timeoutMs: 30_000,
      what: 'the new folder merged with Box',
    });
    expect((await readdir(h.mirror)).sort()).toEqual([...names, 'new.txt']);
    expect(h.srv.control.requests().filter((r) => r.method === 'DELETE')).toEqual([]);
    expect((await h.status()).engine.heldGuard).toBeNull();
    // The new folder is the one watched now: a live change in it reaches Box.
    await writeFile(join(h.mirror, 'live.txt'), 'live\n');
    await waitFor(() => h!.web.findByPath('Mirror/live.txt'), { timeoutMs: 30_000, what: 'a live change in the new folder on Box' });
  });
});
