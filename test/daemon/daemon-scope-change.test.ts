/**
 * A change of scope in the daemon (issue 27): a folder excluded in the config and the daemon reloaded (SIGHUP) is
 * listed by `boxsync status` as not synced any more, its local copy untouched; deleted here by hand and included
 * again (another reload), it comes back from Box and nothing is trashed.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
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

async function setExclude(configFile: string, exclude: readonly string[]): Promise<void> {
  const config = JSON.parse(await readFile(configFile, 'utf8')) as { folders: Array<Record<string, unknown>> };
  config.folders[0]!['exclude'] = exclude;
  await writeFile(configFile, JSON.stringify(config, null, 2));
}

it('status lists a folder excluded after it was synced; included again after a delete here, it comes back and nothing is trashed', async () => {
  h = await createHarness();
  const archive = h.web.createFolder(h.rootId, 'Archive');
  h.web.uploadFile(archive.id, 'old.txt', 'old report\n');
  const run = await h.start();
  const harness = h;
  await waitFor(async () => (await readFile(join(harness.mirror, 'Archive', 'old.txt'), 'utf8').catch(() => null)) === 'old report\n', {
    timeoutMs: 30_000,
    what: 'Archive to be downloaded',
  });
  h.srv.control.clearRequests();

  await setExclude(h.configFile, ['/Archive']);
  run.child.kill('SIGHUP');
  const excluded = await waitFor(
    async () => {
      const s = await harness.status().catch(() => null);
      return s !== null && (s.engine.unsynced ?? []).length > 0 && s.engine.phase === 'idle' ? s : null;
    },
    { timeoutMs: 30_000, what: 'status to list Archive as not synced' },
  );
  expect(excluded.engine.unsynced).toEqual([expect.objectContaining({ path: 'Archive', reason: 'config-exclude', kind: 'folder' })]);
  const text = await runCli(['status', '--socket', h.socketPath]);
  expect(text.stdout).toMatch(/not synced any more \(1; each local copy stays where it is, unsynced, and Box keeps its own\):\n {4}Archive\/: excluded by the config \(folders\[\]\.exclude\) since /);
  expect(await readFile(join(h.mirror, 'Archive', 'old.txt'), 'utf8')).toBe('old report\n');
  const one = await runCli(['status', '--socket', h.socketPath, join(h.mirror, 'Archive', 'old.txt')]);
  expect(one.stdout).toMatch(/old\.txt: excluded\n {2}excluded by the config \(folders\[\]\.exclude\) since \S+ \(it was synced before\); the local copy stays where it is, unsynced/);

  await rm(join(h.mirror, 'Archive'), { recursive: true });
  await setExclude(h.configFile, []);
  run.child.kill('SIGHUP');
  await waitFor(async () => (await readFile(join(harness.mirror, 'Archive', 'old.txt'), 'utf8').catch(() => null)) === 'old report\n', {
    timeoutMs: 30_000,
    what: 'Archive to come back from Box',
  });
  const after = await waitFor(
    async () => {
      const s = await harness.status().catch(() => null);
      return s !== null && s.engine.phase === 'idle' ? s : null;
    },
    { timeoutMs: 30_000, what: 'the daemon to be idle' },
  );
  expect(after.engine.unsynced).toEqual([]);
  expect(h.srv.control.requests().filter((r) => r.method === 'DELETE')).toEqual([]);
  expect(h.web.getItem('folder', archive.id)?.['item_status']).toBe('active');
  expect(run.output()).not.toMatch(/remote-trash/);
});
