/**
 * The engine against the real Box adapter over HTTP to box-server on port 0: the event stream, If-Match, the
 * trash and restore all go through the wire. Remote changes are made by a second client of the same account.
 */
import { rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectConverged } from './support/harness.js';
import { closedAfterEach } from '../support/closed-after-each.js';
import { makeBoxHarness } from './support/box-harness.js';

const harness = closedAfterEach(() => makeBoxHarness());

describe('engine over HTTP (box-server)', () => {
  it('first run links equal files by SHA-1 without transferring anything', async () => {
    const h = await harness();
    const docs = h.actor.createFolder(h.topId, 'docs');
    h.actor.uploadFile(docs.id, 'a.txt', 'alpha');
    h.actor.uploadFile(h.topId, 'b.txt', 'beta');
    await h.write('docs/a.txt', 'alpha');
    await h.write('b.txt', 'beta');
    const t0 = Date.now();
    const s = expectConverged(await h.run());
    expect(h.transfers(t0)).toMatchObject({ downloads: 0, uploads: 0 });
    expect(s.ops.link).toBeGreaterThanOrEqual(2);
  });

  it('a downloaded file takes the content_modified_at of the version it was planned for as its mtime', async () => {
    const h = await harness();
    h.actor.uploadFile(h.topId, 'old.txt', 'written long ago', { contentModifiedAt: '2019-04-05T06:07:08Z' });
    const sub = h.actor.createFolder(h.topId, 'sub');
    h.actor.uploadFile(sub.id, 'new.txt', 'written later', { contentModifiedAt: '2024-11-12T13:14:15-08:00' });
    expectConverged(await h.run());
    expect((await stat(join(h.localPath, 'old.txt'))).mtimeMs).toBe(Date.parse('2019-04-05T06:07:08Z'));
    expect((await stat(join(h.localPath, 'sub/new.txt'))).mtimeMs).toBe(Date.parse('2024-11-12T21:14:15Z'));
  });

  it('downloads whose commit a crash lost are found in place next run and linked by SHA-1, not downloaded again', async () => {
    const h = await harness();
    const docs = h.actor.createFolder(h.topId, 'docs');
    for (let i = 0; i < 20; i++) h.actor.uploadFile(docs.id, `f${i}.txt`, `file ${i}`);
    expectConverged(await h.run());
    // The state a crash between putting the files in place and their group commit leaves: the files on disk, the
    // Box rows of the listing, no local or synced rows.
    h.journal.transaction(() => {
      h.journal.deleteLocalSubtree(h.root.id, 'docs' as never);
      h.journal.deleteSyncedSubtree(h.root.id, 'docs' as never);
    });
    await h.restart();
    const t0 = Date.now();
    const s = expectConverged(await h.run());
    expect(h.transfers(t0)).toMatchObject({ downloads: 0, uploads: 0 });
    expect(s.ops.link).toBeGreaterThanOrEqual(20);
    expect(s.conflicts).toBe(0);
    expect((await h.list('docs')).length).toBe(20);
  });

  it('a remote folder rename with 400 files is one local rename and zero downloads', async () => {
    const h = await harness();
    const big = h.actor.createFolder(h.topId, 'big');
    for (let i = 0; i < 400; i++) h.actor.uploadFile(big.id, `f${i}.txt`, `file ${i}`);
    const first = expectConverged(await h.run());
    expect(first.ops.download).toBe(400);
    const ino = (await stat(join(h.localPath, 'big/f123.txt'))).ino;
    h.actor.rename('folder', big.id, 'renamed');
    await h.restart();
    const t0 = Date.now();
    const s = expectConverged(await h.run());
    expect(s.ops['local-move']).toBe(1);
    expect(h.transfers(t0).downloads).toBe(0);
    expect(await h.list()).toEqual(['renamed']);
    expect((await stat(join(h.localPath, 'renamed/f123.txt'))).ino).toBe(ino);
  });

  it('a local folder rename is one Box move and zero uploads', async () => {
    const h = await harness();
    for (let i = 0; i < 30; i++) await h.write(`photos/p${i}.jpg`, `pixels ${i}`);
    expectConverged(await h.run());
    const id = h.actor.findByPath('/Sync/photos')!.id;
    await rename(join(h.localPath, 'photos'), join(h.localPath, 'pictures'));
    await h.restart();
    const t0 = Date.now();
    expectConverged(await h.run());
    expect(h.transfers(t0)).toMatchObject({ uploads: 0, moves: 1 });
    expect(h.actor.findByPath('/Sync/pictures')?.id).toBe(id);
  });

  it('edited locally and trashed on Box: the same Box id comes back with the edit as a new version', async () => {
    const h = await harness();
    const f = h.actor.uploadFile(h.topId, 'plan.txt', 'draft');
    expectConverged(await h.run());
    h.actor.trash('file', f.id);
    await h.write('plan.txt', 'final version');
    await h.restart();
    const s = expectConverged(await h.run());
    expect(s.ops['remote-restore']).toBe(1);
    expect(h.actor.findByPath('/Sync/plan.txt')?.id).toBe(f.id);
    expect(h.actor.readFile(f.id).toString()).toBe('final version');
  });

  it('a 412 from If-Match re-plans: the racing Box edit is kept and the local edit becomes a conflict copy', async () => {
    const h = await harness();
    const f = h.actor.uploadFile(h.topId, 'doc.txt', 'v1');
    expectConverged(await h.run());
    await h.write('doc.txt', 'local edit');
    const store = h.adapter.store;
    const original = store.uploadVersion.bind(store);
    let raced = false;
    store.uploadVersion = async (req) => {
      if (!raced) {
        raced = true;
        h.actor.uploadVersion(f.id, 'remote edit that raced');
      }
      return original(req);
    };
    const t0 = Date.now();
    const s = expectConverged(await h.run());
    expect(raced).toBe(true);
    expect(h.srv.control.requests().some((r) => r.atMs >= t0 && r.status === 412)).toBe(true);
    expect(h.actor.readFile(f.id).toString()).toBe('remote edit that raced');
    expect(await h.read('doc.txt')).toBe('remote edit that raced');
    expect(s.conflicts).toBe(1);
    const copy = h.actor.listFolder(h.topId).find((e) => e.name.startsWith('doc (conflicted copy'));
    expect(copy).toBeDefined();
    expect(h.actor.readFile(copy!.id).toString()).toBe('local edit');
  });

  it('a file trashed on Box leaves the mirror into the local trash, never unlinked', async () => {
    const h = await harness();
    const f = h.actor.uploadFile(h.topId, 'old.txt', 'old content');
    h.actor.uploadFile(h.topId, 'stay.txt', 'stay');
    expectConverged(await h.run());
    h.actor.trash('file', f.id);
    await h.restart();
    const s = expectConverged(await h.run());
    expect(s.ops['local-trash']).toBe(1);
    expect(await h.list()).toEqual(['stay.txt']);
    const trashDir = join(h.localPath, '..', 'state', 'trash');
    const { readdir, readFile } = await import('node:fs/promises');
    const entries = await readdir(trashDir, { recursive: true });
    const kept = entries.filter((e) => String(e).endsWith('old.txt'));
    expect(kept).toHaveLength(1);
    expect(await readFile(join(trashDir, String(kept[0])), 'utf8')).toBe('old content');
  });

  it('a Box web link becomes a .url file, and a new target rewrites it', async () => {
    const h = await harness();
    const link = h.actor.createWebLink(h.topId, 'Handbook', 'https://example.com/v1');
    expectConverged(await h.run());
    const name = (await h.list()).find((n) => n.startsWith('Handbook'));
    expect(name).toBeDefined();
    expect(await h.read(name!)).toContain('URL=https://example.com/v1');
    h.actor.updateWebLink(link.id, 'https://example.com/v2');
    await h.restart();
    const t0 = Date.now();
    expectConverged(await h.run());
    expect(await h.read(name!)).toContain('URL=https://example.com/v2');
    expect(h.transfers(t0).uploads).toBe(0);
  });
});
