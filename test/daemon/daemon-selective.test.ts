/**
 * Selective sync with the daemon running (issue 27 points 2, 4, 6): `selective exclude` writes the config and
 * reloads the daemon (SIGHUP), whose next pass frees the folder (local trash) with no Box delete; `status PATH`
 * says "not selected"; `selective include` brings it back, and while it comes down `status` shows it as
 * "downloading for selective sync".
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { waitFor } from '../support/wait.js';
import { createHarness, type Harness } from './daemon-harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

it('exclude and include with the daemon running: freed, not selected, downloading for selective sync, back', async () => {
  h = await createHarness();
  const harness = h;
  const archive = h.web.createFolder(h.rootId, 'Archive');
  const old = h.web.uploadFile(archive.id, 'old.txt', 'old report\n');
  await h.start();
  const archivePath = join(h.mirror, 'Archive');
  const readOld = (): Promise<string | null> => readFile(join(archivePath, 'old.txt'), 'utf8').catch(() => null);
  await waitFor(async () => (await readOld()) === 'old report\n', { timeoutMs: 30_000, what: 'Archive to be downloaded' });
  h.srv.control.clearRequests();

  const ex = await runCli(['selective', 'exclude', archivePath, '--config', h.configFile]);
  expect(ex.code, ex.stderr).toBe(0);
  expect(ex.stdout).toMatch(/The daemon \(pid \d+\) reloads the config: its next pass stops syncing Archive\//);
  await waitFor(async () => (await readOld()) === null, { timeoutMs: 30_000, what: 'Archive to leave the disk' });
  const one = await runCli(['status', '--socket', h.socketPath, join(archivePath, 'old.txt')]);
  expect(one.stdout).toMatch(/not synced: not selected \(selective sync: Archive is in folders\[\]\.selective\.unselected\)/);
  expect(h.srv.control.requests().filter((r) => r.method === 'DELETE')).toEqual([]);
  expect(h.web.getItem('file', old.id)?.['item_status']).toBe('active');

  // The download of old.txt is held for a while, so the state can be seen while it comes down.
  h.srv.control.failNext({ method: 'GET', path: new RegExp(`/files/${old.id}/content$`), delayMs: 20_000, count: 1 });
  const inc = await runCli(['selective', 'include', archivePath, '--config', h.configFile]);
  expect(inc.code, inc.stderr).toBe(0);
  expect(inc.stdout).toMatch(/Archive\/ is selected again\. The daemon \(pid \d+\) reloads the config and downloads it/);
  await waitFor(async () => ((await harness.status().catch(() => null))?.engine.selecting ?? []).some((s) => s.path === 'Archive'), {
    timeoutMs: 30_000,
    what: 'status to show Archive coming down',
  });
  // The download is held 20 s: long enough for both commands to ask on a busy machine.
  const coming = await runCli(['status', '--socket', h.socketPath]);
  expect(coming.stdout).toMatch(/Archive\/: downloading for selective sync/);
  const folder = await runCli(['status', '--socket', h.socketPath, archivePath]);
  expect(folder.stdout).toMatch(/downloading for selective sync \(Archive\/ was selected again\)/);
  expect(await readOld()).toBeNull();
  await waitFor(async () => (await readOld()) === 'old report\n', { timeoutMs: 60_000, what: 'Archive to come back from Box' });
  await waitFor(async () => ((await harness.status().catch(() => null))?.engine.selecting ?? ['x']).length === 0, {
    timeoutMs: 30_000,
    what: 'the selective download to be done',
  });
  expect(h.srv.control.requests().filter((r) => r.method === 'DELETE')).toEqual([]);
});
