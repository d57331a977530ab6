/**
 * A change of what is synced is never a delete (issue 27), through the real CLI against box-server, with the
 * config (and `.boxsyncignore`) edited between runs:
 * - exclude a synced folder, delete the local copy by hand, include it again: Box keeps it, and it comes back;
 * - the same through `.boxsyncignore`, a `direction` change, and a folder pair removed from the config and added
 *   back;
 * - including a folder that exists here with other content: both sides' files end up on both sides, two different
 *   files at one name are both kept, nothing is deleted.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { CliResult } from '../support/cli.js';
import { exists, explain, listTree, readText, startSyncEnv, writeRequests, writeText, type SyncEnv } from './sync-harness.js';

type Env = SyncEnv & { remoteRootId: string };
let e: Env | undefined;
afterEach(async () => {
  await e?.close();
  e = undefined;
});

/** A Box folder `Archive` with two files (one in a subfolder) next to `keep.txt`, mirrored by a first sync. */
async function archiveEnv(folder: Record<string, unknown> = {}): Promise<{ env: Env; archiveId: string }> {
  const env = await startSyncEnv();
  e = env;
  const archive = env.web.createFolder(env.remoteRootId, 'Archive');
  env.web.uploadFile(archive.id, 'old.txt', 'old report\n');
  const sub = env.web.createFolder(archive.id, 'sub');
  env.web.uploadFile(sub.id, 'deep.txt', 'deep\n');
  env.web.uploadFile(env.remoteRootId, 'keep.txt', 'keep\n');
  await env.writeConfig({ folder });
  await env.syncOk();
  expect(await readText(join(env.mirror, 'Archive', 'sub', 'deep.txt'))).toBe('deep\n');
  return { env, archiveId: archive.id };
}

/** No trash on either side: no DELETE reached Box, no trash operation was run or planned. */
function expectNothingTrashed(env: Env, runs: readonly CliResult[]): void {
  expect(writeRequests(env.srv).filter((r) => r.method === 'DELETE').map((r) => r.path)).toEqual([]);
  for (const r of runs) expect(r.stderr, explain(r)).not.toMatch(/^(remote|local)-trash\s/m);
}

function expectArchiveOnBox(env: Env, archiveId: string): void {
  expect(env.web.getItem('folder', archiveId)?.['item_status']).toBe('active');
  expect(env.web.listFolder(archiveId).map((i) => i.name).sort()).toEqual(['old.txt', 'sub']);
}

async function expectArchiveBack(env: Env): Promise<void> {
  expect(await readText(join(env.mirror, 'Archive', 'old.txt'))).toBe('old report\n');
  expect(await readText(join(env.mirror, 'Archive', 'sub', 'deep.txt'))).toBe('deep\n');
}

