/**
 * The RemoteStore contract suite (src/ports/remote-store.ts), run against every implementation: the in-memory
 * fake (test/remote/contract-fake.test.ts) and the Box adapter over real HTTP against box-server
 * (test/remote/contract-box.test.ts). Each test works in a fresh folder under `rootId`, so implementations
 * may share one store across tests.
 */
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isSyncError } from '../../src/core/errors.js';
import type { RemoteEntry, RemoteId } from '../../src/core/model.js';
import type { ListingPage, RemoteStore } from '../../src/ports/remote-store.js';
import { makeTempDir } from './tmp.js';
import { tempFileAt } from './temp-file.js';
import { uploadSource } from './upload-source.js';

export interface ContractSubject {
  readonly store: RemoteStore;
  readonly rootId: RemoteId;
  readonly cleanup: () => Promise<void>;
  /** Entries per listFolder page, when the implementation was configured with one: the suite then checks paging. */
  readonly pageSize?: number;
}

const sha1 = (b: Buffer | string): string => createHash('sha1').update(b).digest('hex');

async function collect(it: AsyncIterable<ListingPage>): Promise<{ pages: number; entries: RemoteEntry[] }> {
  let pages = 0;
  const entries: RemoteEntry[] = [];
  for await (const page of it) {
    pages += 1;
    expect(page.rejected).toEqual([]);
    entries.push(...page.entries);
  }
  return { pages, entries };
}

async function expectSyncError(p: Promise<unknown>, code: string, disposition: string): Promise<Record<string, unknown>> {
  try {
    await p;
  } catch (e) {
    if (!isSyncError(e)) throw new Error(`expected SyncError ${code}, got ${String(e)}`);
    expect({ code: e.code, disposition: e.disposition }).toEqual({ code, disposition });
    return e.details as Record<string, unknown>;
  }
  throw new Error(`expected SyncError ${code}, but the call succeeded`);
}

