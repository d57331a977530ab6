/**
 * Selective sync applied live by the real daemon (issue 27 point 7 and its acceptance scenarios), the CLI and the
 * daemon as child processes against box-server:
 * - excluding a folder while a download into it runs: the download is abandoned (its temp file removed), the
 *   folder goes to the local trash with nothing half-written, nothing is deleted on Box, status tells the truth;
 * - an edit Box refuses holds a live exclude (exit 1, the file named, nothing written or removed); `--free-space`
 *   removes a clean folder outright;
 * - a new Box folder under each `selective.newFolders` mode: "sync" brings it down; "skip" records it unselected,
 *   downloads nothing, tells the user once in `status` and by a notification, a live `include` brings it down, and
 *   `sync --once --dry-run` shows the skip of the next one.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { fakeNotifySend } from '../support/fake-notify.js';
import { waitFor } from '../support/wait.js';
import { exists, listTree, writeRequests } from '../cli/sync-harness.js';
import { createHarness, type Harness } from './daemon-harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const cli = (args: readonly string[]) => runCli(args, { env: { BOXSYNC_LOG_LEVEL: 'warn' }, timeoutMs: 120_000 });
const noBoxDelete = (hh: Harness): string[] => writeRequests(hh.srv).filter((r) => r.method === 'DELETE').map((r) => r.path);

async function selection(hh: Harness): Promise<{ unselected?: string[]; newFolders?: string } | undefined> {
  const cfg = JSON.parse(await readFile(hh.configFile, 'utf8')) as { folders: { selective?: { unselected?: string[]; newFolders?: string } }[] };
  return cfg.folders[0]!.selective;
}

async function setNewFolders(hh: Harness, mode: 'sync' | 'skip'): Promise<void> {
  const cfg = JSON.parse(await readFile(hh.configFile, 'utf8')) as { folders: Record<string, unknown>[] };
  cfg.folders[0]!['selective'] = { newFolders: mode };
  await writeFile(hh.configFile, JSON.stringify(cfg, null, 2), { mode: 0o600 });
}

it('exclude while a download into the folder runs: abandoned, nothing half-written left, freed to the trash, nothing deleted on Box', async () => {
  h = await createHarness();
  const hh = h;
  const archive = h.web.createFolder(h.rootId, 'Archive');
  h.web.uploadFile(archive.id, 'old.txt', 'old report\n');
  await h.start({ BOXSYNC_SHUTDOWN_TIMEOUT_SEC: '2' });
  const archivePath = join(h.mirror, 'Archive');
  await waitFor(async () => exists(join(archivePath, 'old.txt')), { timeoutMs: 30_000, what: 'Archive to come down' });

  // A file added on Box whose download trickles and never ends: it stays in flight until the exclude.
  const big = h.web.uploadFile(archive.id, 'big.bin', Buffer.alloc(1_000_000, 7));
  h.srv.control.failNext({ method: 'GET', path: new RegExp(`/files/${big.id}/content$`), count: 100, stream: { announceBytes: 1_000_000, sendBytes: 'forever', chunkBytes: 1024, everyMs: 50 } });
  await waitFor(
    async () => (await hh.status()).engine.roots.some((r) => r.inFlight.some((t) => t.path === 'Archive/big.bin' && t.doneBytes > 0)),
    { timeoutMs: 30_000, what: 'the download of big.bin to be under way' },
  );
  // Half-written: its temp file is in the folder.
  expect((await listTree(archivePath)).some((p) => p.includes('.boxsync-tmp-'))).toBe(true);
  h.srv.control.clearRequests();

  const ex = await cli(['selective', 'exclude', archivePath, '--config', h.configFile]);
  expect(ex.code, `${ex.stdout}\n${ex.stderr}`).toBe(0);
  expect(ex.stdout).toMatch(/Archive is not selected: its local copy \(1 file, 11 bytes, all on Box\) was moved to the local trash/);
  expect(await exists(archivePath)).toBe(false);
  // The trash has what was in sync; the abandoned download left nothing, there or anywhere in the mirror.
  const trashed = await listTree(join(h.dir, 'state', 'trash'));
  expect(trashed.filter((p) => p.includes('/Archive/')).map((p) => p.slice(p.indexOf('/Archive/') + 1)).sort()).toEqual(['Archive/', 'Archive/old.txt']);
  expect([...trashed, ...(await listTree(h.mirror))].filter((p) => p.includes('.boxsync-tmp-') || p.includes('big.bin'))).toEqual([]);
  // Nothing is deleted on Box.
  expect(noBoxDelete(h)).toEqual([]);
  expect(h.web.getItem('file', big.id)?.['item_status']).toBe('active');
  expect(h.web.listFolder(archive.id).map((i) => i.name).sort()).toEqual(['big.bin', 'old.txt']);

  // Status tells the truth: nothing in flight, Archive not selected.
  const s = await h.status();
  expect(s.engine.roots.flatMap((r) => r.inFlight)).toEqual([]);
  expect(s.engine.unsynced?.map((u) => [u.path, u.reason])).toEqual([['Archive', 'not-selected']]);
  const st = await runCli(['status', '--socket', h.socketPath]);
  expect(st.stdout).toMatch(/Archive\/: not selected \(selective sync/);
  expect(st.stdout).not.toMatch(/big\.bin/);
  const one = await runCli(['status', '--socket', h.socketPath, join(archivePath, 'big.bin')]);
  expect(one.stdout).toMatch(/not synced: not selected/);
});

it('live exclude: an edit Box refuses holds it (exit 1, named, nothing changed); --free-space removes a clean folder outright', async () => {
  h = await createHarness();
  const archive = h.web.createFolder(h.rootId, 'Archive');
  const old = h.web.uploadFile(archive.id, 'old.txt', 'old report\n');
  const work = h.web.createFolder(h.rootId, 'Work');
  h.web.uploadFile(work.id, 'w.txt', 'work\n');
  await h.start();
  await waitFor(async () => (await exists(join(h!.mirror, 'Archive', 'old.txt'))) && exists(join(h!.mirror, 'Work', 'w.txt')), { timeoutMs: 30_000, what: 'both folders down' });

  // Box refuses every new version of old.txt: the edit cannot reach Box.
  h.srv.control.failNext({ method: 'POST', path: new RegExp(`/files/${old.id}/content$`), count: 1000, status: 403, code: 'access_denied_insufficient_permissions' });
  await writeFile(join(h.mirror, 'Archive', 'old.txt'), 'an edit Box will not take\n');
  const ex = await cli(['selective', 'exclude', join(h.mirror, 'Archive'), '--config', h.configFile]);
  expect(ex.code, `${ex.stdout}\n${ex.stderr}`).toBe(1);
  expect(ex.stderr).toMatch(/cannot exclude Archive\/: 1 file there could not be uploaded/);
  expect(ex.stderr).toMatch(/^boxsync selective: {3}Archive\/old\.txt$/m);
  expect(await readFile(join(h.mirror, 'Archive', 'old.txt'), 'utf8')).toBe('an edit Box will not take\n');
  expect((await selection(h))?.unselected ?? []).toEqual([]);

  h.srv.control.clearRequests();
  const free = await cli(['selective', 'exclude', join(h.mirror, 'Work'), '--free-space', '--config', h.configFile]);
  expect(free.code, `${free.stdout}\n${free.stderr}`).toBe(0);
  expect(free.stdout).toMatch(/Work is not selected: its local copy \(1 file, 5 bytes, all on Box\) was removed to free the space; Box keeps it/);
  expect(await exists(join(h.mirror, 'Work'))).toBe(false);
  expect((await listTree(join(h.dir, 'state', 'trash')).catch(() => [] as string[])).filter((p) => p.includes('Work'))).toEqual([]);
  expect((await selection(h))?.unselected).toEqual(['Work']);
  expect(noBoxDelete(h)).toEqual([]);
  expect(h.web.listFolder(work.id).map((i) => i.name)).toEqual(['w.txt']);
  // The held folder is still selected and still here.
  expect(await readFile(join(h.mirror, 'Archive', 'old.txt'), 'utf8')).toBe('an edit Box will not take\n');
});

it('newFolders "sync": a new Box folder appearing while the daemon runs comes down', async () => {
  h = await createHarness();
  await setNewFolders(h, 'sync');
  await h.start();
  const fresh = h.web.createFolder(h.rootId, 'Fresh');
  h.web.uploadFile(fresh.id, 'f.txt', 'fresh\n');
  await waitFor(async () => (await readFile(join(h!.mirror, 'Fresh', 'f.txt'), 'utf8').catch(() => null)) === 'fresh\n', { timeoutMs: 30_000, what: 'Fresh to come down' });
  expect(await selection(h)).toEqual({ newFolders: 'sync' });
});

it('newFolders "skip": a new Box folder is recorded unselected, nothing comes down, the user is told once; the dry run shows the skip', async () => {
  h = await createHarness();
  const hh = h;
  await setNewFolders(h, 'skip');
  const work = h.web.createFolder(h.rootId, 'Work');
  h.web.uploadFile(work.id, 'w.txt', 'work\n');
  const notify = await fakeNotifySend(h.dir);
  const run = await h.start(notify.env);
  await waitFor(async () => exists(join(hh.mirror, 'Work', 'w.txt')), { timeoutMs: 30_000, what: 'the first sync to take Work' });
  h.srv.control.clearRequests();

  const fresh = h.web.createFolder(h.rootId, 'Fresh');
  const f = h.web.uploadFile(fresh.id, 'f.txt', 'fresh\n');
  await waitFor(async () => ((await selection(hh))?.unselected ?? []).includes('Fresh'), { timeoutMs: 30_000, what: 'Fresh to be recorded unselected' });
  expect(await selection(h)).toEqual({ newFolders: 'skip', unselected: ['Fresh'] });
  const calls = await waitFor(async () => {
    const c = (await notify.calls()).filter((a) => a.includes('boxsync: a new Box folder is not synced here'));
    return c.length > 0 ? c : null;
  }, { timeoutMs: 15_000, what: 'the new-folder notification' });
  expect(calls[0]!.join(' ')).toMatch(/Fresh\/ appeared on Box and is not kept on this disk/);
  const st = await runCli(['status', '--socket', h.socketPath]);
  expect(st.stdout).toMatch(/Fresh\/: not selected \(selective sync/);

  // Later passes do not tell again, and nothing of Fresh comes down.
  // Its passes counted before sync-now is asked: the full pass may be done before the CLI has exited.
  const before = (await h.status()).passes;
  await runCli(['sync-now', '--config', h.configFile]);
  await waitFor(async () => {
    const s = await hh.status();
    return s.passes > before && s.engine.phase === 'idle';
  }, { timeoutMs: 30_000, what: 'the full pass after sync-now' });
  expect(await exists(join(h.mirror, 'Fresh'))).toBe(false);
  expect(h.srv.control.requests().filter((r) => r.path.includes(`/files/${f.id}/content`))).toEqual([]);
  expect((await notify.calls()).filter((a) => a.includes('boxsync: a new Box folder is not synced here'))).toHaveLength(1);
  expect(run.output().match(/Fresh\/ appeared on Box/g) ?? []).toHaveLength(1);

  // Included live (the daemon wrote the key itself; it reads the file, not the configuration it started with).
  const inc = await cli(['selective', 'include', join(h.mirror, 'Fresh'), '--config', h.configFile]);
  expect(inc.code, `${inc.stdout}\n${inc.stderr}`).toBe(0);
  expect(inc.stdout).toMatch(/Fresh\/ is selected again/);
  await waitFor(async () => (await readFile(join(hh.mirror, 'Fresh', 'f.txt'), 'utf8').catch(() => null)) === 'fresh\n', { timeoutMs: 30_000, what: 'Fresh to come down' });
  expect(await selection(h)).toEqual({ newFolders: 'skip', unselected: [] });

  // With the daemon stopped, another new folder: the dry run says the real run skips it, and plans nothing of it.
  await h.stop(run);
  const later = h.web.createFolder(h.rootId, 'Later');
  h.web.uploadFile(later.id, 'l.txt', 'later\n');
  const dry = await cli(['sync', '--once', '--dry-run', '--config', h.configFile]);
  expect(dry.code, `${dry.stdout}\n${dry.stderr}`).toBe(0);
  expect(dry.stdout).toMatch(/note: Later\/ appeared on Box: the real run leaves it unselected \(selective\.newFolders is "skip"\)/);
  expect(dry.stdout).not.toMatch(/Later\/l\.txt/);
  expect(await selection(h)).toEqual({ newFolders: 'skip', unselected: [] });
  expect(await exists(join(h.mirror, 'Later'))).toBe(false);
});
