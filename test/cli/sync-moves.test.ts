/**
 * Folder renames are one operation, not a re-transfer (SYNC-LESSONS #7):
 * - a remote folder rename with 1,000 files inside is one local rename and zero downloads;
 * - a local folder rename is one Box move (a single PUT on the folder) and zero uploads;
 * - a remote folder move into another folder is one local rename too.
 */
import { rename } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentRequests, explain, exists, listTree, readText, startSyncEnv, summaryLine, writeRequests, type SyncEnv } from './sync-harness.js';

const FILES = 1000;
let e: SyncEnv & { remoteRootId: string };
let bigId: string;
let smallId: string;

beforeAll(async () => {
  e = await startSyncEnv();
  bigId = e.web.createFolder(e.remoteRootId, 'Big').id;
  for (let i = 0; i < FILES; i++) e.web.uploadFile(bigId, `f${String(i).padStart(4, '0')}.txt`, `file ${i}\n`);
  smallId = e.web.createFolder(e.remoteRootId, 'Local').id;
  const inner = e.web.createFolder(smallId, 'Inner');
  for (let i = 0; i < 20; i++) e.web.uploadFile(inner.id, `g${i}.txt`, `g ${i}\n`);
  const r = await e.sync([], { timeoutMs: 180_000 });
  expect(r.code, explain(r)).toBe(0);
  expect((await listTree(join(e.mirror, 'Big'))).length).toBe(FILES);
}, 240_000);
afterAll(async () => {
  await e.close();
});

describe('folder renames', () => {
  it('a remote folder rename with 1,000 files inside: one local rename, zero downloads', async () => {
    e.web.rename('folder', bigId, 'Big renamed');
    e.srv.control.clearRequests();
    const r = await e.sync();
    expect(r.code, explain(r)).toBe(0);
    expect(contentRequests(e.srv).downloads).toEqual([]);
    expect(contentRequests(e.srv).uploads).toEqual([]);
    expect(summaryLine(r)).toMatch(/0 downloaded \(0 B\), 0 uploaded \(0 B\), 1 moved locally/);
    expect(await exists(join(e.mirror, 'Big'))).toBe(false);
    const files = await listTree(join(e.mirror, 'Big renamed'));
    expect(files).toHaveLength(FILES);
    expect(await readText(join(e.mirror, 'Big renamed', 'f0999.txt'))).toBe('file 999\n');
    // One operation line on stderr for the whole folder.
    expect(r.stderr.split('\n').filter((l) => /^local-move\s/.test(l))).toHaveLength(1);
  });

  it('a local folder rename: one Box move, zero uploads', async () => {
    e.srv.control.clearRequests();
    await rename(join(e.mirror, 'Local'), join(e.mirror, 'Local renamed'));
    const r = await e.sync();
    expect(r.code, explain(r)).toBe(0);
    expect(contentRequests(e.srv)).toEqual({ downloads: [], uploads: [] });
    const writes = writeRequests(e.srv);
    expect(writes.map((w) => `${w.method} ${w.path.replace(/^.*\/folders\//, '/folders/')}`)).toEqual([`PUT /folders/${smallId}`]);
    expect(e.web.findByPath('/Mirror/Local renamed')?.id).toBe(smallId);
    expect(e.web.listFolder(e.web.findByPath('/Mirror/Local renamed/Inner')!.id)).toHaveLength(20);
  });

  it('a remote folder move into another folder: one local rename, zero downloads', async () => {
    const target = e.web.createFolder(e.remoteRootId, 'Archive');
    const first = await e.sync();
    expect(first.code, explain(first)).toBe(0);
    e.web.move('folder', bigId, target.id);
    e.srv.control.clearRequests();
    const r = await e.sync();
    expect(r.code, explain(r)).toBe(0);
    expect(contentRequests(e.srv)).toEqual({ downloads: [], uploads: [] });
    expect(r.stderr.split('\n').filter((l) => /^local-move\s/.test(l))).toHaveLength(1);
    expect((await listTree(join(e.mirror, 'Archive', 'Big renamed'))).length).toBe(FILES);
    expect(await exists(join(e.mirror, 'Big renamed'))).toBe(false);
  });
});