describe('a change of scope is never a delete', () => {
  it('exclude a synced folder, delete it here, include it again: nothing trashed on Box, and it is downloaded again', async () => {
    const { env, archiveId } = await archiveEnv();
    env.srv.control.clearRequests();

    await env.writeConfig({ folder: { exclude: ['/Archive'] } });
    const excluded = await env.syncOk();
    // Said once: the local copy stays, unsynced.
    expect(excluded.stderr).toMatch(/note: Archive\/ is now excluded by the config \(folders\[\]\.exclude\): the local copy stays where it is and is no longer synced/);
    expect(await exists(join(env.mirror, 'Archive', 'old.txt'))).toBe(true);
    const quiet = await env.syncOk();
    expect(quiet.stderr).not.toMatch(/now excluded/);

    await rm(join(env.mirror, 'Archive'), { recursive: true });
    const afterDelete = await env.syncOk();

    await env.writeConfig({ folder: { exclude: [] } });
    // The dry run shows what the real run does: the folder comes back, nothing goes to the trash.
    const dry = await env.sync(['--dry-run']);
    expect(dry.code, explain(dry)).toBe(0);
    expect(dry.stdout).toMatch(/note: Archive\/ is included again/);
    expect(dry.stdout).toMatch(/Archive\/old\.txt/);
    expect(dry.stdout).not.toMatch(/trash/);
    const included = await env.syncOk();
    expect(included.stderr).toMatch(/note: Archive\/ is included again: it is synced afresh/);

    expectNothingTrashed(env, [excluded, quiet, afterDelete, included]);
    expectArchiveOnBox(env, archiveId);
    await expectArchiveBack(env);
  });

  it('the same through a .boxsyncignore edit', async () => {
    const { env, archiveId } = await archiveEnv();
    env.srv.control.clearRequests();

    await writeText(join(env.mirror, '.boxsyncignore'), '/Archive\n');
    const excluded = await env.syncOk();
    expect(excluded.stderr).toMatch(/note: Archive\/ is now excluded by \.boxsyncignore/);
    await rm(join(env.mirror, 'Archive'), { recursive: true });
    const afterDelete = await env.syncOk();

    await writeText(join(env.mirror, '.boxsyncignore'), '# nothing excluded\n');
    const included = await env.syncOk();

    expectNothingTrashed(env, [excluded, afterDelete, included]);
    expectArchiveOnBox(env, archiveId);
    await expectArchiveBack(env);
    // The ignore file itself is synced like any other file.
    expect(env.web.listFolder(env.remoteRootId).map((i) => i.name).sort()).toEqual(['.boxsyncignore', 'Archive', 'keep.txt']);
  });

  it('a direction change: what download-only never passed on is not deleted by two-way', async () => {
    const { env, archiveId } = await archiveEnv({ direction: 'download-only' });
    env.srv.control.clearRequests();

    // Under download-only a local deletion stays local.
    await rm(join(env.mirror, 'Archive'), { recursive: true });
    await rm(join(env.mirror, 'keep.txt'));
    const afterDelete = await env.syncOk();
    expect(await exists(join(env.mirror, 'Archive'))).toBe(false);

    await env.writeConfig({ folder: { direction: 'two-way' } });
    const twoWay = await env.syncOk();
    expect(twoWay.stderr).toMatch(/note: the direction changed from download-only to two-way: 2 items gone on one side meanwhile \(Archive, keep\.txt\) are synced afresh instead of deleted/);

    expectNothingTrashed(env, [afterDelete, twoWay]);
    expectArchiveOnBox(env, archiveId);
    await expectArchiveBack(env);
    expect(await readText(join(env.mirror, 'keep.txt'))).toBe('keep\n');
  });

  it('a direction change to upload-only does not trash on Box what download-only left deleted here', async () => {
    const { env, archiveId } = await archiveEnv({ direction: 'download-only' });
    env.srv.control.clearRequests();
    await rm(join(env.mirror, 'Archive'), { recursive: true });
    const afterDelete = await env.syncOk();

    await env.writeConfig({ folder: { direction: 'upload-only' } });
    const uploadOnly = await env.syncOk();
    expectNothingTrashed(env, [afterDelete, uploadOnly]);
    expectArchiveOnBox(env, archiveId);
    // upload-only never writes here: Archive stays only on Box.
    expect(await exists(join(env.mirror, 'Archive'))).toBe(false);

    // And back to two-way: the Box folder comes down, nothing is deleted.
    await env.writeConfig({ folder: { direction: 'two-way' } });
    const twoWay = await env.syncOk();
    expectNothingTrashed(env, [twoWay]);
    await expectArchiveBack(env);
  });

  it('a folder pair removed from the config and added back is a first sync', async () => {
    const { env, archiveId } = await archiveEnv();
    const otherId = env.web.createFolder('0', 'Other').id;
    env.web.uploadFile(otherId, 'o.txt', 'other\n');
    const other = { remoteId: otherId, localPath: join(env.dir, 'other') };
    const both = [{ remoteId: env.remoteRootId, localPath: env.mirror }, other];
    await env.writeConfig({ extra: { folders: both } });
    await env.syncOk();
    env.srv.control.clearRequests();

    await env.writeConfig({ extra: { folders: [other] } });
    const removed = await env.syncOk();
    expect(removed.stderr).toMatch(/note: the folder pair .*mirror <-> Box folder \d+ is no longer in the config: its sync state \(3 files, 2 folders\) is forgotten/);
    await rm(join(env.mirror, 'Archive'), { recursive: true });
    const afterDelete = await env.syncOk();

    await env.writeConfig({ extra: { folders: both } });
    const back = await env.syncOk();

    expectNothingTrashed(env, [removed, afterDelete, back]);
    expectArchiveOnBox(env, archiveId);
    await expectArchiveBack(env);
    expect(await readText(join(env.dir, 'other', 'o.txt'))).toBe('other\n');
  });

  it('including a folder that exists here with other content keeps both sides, with a conflict copy where they differ', async () => {
    const env = await startSyncEnv();
    e = env;
    const archive = env.web.createFolder(env.remoteRootId, 'Archive');
    const a = env.web.uploadFile(archive.id, 'a.txt', 'a, first\n');
    env.web.uploadFile(archive.id, 'same.txt', 'same\n');
    env.web.uploadFile(archive.id, 'boxonly.txt', 'box only\n');
    await env.syncOk();
    await env.writeConfig({ folder: { exclude: ['/Archive'] } });
    await env.syncOk();
    env.srv.control.clearRequests();

    // While excluded: both sides change a.txt differently, a file is added here, one is deleted here.
    await writeText(join(env.mirror, 'Archive', 'a.txt'), 'a, edited here\n');
    await writeText(join(env.mirror, 'Archive', 'localonly.txt'), 'local only\n');
    await rm(join(env.mirror, 'Archive', 'boxonly.txt'));
    env.web.uploadVersion(a.id, 'a, edited on Box\n');
    const whileExcluded = await env.syncOk();

    await env.writeConfig({ folder: { exclude: [] } });
    const included = await env.sync();
    expect([0, 1], explain(included)).toContain(included.code);
    const settled = await env.syncOk();

    expectNothingTrashed(env, [whileExcluded, included, settled]);
    const local = (await listTree(join(env.mirror, 'Archive'))).filter((p) => !p.startsWith('a (conflicted copy'));
    expect(local).toEqual(['a.txt', 'boxonly.txt', 'localonly.txt', 'same.txt']);
    const copies = (await listTree(join(env.mirror, 'Archive'))).filter((p) => p.startsWith('a (conflicted copy'));
    expect(copies).toHaveLength(1);
    expect(await readText(join(env.mirror, 'Archive', 'a.txt'))).toBe('a, edited on Box\n');
    expect(await readText(join(env.mirror, 'Archive', copies[0]!))).toBe('a, edited here\n');
    expect(await readText(join(env.mirror, 'Archive', 'boxonly.txt'))).toBe('box only\n');
    const onBox = env.web.listFolder(archive.id).map((i) => i.name).sort();
    expect(onBox).toEqual([...copies, 'a.txt', 'boxonly.txt', 'localonly.txt', 'same.txt'].sort());
    expect(env.web.readFile(env.web.listFolder(archive.id).find((i) => i.name === 'localonly.txt')!.id).toString()).toBe('local only\n');
  });
});
