/**
 * The daemon marks its root folders sync_state=synced on Box (to consume the `sync` stream), and a root that
 * leaves the configuration (here through a SIGHUP reload) is marked not_synced again.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { waitFor } from '../support/wait.js';
import { createHarness, type Harness } from './daemon-harness.js';

let h: Harness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

async function syncState(harness: Harness, folderId: string): Promise<string | undefined> {
  const res = await fetch(`${harness.srv.apiUrl}/folders/${folderId}?fields=sync_state`, { headers: { authorization: 'Bearer T' } });
  const body = (await res.json()) as { sync_state?: string };
  return body.sync_state;
}

it('a root removed from the configuration is marked not_synced on Box, the others stay synced', async () => {
  h = await createHarness();
  const harness = h;
  const second = harness.web.createFolder('0', 'Second');
  const secondLocal = join(harness.dir, 'Second');
  await mkdir(secondLocal);
  const config = JSON.parse(await readFile(harness.configFile, 'utf8')) as { folders: { remoteId: string; localPath: string }[] };
  await writeFile(harness.configFile, JSON.stringify({ ...config, folders: [...config.folders, { remoteId: second.id, localPath: secondLocal }] }));

  const run = await harness.start();
  await waitFor(async () => (await syncState(harness, harness.rootId)) === 'synced' && (await syncState(harness, second.id)) === 'synced', {
    timeoutMs: 30_000,
    what: 'both root folders marked synced',
  });

  await writeFile(harness.configFile, JSON.stringify(config));
  run.child.kill('SIGHUP');
  await waitFor(async () => (await syncState(harness, second.id)) === 'not_synced', { timeoutMs: 30_000, what: 'the removed root marked not_synced' });
  expect(await syncState(harness, harness.rootId)).toBe('synced');
  // The log line reaches us through the child's stdout, possibly after Box already shows the change.
  await waitFor(() => /left the configuration: marked sync_state=not_synced/.test(run.output()), { timeoutMs: 10_000, what: 'the unmark in the log' });
});
