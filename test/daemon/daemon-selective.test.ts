/**
 * Selective sync with the daemon running (issue 27 points 2, 4, 6, 7): `selective exclude` goes to the daemon over
 * the control socket, which applies it at once (no restart) and answers when the folder is freed (local trash) with
 * no Box delete; `status PATH` says "not selected"; `selective include` brings it back, and the moment it answers
 * `status` shows the folder as "downloading for selective sync".
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
  expect(ex.stdout).toMatch(/The daemon \(pid \d+\) applies this now/);
  expect(ex.stdout).toMatch(/Archive\/ is now in folders\[0\]\.selective\.unselected of .*config\.json; the daemon applied it at once/);
  expect(ex.stdout).toMatch(/Archive is not selected: its local copy \(1 file, 11 bytes, all on Box\) was moved to the local trash/);
  // The answer came when the change was done: the local copy is gone already.
  expect(await readOld()).toBeNull();
  const one = await runCli(['status', '--socket', h.socketPath, join(archivePath, 'old.txt')]);
  expect(one.stdout).toMatch(/not synced: not selected \(selective sync: Archive is in folders\[\]\.selective\.unselected\)/);
  expect(h.srv.control.requests().filter((r) => r.method === 'DELETE')).toEqual([]);
  expect(h.web.getItem('file', old.id)?.['item_status']).toBe('active');

  // The download of old.txt is held for a while, so the state can be seen while it comes down.
  h.srv.control.failNext({ method: 'GET', path: new RegExp(`/files/${old.id}/content$`), delayMs: 20_000, count: 1 });
  const inc = await runCli(['selective', 'include', archivePath, '--config', h.configFile]);
  expect(inc.code, inc.stderr).toBe(0);
  expect(inc.stdout).toMatch(/Archive\/ is selected again \(removed from folders\[0\]\.selective\.unselected of .*\); the daemon applied it at once/);
  expect(inc.stdout).toMatch(/It is downloading now; `boxsync status .*Archive` shows it as "downloading for selective sync"/);
  // The answer came once the daemon had the folder coming down: status says so at once.
  expect((await harness.status()).engine.selecting ?? []).toEqual([{ root: expect.any(String), path: 'Archive' }]);
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
