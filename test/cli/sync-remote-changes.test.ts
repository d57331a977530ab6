/**
 * Remote ("web") changes reach the disk through `sync --once`: new, modified, renamed, moved, trashed (into the
 * local trash in the state dir, never unlinked) and restored.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exists, listTree, readText, startSyncEnv, type SyncEnv } from './sync-harness.js';

let e: SyncEnv & { remoteRootId: string };
const ids: Record<string, string> = {};
beforeAll(async () => {
  e = await startSyncEnv();
  ids.a = e.web.uploadFile(e.remoteRootId, 'a.txt', 'a1').id;
  ids.b = e.web.uploadFile(e.remoteRootId, 'b.txt', 'b').id;
  ids.c = e.web.uploadFile(e.remoteRootId, 'c.txt', 'c').id;
  ids.gone = e.web.uploadFile(e.remoteRootId, 'gone.txt', 'precious').id;
  ids.sub = e.web.createFolder(e.remoteRootId, 'Sub').id;
  await e.syncOk();
  expect(await listTree(e.mirror)).toEqual(['Sub/', 'a.txt', 'b.txt', 'c.txt', 'gone.txt']);
});
afterAll(async () => {
  await e.close();
});

/** Every file name anywhere under the state dir's trash. */
async function trashNames(dir: string): Promise<string[]> {
  if (!(await exists(dir))) return [];
  const out: string[] = [];
  for (const d of await readdir(dir, { withFileTypes: true, recursive: true })) if (d.isFile()) out.push(d.name);
  return out;
}

describe('remote changes reach the disk', () => {
  it('new, modified, renamed and moved files', async () => {
    e.web.uploadFile(ids.sub!, 'new.txt', 'fresh');
    e.web.uploadVersion(ids.a!, 'a2 is longer');
    e.web.rename('file', ids.b!, 'b-renamed.txt');
    e.web.move('file', ids.c!, ids.sub!);
    await e.syncOk();
    expect(await listTree(e.mirror)).toEqual(['Sub/', 'Sub/c.txt', 'Sub/new.txt', 'a.txt', 'b-renamed.txt', 'gone.txt']);
    expect(await readText(join(e.mirror, 'a.txt'))).toBe('a2 is longer');
    expect(await readText(join(e.mirror, 'Sub', 'new.txt'))).toBe('fresh');
  });

  it('a trashed file leaves the mirror into the local trash, and comes back when restored', async () => {
    e.web.trash('file', ids.gone!);
    await e.syncOk();
    expect(await exists(join(e.mirror, 'gone.txt'))).toBe(false);
    expect(await trashNames(join(e.stateDir, 'trash'))).toContainEqual(expect.stringContaining('gone.txt'));

    e.web.restore('file', ids.gone!);
    await e.syncOk();
    expect(await readText(join(e.mirror, 'gone.txt'))).toBe('precious');
  });

  it('a trashed folder leaves the mirror with everything in it', async () => {
    e.web.trash('folder', ids.sub!);
    await e.syncOk();
    expect(await exists(join(e.mirror, 'Sub'))).toBe(false);
    const names = await trashNames(join(e.stateDir, 'trash'));
    expect(names.some((n) => n.includes('new.txt'))).toBe(true);
    expect(names.some((n) => n.includes('c.txt'))).toBe(true);
  });
});
