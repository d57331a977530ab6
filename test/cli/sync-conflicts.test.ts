/**
 * Conflicts through `sync --once`: nothing is ever lost.
 * - both sides changed with different content: the remote version keeps the name, the local one becomes a
 *   parseable conflict copy (uploaded too), and a second run does not loop;
 * - both changed to the same content: not a conflict;
 * - edited locally, trashed remotely: the Box item is restored (same id) and gets the edit as a new version;
 * - edited remotely, deleted locally: downloaded again;
 * - a type change (file became a folder) and a case-only rename.
 */
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exists, readText, startSyncEnv, summaryLine, type SyncEnv } from './sync-harness.js';

let e: SyncEnv & { remoteRootId: string };
const ids: Record<string, string> = {};
beforeAll(async () => {
  e = await startSyncEnv();
  for (const n of ['both', 'same', 'edit-trash', 'edit-delete', 'becomes-folder', 'case']) {
    ids[n] = e.web.uploadFile(e.remoteRootId, `${n}.txt`, `${n} base\n`).id;
  }
  await e.syncOk();
});
afterAll(async () => {
  await e.close();
});

async function syncOk(): Promise<string> {
  return summaryLine(await e.syncOk());
}

describe('conflicts keep both', () => {
  it('both changed, contents differ: remote keeps the name, local becomes a conflict copy on both sides; no loop', async () => {
    e.web.uploadVersion(ids.both!, 'remote edit\n');
    await writeFile(join(e.mirror, 'both.txt'), 'local edit, different\n');
    const line = await syncOk();
    expect(line).toMatch(/1 conflict\b/);
    expect(await readText(join(e.mirror, 'both.txt'))).toBe('remote edit\n');
    const copies = (await readdir(e.mirror)).filter((n) => n.startsWith('both') && n !== 'both.txt');
    expect(copies).toHaveLength(1);
    expect(copies[0]).toMatch(/conflict/i);
    expect(copies[0]).toMatch(/\.txt$/);
    expect(await readText(join(e.mirror, copies[0]!))).toBe('local edit, different\n');
    const remoteCopy = e.web.findByPath(`/Mirror/${copies[0]}`);
    expect(remoteCopy?.type).toBe('file');
    expect(e.web.readFile(remoteCopy!.id).toString()).toBe('local edit, different\n');

    const again = await syncOk();
    expect(again).toMatch(/0 conflicts/);
    expect((await readdir(e.mirror)).filter((n) => n.startsWith('both'))).toHaveLength(2);
  });

  it('both changed to the same bytes: no conflict copy', async () => {
    e.web.uploadVersion(ids.same!, 'converged\n');
    await writeFile(join(e.mirror, 'same.txt'), 'converged\n');
    const line = await syncOk();
    expect(line).toMatch(/0 conflicts/);
    expect((await readdir(e.mirror)).filter((n) => n.startsWith('same'))).toEqual(['same.txt']);
  });
});

describe('edit beats delete', () => {
  it('edited locally, trashed remotely: the same Box id is restored and carries the edit', async () => {
    e.web.trash('file', ids['edit-trash']!);
    await writeFile(join(e.mirror, 'edit-trash.txt'), 'local edit wins\n');
    await syncOk();
    const found = e.web.findByPath('/Mirror/edit-trash.txt');
    expect(found?.id).toBe(ids['edit-trash']);
    expect(e.web.getItem('file', ids['edit-trash']!)?.item_status).toBe('active');
    expect(e.web.readFile(ids['edit-trash']!).toString()).toBe('local edit wins\n');
  });

  it('edited remotely, deleted locally: downloaded again', async () => {
    e.web.uploadVersion(ids['edit-delete']!, 'remote edit wins\n');
    await rm(join(e.mirror, 'edit-delete.txt'));
    await syncOk();
    expect(await readText(join(e.mirror, 'edit-delete.txt'))).toBe('remote edit wins\n');
    expect(e.web.findByPath('/Mirror/edit-delete.txt')?.id).toBe(ids['edit-delete']);
  });
});

describe('type changes and case-only renames', () => {
  it('a local file replaced by a folder of the same name: the folder syncs and the file content is not lost', async () => {
    await rm(join(e.mirror, 'becomes-folder.txt'));
    await mkdir(join(e.mirror, 'becomes-folder.txt'));
    await writeFile(join(e.mirror, 'becomes-folder.txt', 'child.txt'), 'child\n');
    await syncOk();
    const item = e.web.findByPath('/Mirror/becomes-folder.txt');
    expect(item?.type).toBe('folder');
    expect(e.web.findByPath('/Mirror/becomes-folder.txt/child.txt')?.type).toBe('file');
    // The old file version is in the Box trash, not destroyed.
    expect(e.web.getItem('file', ids['becomes-folder']!)?.item_status).toBe('trashed');
  });

  it('a local case-only rename renames the same Box item', async () => {
    await rename(join(e.mirror, 'case.txt'), join(e.mirror, 'CASE.txt'));
    await syncOk();
    expect(e.web.getItem('file', ids.case!)?.name).toBe('CASE.txt');
    expect(await exists(join(e.mirror, 'CASE.txt'))).toBe(true);
    expect((await readdir(e.mirror)).filter((n) => n.toLowerCase() === 'case.txt')).toEqual(['CASE.txt']);
  });

  it('a remote case-only rename renames the local file', async () => {
    e.web.rename('file', ids.case!, 'Case.txt');
    await syncOk();
    expect((await readdir(e.mirror)).filter((n) => n.toLowerCase() === 'case.txt')).toEqual(['Case.txt']);
    expect(await readText(join(e.mirror, 'Case.txt'))).toBe('case base\n');
  });
});
