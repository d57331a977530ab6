/**
 * Selective sync (issue 27 points 2, 3, 4, 6) through the real CLI against box-server, real temp dirs:
 * - `selective exclude` frees the disk into the local trash and Box keeps the folder (no DELETE reached Box);
 * - a folder holding an unsynced edit: the edit is uploaded first, then the folder is freed;
 * - `selective include` brings it back with the same content; `selective list` shows states and sizes;
 * - `info PATH` says "not selected"; the config file keeps its other keys.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../support/cli.js';
import { exists, explain, listTree, readText, startSyncEnv, writeRequests, writeText, type SyncEnv } from './sync-harness.js';

type Env = SyncEnv & { remoteRootId: string };
let e: Env | undefined;
afterEach(async () => {
  await e?.close();
  e = undefined;
});

const selective = (env: Env, args: readonly string[]): Promise<CliResult> =>
  runCli(['selective', ...args, '--config', env.configFile], { env: { BOXSYNC_LOG_LEVEL: 'warn' }, timeoutMs: 90_000 });

async function archiveEnv(): Promise<{ env: Env; archiveId: string; oldId: string }> {
  const env = await startSyncEnv();
  e = env;
  const archive = env.web.createFolder(env.remoteRootId, 'Archive');
  const old = env.web.uploadFile(archive.id, 'old.txt', 'old report\n');
  const sub = env.web.createFolder(archive.id, 'sub');
  env.web.uploadFile(sub.id, 'deep.txt', 'deep\n');
  const work = env.web.createFolder(env.remoteRootId, 'Work');
  env.web.uploadFile(work.id, 'w.txt', 'work\n');
  await env.writeConfig({ folder: { exclude: ['*.tmp'] } });
  await env.syncOk();
  expect(await readText(join(env.mirror, 'Archive', 'sub', 'deep.txt'))).toBe('deep\n');
  return { env, archiveId: archive.id, oldId: old.id };
}

function expectNoBoxDelete(env: Env): void {
  expect(writeRequests(env.srv).filter((r) => r.method === 'DELETE').map((r) => r.path)).toEqual([]);
}

/** What the local trash holds of the pair, from the trashed item's own name on ("Archive/old.txt"). */
async function trashedNames(env: Env): Promise<string[]> {
  const all = await listTree(join(env.stateDir, 'trash')).catch(() => [] as string[]);
  return all.filter((p) => p.includes('/Archive/')).map((p) => p.slice(p.indexOf('/Archive/') + 1)).sort();
}

