/**
 * Safe on a real disk (issue 26, points 1 and 8), through the real CLI against box-server: a root is what it was.
 * An unmounted mirror (a real tmpfs unmounted, when this machine lets the test mount one), a root folder replaced
 * by a new one (another inode), a root on another device, a missing marker file, a root that suddenly lists
 * empty, and a small tree deleted whole: each stops with exit code 3, says what happened and what to do, and
 * trashes nothing on Box. A user's own `.boxsync-tmp-*` file is reported, never removed; a leftover temp file
 * boxsync made is.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { TempNames } from '../../src/local/temp-name.js';
import { contentRequests, exists, explain, listTree, readText, startSyncEnv, writeRequests, writeText, type SyncEnv } from './sync-harness.js';

type Env = SyncEnv & { remoteRootId: string };
let e: Env | undefined;
const mounted: string[] = [];

afterEach(async () => {
  for (const m of mounted.splice(0)) umount(m);
  await e?.close();
  e = undefined;
});

function mountTmpfs(at: string): void {
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=128m', 'tmpfs', at], { stdio: 'ignore' });
  mounted.push(at);
}

function umount(at: string): void {
  execFileSync('umount', [at], { stdio: 'ignore' });
  const i = mounted.indexOf(at);
  if (i >= 0) mounted.splice(i, 1);
}

/** Can this machine mount a tmpfs (root in a container that allows it)? Else the mount variants are skipped. */
const canMount = await (async () => {
  const dir = await mkdtemp(join(tmpdir(), 'boxsync-mount-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir], { stdio: 'ignore' });
    execFileSync('umount', [dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  } finally {
    await rmdir(dir).catch(() => undefined);
  }
})();

/** 9 synced items on Box: 5 files and a folder with 3 files (the mirror). */
function seedNine(env: Env): void {
  for (let i = 0; i < 5; i++) env.web.uploadFile(env.remoteRootId, `f${i}.txt`, `file ${i}\n`);
  const docs = env.web.createFolder(env.remoteRootId, 'docs');
  for (let i = 0; i < 3; i++) env.web.uploadFile(docs.id, `d${i}.txt`, `doc ${i}\n`);
}

const NINE = ['docs/', 'docs/d0.txt', 'docs/d1.txt', 'docs/d2.txt', 'f0.txt', 'f1.txt', 'f2.txt', 'f3.txt', 'f4.txt'];

/** Nothing was trashed on Box since the requests were cleared, and the 6 top-level items are all there. */
function nothingTrashedOnBox(env: Env): void {
  expect(writeRequests(env.srv).filter((r) => r.method === 'DELETE')).toEqual([]);
  expect(env.web.listFolder(env.remoteRootId).map((i) => i.name).sort()).toEqual(['docs', 'f0.txt', 'f1.txt', 'f2.txt', 'f3.txt', 'f4.txt']);
}

function guardId(text: string, kind: string): string {
  const m = new RegExp(`${kind}:[0-9a-f]{16}(:\\d+)?`).exec(text);
  if (!m) throw new Error(`no ${kind} guard id in:\n${text}`);
  return m[0];
}

describe('sync --once: a root is what it was', () => {
  it.skipIf(!canMount)('an unmounted mirror (a real tmpfs): exit 3, nothing trashed on Box; --accept-new-root merges the empty folder, deleting nothing', async () => {
    e = await startSyncEnv();
    seedNine(e);
    await mkdir(e.mirror, { recursive: true });
    mountTmpfs(e.mirror);
    await e.syncOk();
    expect(await listTree(e.mirror)).toEqual(NINE);
    umount(e.mirror);
    // The situation: the empty mount-point folder is still there.
    expect(await readdir(e.mirror)).toEqual([]);
    e.srv.control.clearRequests();
    const r = await e.sync();
    expect(r.code, explain(r)).toBe(3);
    expect(r.stdout + r.stderr).toMatch(/is on another device than when it was synced .*the disk that holds it is probably not mounted/);
    expect(r.stdout + r.stderr).toMatch(/nothing is deleted on Box.*Remount or restore it.*--accept-new-root/);
    nothingTrashedOnBox(e);
    // Again: the guard holds on every run, and nothing happens to the folder either.
    const again = await e.sync();
    expect(again.code, explain(again)).toBe(3);
    expect(await readdir(e.mirror)).toEqual([]);
    nothingTrashedOnBox(e);
    // The folder there now is meant to be the root: it is merged with Box as on a first sync.
    const accepted = await e.sync(['--accept-new-root', e.mirror]);
    expect(accepted.code, explain(accepted)).toBe(0);
    expect(await listTree(e.mirror)).toEqual(NINE);
    nothingTrashedOnBox(e);
  });

  it.skipIf(!canMount)('another disk mounted over the root, holding one of the files: exit 3 (another device), nothing trashed on Box; unmounted again, syncing goes on', async () => {
    e = await startSyncEnv();
    seedNine(e);
    await e.syncOk();
    mountTmpfs(e.mirror);
    // Another disk with one of the files: without the guard, the others would go to the Box trash.
    await writeFile(join(e.mirror, 'f0.txt'), 'file 0\n');
    e.srv.control.clearRequests();
    const r = await e.sync();
    expect(r.code, explain(r)).toBe(3);
    expect(r.stdout + r.stderr).toMatch(/is on another device than when it was synced/);
    expect(r.stdout + r.stderr).toContain(guardId(r.stdout + r.stderr, 'local-root-missing'));
    nothingTrashedOnBox(e);
    umount(e.mirror);
    // The folder that was synced is back (the mount no longer hides it): syncing goes on, with nothing to do.
    e.srv.control.clearRequests();
    const back = await e.sync();
    expect(back.code, explain(back)).toBe(0);
    expect(await listTree(e.mirror)).toEqual(NINE);
    expect(writeRequests(e.srv)).toEqual([]);
    expect(contentRequests(e.srv)).toEqual({ downloads: [], uploads: [] });
  });

  it.skipIf(!canMount)('a journal of an older boxsync (no identity recorded) and an empty disk mounted on the root: an empty mount point is missing, exit 3', async () => {
    e = await startSyncEnv();
    seedNine(e);
    await e.syncOk();
    const journal = new Database(join(e.stateDir, 'journal.db'));
    expect(journal.prepare("DELETE FROM meta WHERE key LIKE 'rootIdentity:%'").run().changes).toBe(1);
    journal.close();
    mountTmpfs(e.mirror);
    e.srv.control.clearRequests();
    const r = await e.sync();
    expect(r.code, explain(r)).toBe(3);
    expect(r.stdout + r.stderr).toMatch(/is an empty mount point .*nothing is deleted on Box/);
    nothingTrashedOnBox(e);
  });

  it('the root folder replaced by a new empty one at the same path (another inode): exit 3, nothing trashed; the old folder back syncs on', async () => {
    e = await startSyncEnv();
    seedNine(e);
    await e.syncOk();
    const old = join(e.dir, 'mirror.old');
    await rename(e.mirror, old);
    await mkdir(e.mirror);
    e.srv.control.clearRequests();
    const r = await e.sync();
    expect(r.code, explain(r)).toBe(3);
    expect(r.stdout + r.stderr).toMatch(/is not the folder that was synced \(inode \d+, was \d+\): it was replaced or created again/);
    expect(r.stdout + r.stderr).toMatch(/boxsync sync --once --accept-new-root [0-9a-f]{16}/);
    nothingTrashedOnBox(e);
    expect(await readdir(e.mirror)).toEqual([]);
    // The dry run says the same, and changes nothing.
    const dry = await e.sync(['--dry-run']);
    expect(dry.code, explain(dry)).toBe(3);
    expect(dry.stdout).toMatch(/local-root-missing:[0-9a-f]{16}/);
    await rmdir(e.mirror);
    await rename(old, e.mirror);
    const back = await e.sync();
    expect(back.code, explain(back)).toBe(0);
    expect(await listTree(e.mirror)).toEqual(NINE);
    nothingTrashedOnBox(e);
  });

  it('the root is gone: exit 3 and nothing trashed, and the folder is not created again', async () => {
    e = await startSyncEnv();
    seedNine(e);
    await e.syncOk();
    await rename(e.mirror, join(e.dir, 'elsewhere'));
    e.srv.control.clearRequests();
    const r = await e.sync();
    expect(r.code, explain(r)).toBe(3);
    expect(r.stdout + r.stderr).toMatch(/is missing \(unmounted or moved\?\)/);
    nothingTrashedOnBox(e);
    expect(await exists(e.mirror)).toBe(false);
  });

  it('a missing marker file (safety.rootMarker): exit 3 and nothing trashed; the marker back, the deletes go through', async () => {
    e = await startSyncEnv();
    await e.writeConfig({ extra: { safety: { rootMarker: '.boxsync-root' } } });
    seedNine(e);
    await e.syncOk();
    // Put there by the first sync, and never synced to Box.
    expect(await readText(join(e.mirror, '.boxsync-root'))).toMatch(/boxsync/);
    expect(e.web.findByPath('/Mirror/.boxsync-root')).toBeNull();
    await rm(join(e.mirror, '.boxsync-root'));
    await rm(join(e.mirror, 'f0.txt'));
    await rm(join(e.mirror, 'f1.txt'));
    e.srv.control.clearRequests();
    const r = await e.sync();
    expect(r.code, explain(r)).toBe(3);
    expect(r.stdout + r.stderr).toMatch(/has no marker file \.boxsync-root \(safety\.rootMarker\)/);
    nothingTrashedOnBox(e);
    await writeFile(join(e.mirror, '.boxsync-root'), 'put back\n');
    const back = await e.sync();
    expect(back.code, explain(back)).toBe(0);
    expect(writeRequests(e.srv).filter((q) => q.method === 'DELETE')).toHaveLength(2);
    expect(e.web.findByPath('/Mirror/f0.txt')).toBeNull();
    expect(e.web.findByPath('/Mirror/f2.txt')).not.toBeNull();
  });

  it('a root that suddenly lists empty is refused at any size; confirmed, the delete-everything guard asks next; both confirmed, Box trash', async () => {
    e = await startSyncEnv();
    seedNine(e);
    await e.syncOk();
    for (const name of await readdir(e.mirror)) await rm(join(e.mirror, name), { recursive: true });
    e.srv.control.clearRequests();
    const r = await e.sync();
    expect(r.code, explain(r)).toBe(3);
    expect(r.stdout + r.stderr).toMatch(/is suddenly empty while files were in sync; refusing to delete them on Box/);
    nothingTrashedOnBox(e);
    const empty = guardId(r.stdout + r.stderr, 'local-root-empty');
    const next = await e.sync(['--confirm', empty]);
    expect(next.code, explain(next)).toBe(3);
    expect(next.stdout + next.stderr).toMatch(/refusing to delete all 9 synced items in .* in one pass; nothing was deleted/);
    nothingTrashedOnBox(e);
    const all = guardId(next.stdout + next.stderr, 'mass-delete');
    const done = await e.sync(['--confirm', empty, '--confirm', all]);
    expect(done.code, explain(done)).toBe(0);
    expect(e.web.listFolder(e.remoteRootId)).toEqual([]);
    expect(writeRequests(e.srv).filter((q) => q.method === 'DELETE')).toHaveLength(6);
  });

  it('a small tree deleted whole on Box asks, whatever the count; confirmed, the files go to the local trash', async () => {
    e = await startSyncEnv();
    const ids = [0, 1, 2].map((i) => e!.web.uploadFile(e!.remoteRootId, `s${i}.txt`, `small ${i}\n`).id);
    await e.syncOk();
    for (const id of ids) e.web.trash('file', id);
    const r = await e.sync();
    expect(r.code, explain(r)).toBe(3);
    expect(r.stdout + r.stderr).toMatch(/refusing to delete all 3 synced items in .* in one pass; nothing was deleted/);
    expect(await listTree(e.mirror)).toEqual(['s0.txt', 's1.txt', 's2.txt']);
    const done = await e.sync(['--confirm', guardId(r.stdout + r.stderr, 'mass-delete')]);
    expect(done.code, explain(done)).toBe(0);
    expect(await listTree(e.mirror)).toEqual([]);
    expect((await listTree(join(e.stateDir, 'trash'))).filter((p) => /s\d\.txt$/.test(p))).toHaveLength(3);
  });

  it('a wrong --confirm or --accept-new-root is refused before anything is done (exit 2)', async () => {
    e = await startSyncEnv();
    const bad = await e.sync(['--confirm', 'drop-everything']);
    expect(bad.code, explain(bad)).toBe(2);
    expect(bad.stderr).toMatch(/--confirm: "drop-everything" is not a safety guard id/);
    const unknown = await e.sync(['--accept-new-root', '/no/such/root']);
    expect(unknown.code, explain(unknown)).toBe(2);
    expect(unknown.stderr).toMatch(/--accept-new-root: "\/no\/such\/root" is neither the id nor the local path of a configured root/);
    expect(e.srv.control.requests()).toEqual([]);
  });
});

describe('sync --once: temp files are recognised by more than their name', () => {
  it("a user's .boxsync-tmp-* file is reported on every run and never removed; boxsync's own leftover is; renamed, it syncs", async () => {
    e = await startSyncEnv();
    e.web.uploadFile(e.remoteRootId, 'a.txt', 'a\n');
    await e.syncOk();
    await writeText(join(e.mirror, 'sub', '.boxsync-tmp-my-notes.txt'), 'my own notes\n');
    // A partial download a killed run of this state dir left: its name carries the state dir's key.
    const key = (await readText(join(e.stateDir, 'temp-key'))).trim();
    const leftover = new TempNames(key).next();
    await writeFile(join(e.mirror, leftover), 'half a download');
    e.srv.control.clearRequests();
    const r = await e.sync();
    expect(r.code, explain(r)).toBe(1);
    expect(r.stdout + r.stderr).toMatch(/sub\/\.boxsync-tmp-my-notes\.txt.*named like a boxsync temp file .* but boxsync did not make it: it is not synced and left as it is; rename it to sync it/);
    expect(await readText(join(e.mirror, 'sub', '.boxsync-tmp-my-notes.txt'))).toBe('my own notes\n');
    expect(await exists(join(e.mirror, leftover))).toBe(false);
    expect(contentRequests(e.srv).uploads).toEqual([]);
    const again = await e.sync();
    expect(again.code, explain(again)).toBe(1);
    expect(again.stdout + again.stderr).toMatch(/\.boxsync-tmp-my-notes\.txt/);
    expect(await readText(join(e.mirror, 'sub', '.boxsync-tmp-my-notes.txt'))).toBe('my own notes\n');
    await rename(join(e.mirror, 'sub', '.boxsync-tmp-my-notes.txt'), join(e.mirror, 'sub', 'my-notes.txt'));
    const renamed = await e.sync();
    expect(renamed.code, explain(renamed)).toBe(0);
    expect(e.web.readFile(e.web.findByPath('/Mirror/sub/my-notes.txt')!.id).toString()).toBe('my own notes\n');
  });
});
