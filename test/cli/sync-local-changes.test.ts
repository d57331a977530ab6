/**
 * Local changes reach Box through `sync --once`: new files and folders, edits, deletes (to the Box trash, never a
 * permanent delete), and renames/moves (one Box move, no upload).
 */
import { rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentRequests, startSyncEnv, writeRequests, writeText, type SyncEnv } from './sync-harness.js';

let e: SyncEnv & { remoteRootId: string };
beforeAll(async () => {
  e = await startSyncEnv();
  e.web.uploadFile(e.remoteRootId, 'edit-me.txt', 'v1');
  e.web.uploadFile(e.remoteRootId, 'delete-me.txt', 'bye');
  e.web.uploadFile(e.remoteRootId, 'rename-me.txt', 'same bytes');
  const f = e.web.createFolder(e.remoteRootId, 'Folder');
  e.web.uploadFile(f.id, 'inside.txt', 'inside');
  await e.syncOk();
});
afterAll(async () => {
  await e.close();
});

describe('local changes reach Box', () => {
  it('a new file in a new folder', async () => {
    await writeText(join(e.mirror, 'New', 'Deeper', 'n.txt'), 'new!');
    await e.syncOk();
    const found = e.web.findByPath('/Mirror/New/Deeper/n.txt');
    expect(found?.type).toBe('file');
    expect(e.web.readFile(found!.id).toString()).toBe('new!');
  });

  it('an edit becomes a new version of the same Box file', async () => {
    const before = e.web.findByPath('/Mirror/edit-me.txt')!;
    await writeFile(join(e.mirror, 'edit-me.txt'), 'v2, longer');
    await e.syncOk();
    const after = e.web.findByPath('/Mirror/edit-me.txt')!;
    expect(after.id).toBe(before.id);
    expect(e.web.readFile(after.id).toString()).toBe('v2, longer');
  });

  it('a delete moves the Box file to the trash, from where it can be restored', async () => {
    const item = e.web.findByPath('/Mirror/delete-me.txt')!;
    await rm(join(e.mirror, 'delete-me.txt'));
    await e.syncOk();
    expect(e.web.findByPath('/Mirror/delete-me.txt')).toBeNull();
    expect(e.web.getItem('file', item.id)?.item_status).toBe('trashed');
    e.web.restore('file', item.id);
    expect(e.web.readFile(item.id).toString()).toBe('bye');
    // Restored on the web: the next run brings it back locally.
    await e.syncOk();
  });

  it('a rename into another folder is one Box move of the same id, without an upload', async () => {
    const item = e.web.findByPath('/Mirror/rename-me.txt')!;
    e.srv.control.clearRequests();
    await rename(join(e.mirror, 'rename-me.txt'), join(e.mirror, 'Folder', 'renamed.txt'));
    await e.syncOk();
    expect(e.web.findByPath('/Mirror/Folder/renamed.txt')?.id).toBe(item.id);
    expect(e.web.findByPath('/Mirror/rename-me.txt')).toBeNull();
    expect(contentRequests(e.srv).uploads).toEqual([]);
    expect(writeRequests(e.srv).map((r) => r.method)).toEqual(['PUT']);
  });

  it('a deleted folder goes to the Box trash as one item', async () => {
    const folder = e.web.findByPath('/Mirror/New')!;
    e.srv.control.clearRequests();
    await rm(join(e.mirror, 'New'), { recursive: true });
    await e.syncOk();
    expect(e.web.getItem('folder', folder.id)?.item_status).toBe('trashed');
    expect(writeRequests(e.srv).filter((r) => r.method === 'DELETE')).toHaveLength(1);
  });
});
