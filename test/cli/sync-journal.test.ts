/**
 * A corrupt journal: `sync --once` sets the damaged file aside, rebuilds from a fresh scan and listing, exits 0,
 * and no user data is lost or duplicated on either side.
 */
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentRequests, explain, listTree, readText, startSyncEnv, writeText, type SyncEnv } from './sync-harness.js';

let e: SyncEnv & { remoteRootId: string };
beforeAll(async () => {
  e = await startSyncEnv();
  e.web.uploadFile(e.remoteRootId, 'remote.txt', 'from box\n');
  await writeText(join(e.mirror, 'local.txt'), 'from disk\n');
  const r = await e.sync();
  expect(r.code, explain(r)).toBe(0);
});
afterAll(async () => {
  await e.close();
});

describe('a corrupt journal', () => {
  it('is set aside and rebuilt; nothing is lost, duplicated or transferred again', async () => {
    // Changes made while the journal is broken must survive the rebuild too.
    await writeText(join(e.mirror, 'while-broken.txt'), 'new while broken\n');
    e.web.uploadFile(e.remoteRootId, 'remote-while-broken.txt', 'remote while broken\n');
    await writeFile(join(e.stateDir, 'journal.db'), Buffer.from('this is not a database '.repeat(500)));
    e.srv.control.clearRequests();

    const r = await e.sync();
    expect(r.code, explain(r)).toBe(0);
    expect(r.stderr).toMatch(/journal/i);
    expect((await readdir(e.stateDir)).some((n) => n.startsWith('journal.db.corrupt-'))).toBe(true);

    expect(await listTree(e.mirror)).toEqual(['local.txt', 'remote-while-broken.txt', 'remote.txt', 'while-broken.txt']);
    expect(await readText(join(e.mirror, 'remote.txt'))).toBe('from box\n');
    expect(await readText(join(e.mirror, 'local.txt'))).toBe('from disk\n');
    expect(e.web.listFolder(e.remoteRootId).map((i) => i.name).sort()).toEqual(['local.txt', 'remote-while-broken.txt', 'remote.txt', 'while-broken.txt']);
    // Files equal on both sides are linked by SHA-1, not transferred again: only the two new files move.
    const { downloads, uploads } = contentRequests(e.srv);
    expect(downloads).toHaveLength(1);
    expect(uploads).toHaveLength(1);

    const again = await e.sync();
    expect(again.code, explain(again)).toBe(0);
  });
});
