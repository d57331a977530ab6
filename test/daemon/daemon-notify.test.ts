/**
 * Desktop notifications and a held guard (issue 15): with a desktop session and `notify-send` on PATH, the
 * daemon notifies once when a safety guard holds syncing and when it stops on a fatal error; `status` exits 1
 * while the guard is held. `notify-send` here is a script that records its arguments (a real child process).
 */
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { waitFor } from '../support/wait.js';
import { createHarness, type Harness } from './daemon-harness.js';
import { fakeNotifySend } from '../support/fake-notify.js';

describe('desktop notifications (real daemon, fake notify-send)', () => {
  let h: Harness | null = null;
  afterEach(async () => {
    await h?.close();
    h = null;
  });

  it('a held safety guard: status exits 1 and one notification says so; a fatal error notifies too', async () => {
    h = await createHarness({ config: { safety: { maxDeletes: 2, maxDeleteFraction: 0.1 } } });
    const notify = await fakeNotifySend(h.dir);
    // The files sit in one folder that is then moved out of the tree in one rename: the watcher sees the
    // deletes at once, so they land in one pass however loaded the machine is (the guard counts per pass).
    await mkdir(join(h.mirror, 'd'));
    for (let i = 0; i < 5; i++) await writeFile(join(h.mirror, 'd', `f${i}.txt`), `file ${i}`);
    await writeFile(join(h.mirror, 'keep.txt'), 'kept');
    const run = await h.start(notify.env);
    await waitFor(async () => [0, 1, 2, 3, 4].every((i) => h!.web.findByPath(`Mirror/d/f${i}.txt`)) && (await h!.status()).engine.phase === 'idle', {
      timeoutMs: 30_000,
      what: 'the five files on Box',
    });

    await rename(join(h.mirror, 'd'), join(h.dir, 'moved-away'));
    const held = await waitFor(async () => (await h!.status()).engine.heldGuard, { timeoutMs: 30_000, what: 'the mass-delete guard' });
    expect(held.id).toMatch(/^mass-delete:/);
    // What it would delete: how many, and the first paths.
    expect(held.firstPaths).toEqual(['d']);
    expect(held.deletes).toBeGreaterThanOrEqual(1);
    const status = await runCli(['status', '--config', h.configFile]);
    expect(status.code).toBe(1);
    expect(status.stdout).toMatch(/\n {4}would delete: d(\n| and \d+ more\n)/);
    expect(status.stdout).toMatch(/NEEDS ATTENTION: a safety guard holds syncing/);
    expect(JSON.parse((await runCli(['status', '--json', '--config', h.configFile])).stdout)).toMatchObject({ running: true, healthy: false });
    const guardCalls = await waitFor(async () => {
      const c = (await notify.calls()).filter((a) => a.includes('boxsync: a safety guard holds syncing'));
      return c.length > 0 ? c : null;
    }, { timeoutMs: 15_000, what: 'the guard notification' });
    expect(guardCalls[0]).toContain('--app-name=boxsync');
    // What the guard holds was not deleted on Box.
    expect(h.web.findByPath('Mirror/d')).not.toBeNull();
    expect([0, 1, 2, 3, 4].filter((i) => h!.web.findByPath(`Mirror/d/f${i}.txt`) !== null)).toHaveLength(5);

    h.srv.control.revokeAll('1');
    await runCli(['sync-now', '--config', h.configFile]);
    const exit = await Promise.race([run.exited, new Promise<null>((r) => setTimeout(() => r(null), 60_000).unref())]);
    expect(exit?.code, run.output()).toBe(1);
    // notify-send runs on its own: its record may land just after the daemon exited.
    const fatal = await waitFor(async () => {
      const c = (await notify.calls()).filter((a) => a.includes('boxsync stopped syncing'));
      return c.length > 0 ? c : null;
    }, { timeoutMs: 15_000, what: 'the fatal-error notification' });
    expect(fatal).toHaveLength(1);
    expect(fatal[0]).toContain('--urgency=critical');
    // One guard notification, not one per pass.
    expect((await notify.calls()).filter((a) => a.includes('boxsync: a safety guard holds syncing'))).toHaveLength(1);
  });
});
