/**
 * Edit beats delete, killed half-way: a folder trashed on Box while a new file was made in it locally is restored
 * from the Box trash (with the files it held). A `sync --once` killed after the restore and before the restored
 * folder was listed must not leave those files only on Box: the next run lists the folder and downloads them.
 */
import { join } from 'node:path';
import { mkdir } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../support/closed-after-each.js';
import { spawnCli } from '../support/cli.js';
import { waitFor } from '../support/wait.js';
import { explain, listTree, readText, startSyncEnv, writeText } from './sync-harness.js';

const syncEnv = closedAfterEach(startSyncEnv);

describe('a folder restored from the Box trash, then kill -9', () => {
  it('the files that came back with the folder are downloaded by the next run', async () => {
    const e = await syncEnv();
    const misc = e.web.createFolder(e.remoteRootId, 'misc');
    const docs = e.web.createFolder(misc.id, 'Docs');
    for (const n of ['a.txt', 'b.txt', 'c.txt']) e.web.uploadFile(docs.id, n, `${n} content\n`);
    await e.syncOk();
    expect(await readText(join(e.mirror, 'misc', 'Docs', 'b.txt'))).toBe('b.txt content\n');

    // Box: the folder goes to the trash. Here: a new file is made in it.
    e.web.trash('folder', docs.id);
    await writeText(join(e.mirror, 'misc', 'Docs', 'new.txt'), 'made here\n');

    // The listing of the restored folder hangs; the run is killed once the restore was answered.
    e.srv.control.failNext({ method: 'GET', path: new RegExp(`^/2\\.0/folders/${docs.id}(/items)?$`), delayMs: 15_000, count: 5 });
    e.srv.control.clearRequests();
    const child = spawnCli(['sync', '--once', '--config', e.configFile], { env: { BOXSYNC_LOG_LEVEL: 'warn' } });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
    try {
      await waitFor(() => e!.srv.control.requests().some((r) => r.method === 'POST' && r.path.endsWith(`/folders/${docs.id}`) && r.status < 300), {
        timeoutMs: 60_000,
        intervalMs: 5,
        what: `the restore of Box folder ${docs.id}`,
      });
    } finally {
      child.kill('SIGKILL');
      await closed;
    }
    e.srv.control.clearFaults();
    expect(e.web.listFolder(docs.id).map((x) => x.name).sort()).toEqual(['a.txt', 'b.txt', 'c.txt']);

    const r = await e.sync();
    expect(r.code, explain(r) + stderr).toBe(0);
    const again = await e.sync();
    expect(again.code, explain(again)).toBe(0);
    const tree = await listTree(join(e.mirror, 'misc'));
    expect(tree).toEqual(['Docs/', 'Docs/a.txt', 'Docs/b.txt', 'Docs/c.txt', 'Docs/new.txt']);
    expect(await readText(join(e.mirror, 'misc', 'Docs', 'c.txt'))).toBe('c.txt content\n');
  });
});
