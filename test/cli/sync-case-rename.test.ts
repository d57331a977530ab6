/**
 * Issue 10 point 5: a case-only rename and a move of its folder on one side, an edit on the other, in either
 * order and across passes, end with the rename and the edit both applied, never with a delete or a clash that
 * boxsync made itself.
 */
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnCli } from '../support/cli.js';
import { waitFor } from '../support/wait.js';
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

describe('a name taken by case while its download runs (simulation world 1002)', () => {
  it('never writes the Box file beside a new local folder that differs only in case; both end on Box', async () => {
    const env = await startSyncEnv();
    envs.push(env);
    const f = env.web.uploadFile(env.remoteRootId, 'b.txt', 'version one');
    await env.syncOk();
    env.web.uploadVersion(f.id, 'version two from the web');
    await rm(join(env.mirror, 'b.txt'));
    // The download of the Box edit is held for 3 s; meanwhile the user makes a folder "B.txt" here.
    env.srv.control.failNext({ method: 'GET', path: /^\/dl\//, count: 1, delayMs: 3_000 });
    const child = spawnCli(['sync', '--once', '--config', env.configFile], { env: { BOXSYNC_LOG_LEVEL: 'warn' } });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await waitFor(() => env.srv.control.requests().some((q) => q.path === `/2.0/files/${f.id}/content`), { what: 'the download to start', timeoutMs: 30_000 });
    await mkdir(join(env.mirror, 'B.txt'));
    await writeText(join(env.mirror, 'B.txt', 'inner.txt'), 'made here');
    await exited;
    await env.sync();
    await env.syncOk();
    const names = await readdir(env.mirror);
    // No two names that Box would take for one: the Box edit and the new folder both kept, under distinct names.
    const folded = names.filter((n) => !n.startsWith('.')).map((n) => n.toLowerCase());
    expect(new Set(folded).size).toBe(folded.length);
    expect(names).toContain('b.txt');
    expect(await readText(join(env.mirror, 'b.txt'))).toBe('version two from the web');
    const folder = names.find((n) => n !== 'b.txt' && !n.startsWith('.'))!;
    expect(await readText(join(env.mirror, folder, 'inner.txt'))).toBe('made here');
    expect(env.web.findByPath(`/Mirror/${folder}/inner.txt`)).not.toBeNull();
    expect(env.web.getItem('file', f.id)!.name).toBe('b.txt');
  });
});
