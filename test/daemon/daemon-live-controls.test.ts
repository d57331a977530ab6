/**
 * The running daemon's live settings (issue 31's controls, lifecycle/live-controls.ts), through the real CLI
 * against a real daemon child and box-server: `boxsync bwlimit RATE|off` caps transfers at once (a download
 * stays in flight under the cap and finishes once it is off) and `status` shows the limit; `boxsync
 * notifications off` silences notify-send (a fake one that records its calls) until `notifications on`.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { fakeNotifySend } from '../support/fake-notify.js';
import { waitFor } from '../support/wait.js';
import { exists } from '../cli/sync-harness.js';
import { createHarness, type Harness } from './daemon-harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const cli = (hh: Harness, args: readonly string[]) => runCli([...args, '--config', hh.configFile], { env: { BOXSYNC_LOG_LEVEL: 'warn' }, timeoutMs: 120_000 });

it('pause PATH holds one folder pair (a new file there waits) while the other syncs; resume PATH syncs it; all paused reads paused', async () => {
  h = await createHarness();
  const hh = h;
  const second = join(h.dir, 'Second');
  await mkdir(second);
  const secondId = h.web.createFolder('0', 'Second').id;
  const cfg = JSON.parse(await readFile(h.configFile, 'utf8')) as { folders: Record<string, unknown>[] };
  cfg.folders.push({ remoteId: secondId, localPath: second });
  await writeFile(h.configFile, JSON.stringify(cfg, null, 2), { mode: 0o600 });
  const run = await h.start();

  const paused = await cli(h, ['pause', join(second, 'anything', 'below')]);
  expect(paused.code, paused.stderr).toBe(0);
  expect(paused.stdout).toMatch(/Second paused: nothing new of it is planned or transferred/);
  expect((await h.status()).controls.pausedPairs).toEqual([second]);
  const st = await cli(h, ['status']);
  expect(st.stdout).toMatch(/paused: .*Second \(`boxsync resume/);
  expect(st.stdout).not.toMatch(/^boxsync daemon .*: paused/);

  // Both pairs get a new file; only the running pair's reaches Box.
  await writeFile(join(second, 'held.txt'), 'held\n');
  await writeFile(join(h.mirror, 'goes.txt'), 'goes\n');
  await waitFor(() => hh.web.findByPath('Mirror/goes.txt'), { timeoutMs: 30_000, what: 'goes.txt on Box (the running pair)' });
  // A pass after the paused pair's file was seen: the watcher's hint for it is older than this full pass.
  const before = (await h.status()).passes;
  await cli(h, ['sync-now']);
  await waitFor(async () => {
    const s = await hh.status();
    return s.passes > before && s.engine.phase === 'idle';
  }, { timeoutMs: 30_000, what: 'the full pass after sync-now' }).catch(async (e: unknown) => {
    throw new Error(`${String(e)}\n${JSON.stringify(await hh.status())}\n--- daemon output ---\n${run.output()}`);
  });
  expect(h.web.findByPath('Second/held.txt')).toBeNull();
  // The held pair's waiting hint wakes no pass of its own (a loop on it once ran thousands in these seconds).
  expect((await h.status()).passes).toBeLessThan(100);

  // Pausing the other pair too: the daemon as a whole reads paused.
  expect((await cli(h, ['pause', h.mirror])).code).toBe(0);
  expect((await cli(h, ['status'])).stdout).toMatch(/^boxsync daemon \(pid \d+, up [^)]*\): paused/);
  expect((await cli(h, ['resume', h.mirror])).code).toBe(0);

  const resumed = await cli(h, ['resume', second]);
  expect(resumed.code, resumed.stderr).toBe(0);
  expect(resumed.stdout).toMatch(/Second resumed: a full pass catches up/);
  await waitFor(() => hh.web.findByPath('Second/held.txt'), { timeoutMs: 30_000, what: 'held.txt on Box after resume' });
  expect((await h.status()).controls.pausedPairs).toEqual([]);

  // `resume` with no path releases the pairs paused on their own too.
  expect((await cli(h, ['pause', second])).code).toBe(0);
  expect((await cli(h, ['pause', h.mirror])).code).toBe(0);
  expect((await h.status()).controls.pausedPairs).toHaveLength(2);
  expect((await cli(h, ['resume'])).code).toBe(0);
  expect((await h.status()).controls.pausedPairs).toEqual([]);

  const outside = await cli(h, ['pause', '/etc']);
  expect(outside.code).not.toBe(0);
  expect(outside.stderr).toMatch(/is not inside any configured folder pair; nothing was paused/);
});

it('bwlimit: a cap set live holds a download in flight, status shows it, off lets it finish; a bad rate changes nothing', async () => {
  h = await createHarness();
  await h.start();
  const hh = h;

  const set = await cli(h, ['bwlimit', '16K']);
  expect(set.code, set.stderr).toBe(0);
  expect(set.stdout).toMatch(/bandwidth limit 16 KiB\/s for uploads and downloads together/);
  expect((await h.status()).controls.bandwidthBytesPerSec).toBe(16 * 1024);
  expect((await cli(h, ['status'])).stdout).toMatch(/bandwidth limit: 16 KiB\/s/);

  const bad = await cli(h, ['bwlimit', 'fast']);
  expect(bad.code).not.toBe(0);
  expect(bad.stderr).toMatch(/"fast" is not a rate.*the limit was not changed/);
  expect((await h.status()).controls.bandwidthBytesPerSec).toBe(16 * 1024);

  // 512 KiB at 16 KiB/s takes about 30 s: the download is seen part-way, held by the cap.
  const content = Buffer.alloc(512 * 1024, 7);
  h.web.uploadFile(h.rootId, 'big.bin', content);
  const partWay = await waitFor(
    async () => {
      const t = (await hh.status()).engine.roots[0]!.inFlight.find((x) => x.path === 'big.bin');
      return t !== undefined && t.doneBytes > 0 && t.doneBytes < t.totalBytes ? t : null;
    },
    { timeoutMs: 30_000, what: 'big.bin in flight under the cap' },
  );
  expect(partWay.direction).toBe('down');

  const off = await cli(h, ['bwlimit', 'off']);
  expect(off.code, off.stderr).toBe(0);
  expect(off.stdout).toMatch(/bandwidth limit off/);
  expect((await h.status()).controls.bandwidthBytesPerSec).toBeNull();
  await waitFor(async () => (await exists(join(hh.mirror, 'big.bin'))) && (await readFile(join(hh.mirror, 'big.bin'))).equals(content), {
    timeoutMs: 30_000,
    what: 'big.bin down in full once the cap is off',
  });
  expect((await cli(h, ['status'])).stdout).toMatch(/bandwidth limit: off/);
});

it('notifications off: notify-send is not called; on again: it is, and status says which', async () => {
  h = await createHarness();
  const hh = h;
  // A new Box folder under newFolders "skip" is the notice used here (it is told once per folder).
  const cfg = JSON.parse(await readFile(h.configFile, 'utf8')) as { folders: Record<string, unknown>[] };
  cfg.folders[0]!['selective'] = { newFolders: 'skip' };
  await writeFile(h.configFile, JSON.stringify(cfg, null, 2), { mode: 0o600 });
  // New folders count as new only once something of the pair is synced.
  h.web.uploadFile(h.rootId, 'base.txt', 'base\n');
  const notify = await fakeNotifySend(h.dir);
  const run = await h.start(notify.env);
  expect((await h.status()).controls.notifications).toEqual({ on: true, available: true });

  const off = await cli(h, ['notifications', 'off']);
  expect(off.code, off.stderr).toBe(0);
  expect(off.stdout).toMatch(/desktop notifications off/);
  expect((await cli(h, ['status'])).stdout).toMatch(/notifications: off/);
  h.web.uploadFile(h.web.createFolder(h.rootId, 'Quiet').id, 'q.txt', 'quiet\n');
  // The log line is written just before the notifier is asked, in the same turn.
  await waitFor(() => /Quiet\/ appeared on Box/.test(run.output()), { timeoutMs: 30_000, what: 'the Quiet folder to be skipped' }).catch((e: unknown) => {
    throw new Error(`${String(e)}\n--- daemon output ---\n${run.output()}`);
  });

  const on = await cli(h, ['notifications', 'on']);
  expect(on.code, on.stderr).toBe(0);
  expect((await h.status()).controls.notifications.on).toBe(true);
  h.web.uploadFile(h.web.createFolder(h.rootId, 'Loud').id, 'l.txt', 'loud\n');
  await waitFor(async () => (await notify.calls()).some((a) => a.join(' ').includes('Loud/')), { timeoutMs: 30_000, what: 'the Loud notification' });
  // notify-send calls are recorded in order: Quiet's would have come first.
  expect((await notify.calls()).filter((a) => a.join(' ').includes('Quiet/'))).toEqual([]);

  const wrong = await cli(h, ['notifications', 'maybe']);
  expect(wrong.code).toBe(2);
  expect(wrong.stderr).toMatch(/say on or off/);
});
