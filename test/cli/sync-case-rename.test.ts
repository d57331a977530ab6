/**
 * Issue 10 point 5: a case-only rename and a move of its folder on one side, an edit on the other, in either
 * order and across passes, end with the rename and the edit both applied, never with a delete or a clash that
 * boxsync made itself.
 */
import { rename } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { listTree, readText, startSyncEnv, writeText, type SyncEnv } from './sync-harness.js';

const envs: SyncEnv[] = [];
afterEach(async () => {
  for (const e of envs.splice(0)) await e.close();
});

describe('case-only rename + parent move locally, edit on Box', () => {
  it.each([
    ['the edit reaches Box before the local rename is seen', 'edit-first'],
    ['the local rename is synced before the edit', 'rename-first'],
    ['both happen between two passes', 'together'],
  ])('%s: rename and edit both applied', async (_label, order) => {
    const env = await startSyncEnv();
    envs.push(env);
    const dir = env.web.createFolder(env.remoteRootId, 'dir');
    env.web.createFolder(env.remoteRootId, 'other');
    const f = env.web.uploadFile(dir.id, 'v1.2.bin', 'version one');
    await env.syncOk();
    const localRename = async (): Promise<void> => {
      await rename(join(env.mirror, 'dir', 'v1.2.bin'), join(env.mirror, 'dir', 'V1.2.BIN'));
      await rename(join(env.mirror, 'dir'), join(env.mirror, 'other', 'dir'));
    };
    if (order === 'edit-first') {
      env.web.uploadVersion(f.id, 'version two from the web');
      await env.syncOk();
      await localRename();
    } else if (order === 'rename-first') {
      await localRename();
      await env.syncOk();
      env.web.uploadVersion(f.id, 'version two from the web');
    } else {
      env.web.uploadVersion(f.id, 'version two from the web');
      await localRename();
    }
    await env.syncOk();
    await env.syncOk();
    expect(await listTree(env.mirror)).toEqual(['other/', 'other/dir/', 'other/dir/V1.2.BIN']);
    expect(await readText(join(env.mirror, 'other', 'dir', 'V1.2.BIN'))).toBe('version two from the web');
    const item = env.web.getItem('file', f.id)!;
    expect(item.name).toBe('V1.2.BIN');
    expect(item.item_status).toBe('active');
    expect(env.web.readFile(f.id).toString()).toBe('version two from the web');
    void writeText;
  });
});