export function remoteStoreContract(name: string, makeStore: () => Promise<ContractSubject>): void {
  describe(`RemoteStore contract: ${name}`, () => {
    let subject: ContractSubject;
    let tmp: { dir: string; cleanup: () => Promise<void> };
    let n = 0;
    const store = (): RemoteStore => subject.store;
    const fresh = async (): Promise<RemoteId> => (await store().createFolder(subject.rootId, `t${++n}-${Date.now()}`)).id;
    const localFile = async (content: string | Buffer): Promise<string> => {
      const p = join(tmp.dir, `src-${++n}`);
      await writeFile(p, content);
      return p;
    };
    const upload = async (parentId: RemoteId, fileName: string, content: string | Buffer): Promise<RemoteEntry> =>
      store().uploadNew({ parentId, name: fileName, source: await uploadSource(await localFile(content)), modifiedAtMs: 1_700_000_000_000 });

    beforeAll(async () => {
      subject = await makeStore();
      tmp = await makeTempDir('boxsync-contract-');
    });
    afterAll(async () => {
      await tmp?.cleanup();
      await subject?.cleanup();
    });

    it('account() reports a user and size caps', async () => {
      const a = await store().account();
      expect(a.userId).toMatch(/\S/);
      expect(a.maxUploadSizeBytes).toBeGreaterThan(0);
    });

    it('creates a folder and reads it back', async () => {
      const parent = await fresh();
      const f = await store().createFolder(parent, 'Docs');
      expect(f).toMatchObject({ kind: 'folder', name: 'Docs', parentId: parent, status: 'active', sha1: null });
      expect(f.etag).toMatch(/\S/);
      const got = await store().getItem(f.id, 'folder');
      expect(got).toMatchObject({ id: f.id, name: 'Docs', parentId: parent });
    });

    it('lists every child across pages, with nothing Box-shaped', async () => {
      const parent = await fresh();
      const names = Array.from({ length: 7 }, (_, i) => `f${i}.txt`);
      for (const fname of names) await upload(parent, fname, `content ${fname}`);
      await store().createFolder(parent, 'sub');
      const { entries, pages } = await collect(store().listFolder(parent));
      expect(entries.map((e) => e.name).sort()).toEqual([...names, 'sub'].sort());
      if (subject.pageSize !== undefined) expect(pages).toBe(Math.ceil(8 / subject.pageSize));
      for (const e of entries) {
        expect(Object.keys(e).sort()).toEqual(
          ['etag', 'id', 'kind', 'modifiedAtMs', 'name', 'parentId', 'sequenceId', 'sha1', 'sizeBytes', 'status', 'url', 'versionId'],
        );
        expect(e.parentId).toBe(parent);
        expect(typeof e.sequenceId).toBe('string');
      }
      const file = entries.find((e) => e.name === 'f3.txt')!;
      expect(file).toMatchObject({ kind: 'file', sha1: sha1('content f3.txt'), sizeBytes: 'content f3.txt'.length });
      expect(file.versionId).toMatch(/\S/);
    });

    it('lists an empty folder as no entries, and a missing folder as not_found', async () => {
      const parent = await fresh();
      expect((await collect(store().listFolder(parent))).entries).toEqual([]);
      await store().trash(parent, 'folder');
      await expectSyncError(collect(store().listFolder(parent)), 'not_found', 'replan');
    });

    it('getItem answers null for a missing, trashed or differently-kinded item', async () => {
      const parent = await fresh();
      const f = await upload(parent, 'a.txt', 'a');
      expect(await store().getItem(f.id, 'file')).toMatchObject({ id: f.id, etag: f.etag });
      await store().trash(f.id, 'file');
      expect(await store().getItem(f.id, 'file')).toBeNull();
      expect(await store().getItem(parent, 'folder')).not.toBeNull();
      expect(await store().getItem(parent, 'file')).toBeNull();
    });

    it('uploads a new file with its modification time in whole seconds', async () => {
      const parent = await fresh();
      const e = await store().uploadNew({ parentId: parent, name: 'n.bin', source: await uploadSource(await localFile('hello')), modifiedAtMs: 1_700_000_123_456 });
      expect(e).toMatchObject({ kind: 'file', name: 'n.bin', sha1: sha1('hello'), sizeBytes: 5, parentId: parent });
      expect(e.modifiedAtMs).toBe(1_700_000_123_000);
    });

    it('refuses a name already in use, case-insensitively, naming the conflicting item', async () => {
      const parent = await fresh();
      const first = await upload(parent, 'Report.txt', 'one');
      const details = await expectSyncError(upload(parent, 'report.TXT', 'two'), 'item_name_in_use', 'replan');
      expect(details.conflictId).toBe(first.id);
      const folder = await store().createFolder(parent, 'Dir');
      const d2 = await expectSyncError(store().createFolder(parent, 'dir'), 'item_name_in_use', 'replan');
      expect(d2.conflictId).toBe(folder.id);
      await expectSyncError(upload(parent, 'DIR', 'x'), 'item_name_in_use', 'replan');
    });

    it('uploads a new version guarded by ifMatch; a stale etag is precondition_failed (replan)', async () => {
      const parent = await fresh();
      const v1 = await upload(parent, 'doc.txt', 'v1');
      const v2 = await store().uploadVersion({ id: v1.id, ifMatch: v1.etag, name: 'doc.txt', source: await uploadSource(await localFile('v2')), modifiedAtMs: 1_700_000_001_000 });
      expect(v2).toMatchObject({ id: v1.id, sha1: sha1('v2'), sizeBytes: 2 });
      expect(v2.etag).not.toBe(v1.etag);
      expect(v2.versionId).not.toBe(v1.versionId);
      await expectSyncError(
        store().uploadVersion({ id: v1.id, ifMatch: v1.etag, name: 'doc.txt', source: await uploadSource(await localFile('v3')), modifiedAtMs: 1_700_000_002_000 }),
        'precondition_failed',
        'replan',
      );
      const now = await store().getItem(v1.id, 'file');
      expect(now?.sha1).toBe(sha1('v2'));
    });

    it('downloads the bytes and verifies the SHA-1; a wrong expectation is checksum_mismatch', async () => {
      const parent = await fresh();
      const body = Buffer.from('download me '.repeat(100));
      const f = await upload(parent, 'd.txt', body);
      const dest = join(tmp.dir, `dl-${++n}`);
      const res = await store().download({ id: f.id, destFile: await tempFileAt(dest), expectSha1: f.sha1 });
      expect(res).toEqual({ sha1: sha1(body), sizeBytes: body.length });
      expect((await readFile(dest)).equals(body)).toBe(true);
      await expectSyncError(store().download({ id: f.id, destFile: await tempFileAt(join(tmp.dir, `dl-${++n}`)), expectSha1: sha1('other') }), 'checksum_mismatch', 'retry');
    });

    it('downloads an older version by versionId', async () => {
      const parent = await fresh();
      const v1 = await upload(parent, 'h.txt', 'old');
      await store().uploadVersion({ id: v1.id, name: 'h.txt', source: await uploadSource(await localFile('new')), modifiedAtMs: 1_700_000_001_000 });
      const dest = join(tmp.dir, `dl-${++n}`);
      await store().download({ id: v1.id, destFile: await tempFileAt(dest), expectSha1: sha1('old'), versionId: v1.versionId! });
      expect(await readFile(dest, 'utf8')).toBe('old');
    });

    it('renames and moves files and folders, changing the etag', async () => {
      const parent = await fresh();
      const a = await store().createFolder(parent, 'A');
      const b = await store().createFolder(parent, 'B');
      const f = await upload(a.id, 'x.txt', 'x');
      const renamed = await store().move({ id: f.id, kind: 'file', name: 'y.txt', ifMatch: f.etag });
      expect(renamed).toMatchObject({ id: f.id, name: 'y.txt', parentId: a.id });
      expect(renamed.etag).not.toBe(f.etag);
      const moved = await store().move({ id: f.id, kind: 'file', parentId: b.id });
      expect(moved).toMatchObject({ parentId: b.id, name: 'y.txt' });
      const movedFolder = await store().move({ id: a.id, kind: 'folder', parentId: b.id, name: 'A2' });
      expect(movedFolder).toMatchObject({ parentId: b.id, name: 'A2' });
      const { entries } = await collect(store().listFolder(b.id));
      expect(entries.map((e) => e.name).sort()).toEqual(['A2', 'y.txt']);
    });

    it('a rename with a stale etag is precondition_failed; onto a taken name is item_name_in_use', async () => {
      const parent = await fresh();
      const f = await upload(parent, 'one.txt', '1');
      await upload(parent, 'two.txt', '2');
      const r = await store().move({ id: f.id, kind: 'file', name: 'uno.txt', ifMatch: f.etag });
      await expectSyncError(store().move({ id: f.id, kind: 'file', name: 'eins.txt', ifMatch: f.etag }), 'precondition_failed', 'replan');
      await expectSyncError(store().move({ id: f.id, kind: 'file', name: 'TWO.txt', ifMatch: r.etag }), 'item_name_in_use', 'replan');
    });

    it('trashes a folder with its contents and restores it with the same ids', async () => {
      const parent = await fresh();
      const dir = await store().createFolder(parent, 'T');
      const f = await upload(dir.id, 'in.txt', 'inside');
      await store().trash(dir.id, 'folder', dir.etag);
      expect(await store().getItem(dir.id, 'folder')).toBeNull();
      expect(await store().getItem(f.id, 'file')).toBeNull();
      const back = await store().restore({ id: dir.id, kind: 'folder' });
      expect(back).toMatchObject({ id: dir.id, name: 'T', parentId: parent, status: 'active' });
      expect(await store().getItem(f.id, 'file')).toMatchObject({ id: f.id, sha1: sha1('inside') });
    });

    it('trash with a stale etag is precondition_failed and leaves the item', async () => {
      const parent = await fresh();
      const f = await upload(parent, 's.txt', 's');
      await store().move({ id: f.id, kind: 'file', name: 's2.txt' });
      await expectSyncError(store().trash(f.id, 'file', f.etag), 'precondition_failed', 'replan');
      expect(await store().getItem(f.id, 'file')).not.toBeNull();
    });

    it('restores into another folder under a new name, and refuses a taken name', async () => {
      const parent = await fresh();
      const other = await store().createFolder(parent, 'Other');
      const f = await upload(parent, 'r.txt', 'r');
      await store().trash(f.id, 'file');
      const clash = await upload(parent, 'r.txt', 'newer');
      const details = await expectSyncError(store().restore({ id: f.id, kind: 'file' }), 'item_name_in_use', 'replan');
      expect(details.conflictId).toBe(clash.id);
      const back = await store().restore({ id: f.id, kind: 'file', parentId: other.id, name: 'r-restored.txt' });
      expect(back).toMatchObject({ id: f.id, parentId: other.id, name: 'r-restored.txt', sha1: sha1('r') });
    });

    it('operations on a missing item are not_found (replan)', async () => {
      const parent = await fresh();
      const f = await upload(parent, 'gone.txt', 'g');
      await store().trash(f.id, 'file');
      await expectSyncError(store().move({ id: f.id, kind: 'file', name: 'x.txt' }), 'not_found', 'replan');
      await expectSyncError(store().createFolder(f.id, 'nope'), 'not_found', 'replan');
      await expectSyncError(store().download({ id: f.id, destFile: await tempFileAt(join(tmp.dir, `dl-${++n}`)), expectSha1: null }), 'not_found', 'replan');
    });

    it('pathIds lists the ancestor folders from the account root down', async () => {
      const pathIds = store().pathIds?.bind(store());
      if (!pathIds) return;
      const parent = await fresh();
      const sub = await store().createFolder(parent, 'deep');
      const f = await upload(sub.id, 'leaf.txt', 'leaf');
      const ids = await pathIds(f.id);
      expect(ids.slice(-2)).toEqual([parent, sub.id]);
      expect(ids[0]).toBe('0');
    });

    it('sets a folder sync_state', async () => {
      const parent = await fresh();
      await store().setSyncState(parent, 'synced');
      await store().setSyncState(parent, 'not_synced');
      expect(await store().getItem(parent, 'folder')).not.toBeNull();
    });
  });
}