describe('selective sync', () => {
  it('exclude frees the disk into the local trash, Box keeps it, include brings it back; list and info say the state', async () => {
    const { env, archiveId } = await archiveEnv();
    env.srv.control.clearRequests();

    const ex = await selective(env, ['exclude', join(env.mirror, 'Archive')]);
    expect(ex.code, explain(ex)).toBe(0);
    expect(ex.stdout).toMatch(/Archive\/ is no longer kept on this disk; Box keeps it/);
    expect(ex.stderr).toMatch(/Archive is not selected: its local copy \(2 files, \d+ bytes, all on Box\) was moved to the local trash/);
    expect(await exists(join(env.mirror, 'Archive'))).toBe(false);
    expect(await trashedNames(env)).toEqual(['Archive/', 'Archive/old.txt', 'Archive/sub/', 'Archive/sub/deep.txt']);
    // The config keeps its other keys and gains the selection.
    const cfg = JSON.parse(await readFile(env.configFile, 'utf8')) as { folders: { exclude: string[]; selective: { unselected: string[] } }[] };
    expect(cfg.folders[0]!.exclude).toEqual(['*.tmp']);
    expect(cfg.folders[0]!.selective.unselected).toEqual(['Archive']);

    // Later runs leave it alone: nothing comes down, nothing is deleted anywhere.
    await env.syncOk();
    expect(await exists(join(env.mirror, 'Archive'))).toBe(false);
    expectNoBoxDelete(env);
    expect(env.web.getItem('folder', archiveId)?.['item_status']).toBe('active');
    expect(env.web.listFolder(archiveId).map((i) => i.name).sort()).toEqual(['old.txt', 'sub']);

    const list = await selective(env, ['list']);
    expect(list.code, explain(list)).toBe(0);
    expect(list.stdout).toMatch(/\(Box folder \d+; partly\)/);
    expect(list.stdout).toMatch(/not synced\s+16 B\s+Archive\//);
    expect(list.stdout).toMatch(/synced\s+5 B\s+Work\//);

    // One level further down, still listed from Box (the folder is not on this disk).
    const deeper = await selective(env, ['list', join(env.mirror, 'Archive')]);
    expect(deeper.code, explain(deeper)).toBe(0);
    expect(deeper.stdout).toMatch(/Archive {2}\(Box folder \d+; not synced\)/);
    expect(deeper.stdout).toMatch(/not synced\s+5 B\s+sub\//);

    const ls = await runCli(['ls', '/Mirror', '--config', env.configFile], { env: { BOXSYNC_LOG_LEVEL: 'warn' } });
    expect(ls.code, explain(ls)).toBe(0);
    expect(ls.stdout).toMatch(/\d+ {2}Archive\/ {2}\[not synced: not selected\]\n/);
    expect(ls.stdout).toMatch(/\d+ {2}Work\/ {2}\[synced\]\n/);

    const info = await runCli(['info', join(env.mirror, 'Archive', 'old.txt'), '--config', env.configFile], { env: { BOXSYNC_LOG_LEVEL: 'warn' } });
    expect(info.code).not.toBe(0);
    expect(info.stderr).toMatch(/old\.txt is not synced: not selected \(selective sync: Archive is in folders\[\]\.selective\.unselected/);

    const inc = await selective(env, ['include', join(env.mirror, 'Archive')]);
    expect(inc.code, explain(inc)).toBe(0);
    expect(inc.stdout).toMatch(/Archive\/ is kept on this disk again/);
    expect(inc.stderr).toMatch(/Archive\/ is selected again: it is downloaded for selective sync/);
    expect(await readText(join(env.mirror, 'Archive', 'old.txt'))).toBe('old report\n');
    expect(await readText(join(env.mirror, 'Archive', 'sub', 'deep.txt'))).toBe('deep\n');
    expectNoBoxDelete(env);
    const after = await selective(env, ['list']);
    expect(after.stdout).toMatch(/^\s+synced\s+16 B\s+Archive\//m);
  });

  it('a folder holding an unsynced edit: the edit is uploaded first, then the folder is freed', async () => {
    const { env, archiveId, oldId } = await archiveEnv();
    env.srv.control.clearRequests();
    await writeText(join(env.mirror, 'Archive', 'old.txt'), 'old report, edited here\n');
    await writeText(join(env.mirror, 'Archive', 'new.txt'), 'new here\n');

    const ex = await selective(env, ['exclude', join(env.mirror, 'Archive'), '--free-space']);
    expect(ex.code, explain(ex)).toBe(0);
    expect(ex.stderr).toMatch(/Archive is not selected: its local copy \(3 files, \d+ bytes, all on Box\) was removed to free the space/);
    expect(await exists(join(env.mirror, 'Archive'))).toBe(false);
    expect(await trashedNames(env)).toEqual([]);
    expect(env.web.readFile(oldId).toString()).toBe('old report, edited here\n');
    const newOnBox = env.web.listFolder(archiveId).find((i) => i.name === 'new.txt');
    expect(newOnBox && env.web.readFile(newOnBox.id).toString()).toBe('new here\n');
    expectNoBoxDelete(env);

    const inc = await selective(env, ['include', join(env.mirror, 'Archive')]);
    expect(inc.code, explain(inc)).toBe(0);
    expect(await readText(join(env.mirror, 'Archive', 'old.txt'))).toBe('old report, edited here\n');
    expect(await readText(join(env.mirror, 'Archive', 'new.txt'))).toBe('new here\n');
  });

  it('an edit that cannot be uploaded stops the exclude, names the file, and removes nothing', async () => {
    const { env, oldId } = await archiveEnv();
    // Box refuses every new version of old.txt (no permission), so the edit cannot reach Box.
    await writeText(join(env.mirror, 'Archive', 'old.txt'), 'an edit Box will not take\n');
    env.srv.control.failNext({ method: 'POST', path: new RegExp(`/files/${oldId}/content$`), count: 1000, status: 403, code: 'access_denied_insufficient_permissions' });
    const ex = await selective(env, ['exclude', join(env.mirror, 'Archive')]);
    expect(ex.code, explain(ex)).toBe(1);
    expect(ex.stderr).toMatch(/cannot exclude Archive\/: 1 file there could not be uploaded/);
    expect(ex.stderr).toMatch(/^boxsync selective: {3}Archive\/old\.txt$/m);
    expect(await readText(join(env.mirror, 'Archive', 'old.txt'))).toBe('an edit Box will not take\n');
    const cfg = JSON.parse(await readFile(env.configFile, 'utf8')) as { folders: { selective?: { unselected: string[] } }[] };
    expect(cfg.folders[0]!.selective?.unselected ?? []).toEqual([]);
  });

  it('the key edited by hand: sync --once frees a clean folder, and keeps one holding an edit Box lacks, naming the file', async () => {
    const { env, archiveId, oldId } = await archiveEnv();
    env.srv.control.clearRequests();
    await writeText(join(env.mirror, 'Archive', 'sub', 'deep.txt'), 'edited after the last sync\n');
    await env.writeConfig({ folder: { selective: { unselected: ['Archive', '/Work/'] } } });
    const r = await env.syncOk();
    expect(r.stderr).toMatch(/Work is not selected: its local copy \(1 file, 5 bytes, all on Box\) was moved to the local trash/);
    expect(r.stderr).toMatch(/Archive is not selected, but its local copy is kept \(nothing removed\): 1 file there has content Box lacks: Archive\/sub\/deep\.txt/);
    expect(await exists(join(env.mirror, 'Work'))).toBe(false);
    expect(await readText(join(env.mirror, 'Archive', 'sub', 'deep.txt'))).toBe('edited after the last sync\n');
    expect(await readText(join(env.mirror, 'Archive', 'old.txt'))).toBe('old report\n');
    expectNoBoxDelete(env);
    expect(env.web.readFile(oldId).toString()).toBe('old report\n');
    expect(env.web.listFolder(archiveId).map((i) => i.name).sort()).toEqual(['old.txt', 'sub']);
  });

  it('newFolders "skip": a new top-level Box folder is left unselected, the user told once; include brings it', async () => {
    const env = await startSyncEnv();
    e = env;
    const work = env.web.createFolder(env.remoteRootId, 'Work');
    env.web.uploadFile(work.id, 'w.txt', 'work\n');
    await env.writeConfig({ folder: { selective: { newFolders: 'skip' } } });
    // The first sync takes what Box has.
    await env.syncOk();
    expect(await readText(join(env.mirror, 'Work', 'w.txt'))).toBe('work\n');

    const fresh = env.web.createFolder(env.remoteRootId, 'Fresh');
    env.web.uploadFile(fresh.id, 'f.txt', 'fresh\n');
    const sub = env.web.createFolder(work.id, 'NewSub');
    env.web.uploadFile(sub.id, 's.txt', 'sub\n');
    const r = await env.syncOk();
    expect(r.stderr).toMatch(/note: Fresh\/ appeared on Box and is not kept on this disk \(folders\[0\]\.selective\.newFolders is "skip"\): it is added to folders\[0\]\.selective\.unselected/);
    expect(await exists(join(env.mirror, 'Fresh'))).toBe(false);
    // Only top-level folders are skipped: one inside a synced folder comes down.
    expect(await readText(join(env.mirror, 'Work', 'NewSub', 's.txt'))).toBe('sub\n');
    const cfg = JSON.parse(await readFile(env.configFile, 'utf8')) as { folders: { selective: { unselected: string[]; newFolders: string } }[] };
    expect(cfg.folders[0]!.selective).toEqual({ newFolders: 'skip', unselected: ['Fresh'] });
    const again = await env.syncOk();
    expect(again.stderr).not.toMatch(/appeared on Box/);
    expect(await exists(join(env.mirror, 'Fresh'))).toBe(false);

    const inc = await selective(env, ['include', join(env.mirror, 'Fresh')]);
    expect(inc.code, explain(inc)).toBe(0);
    // The skipped folder was recorded as not selected: selected again, it is downloaded for selective sync.
    expect(inc.stderr).toMatch(/note: Fresh\/ is selected again: it is downloaded for selective sync/);
    expect(await readText(join(env.mirror, 'Fresh', 'f.txt'))).toBe('fresh\n');
    const after = await env.syncOk();
    expect(after.stderr).not.toMatch(/appeared on Box/);
    expect(await readText(join(env.mirror, 'Fresh', 'f.txt'))).toBe('fresh\n');
    expectNoBoxDelete(env);
  });
});
