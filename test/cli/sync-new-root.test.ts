/**
 * A folder pair added to the configuration after earlier runs: its Box content predates the stored event
 * position, so no event will replay it. The next `sync --once` must list that folder in full and bring it down.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { explain, readText, startSyncEnv, type SyncEnv } from './sync-harness.js';

let e: (SyncEnv & { remoteRootId: string }) | undefined;
afterEach(async () => {
  await e?.close();
  e = undefined;
});

it('a newly configured root gets its existing Box content on the next run', async () => {
  e = await startSyncEnv();
  const env = e;
  env.web.uploadFile(env.remoteRootId, 'first.txt', 'in the first root');
  const older = env.web.createFolder('0', 'Older');
  env.web.uploadFile(older.id, 'old.txt', 'there before the cursor');
  expect((await env.sync()).code).toBe(0);
  expect(await readText(join(env.mirror, 'first.txt'))).toBe('in the first root');

  const olderLocal = join(env.mirror, '..', 'older');
  await mkdir(olderLocal);
  const config = JSON.parse(await readFile(env.configFile, 'utf8')) as { folders: { remoteId: string; localPath: string }[] };
  await writeFile(env.configFile, JSON.stringify({ ...config, folders: [...config.folders, { remoteId: older.id, localPath: olderLocal }] }), { mode: 0o600 });

  const again = await env.sync();
  expect(again.code, explain(again)).toBe(0);
  expect(await readText(join(olderLocal, 'old.txt'))).toBe('there before the cursor');
});
