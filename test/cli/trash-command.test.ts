/**
 * `boxsync trash list|restore` end to end (real CLI, box-server on port 0, real mirror, journal and state trash):
 * a file trashed on Box leaves the mirror, is listed from both places (the Box trash, and the local trash the sync
 * moved the local copy into), and `trash restore PATH` brings it back with the same Box id; a name clash is refused
 * with a hint at --name; an item only the local trash still has comes back on disk and, after sync, on Box.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { TrashListResult } from '../../src/daemon/control/item-protocol.js';
import { createHarness, type Harness } from '../daemon/daemon-harness.js';
import { runCli, type CliResult } from '../support/cli.js';
import { waitFor } from '../support/wait.js';

const explain = (r: CliResult): string => `exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr.slice(-3000)}`;

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  extraEnv = {};
});

let extraEnv: NodeJS.ProcessEnv = {};
const cli = (args: readonly string[]): Promise<CliResult> =>
  runCli([...args, '--config', h!.configFile], { env: { BOXSYNC_LOG_LEVEL: 'warn', ...extraEnv }, timeoutMs: 60_000 });
async function ok(args: readonly string[]): Promise<CliResult> {
  const r = await cli(args);
  expect(r.code, explain(r)).toBe(0);
  return r;
}
const listed = async (path?: string): Promise<TrashListResult['entries']> =>
  (JSON.parse((await ok(['trash', 'list', ...(path ? [path] : []), '--json'])).stdout) as TrashListResult).entries;
const exists = (p: string): Promise<boolean> => readFile(p).then(() => true, () => false);

describe('boxsync trash', () => {
  it('without a daemon: Box trash -> listed from both places -> restore keeps the Box id; clash needs --name; local-trash-only restore reaches Box', async () => {
    h = await createHarness();
    const env = h;
    const keepId = env.web.uploadFile(env.rootId, 'keep.txt', 'precious').id;
    const dupId = env.web.uploadFile(env.rootId, 'dup.txt', 'old dup').id;
    const onlyLocalId = env.web.uploadFile(env.rootId, 'purged.txt', 'only the local trash has me').id;
    await ok(['sync', '--once']);

    env.web.trash('file', keepId);
    await ok(['sync', '--once']);
    const keepPath = join(env.mirror, 'keep.txt');
    expect(await exists(keepPath)).toBe(false);

    const entries = await listed();
    expect(entries.filter((e) => e.path === keepPath).map((e) => e.source).sort()).toEqual(['box', 'local']);
    expect(entries.find((e) => e.source === 'box')).toMatchObject({ id: keepId, kind: 'file', sizeBytes: 8 });
    expect((await ok(['trash', 'list'])).stdout).toMatch(new RegExp(`Box trash +${keepId} +file .* ${keepPath.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`));
    expect(await listed(join(env.mirror, 'other'))).toEqual([]);

    expect((await ok(['trash', 'restore', keepPath])).stdout).toContain(`restored Box file ${keepId} from the Box trash (same id)`);
    await ok(['sync', '--once']);
    expect(await readFile(keepPath, 'utf8')).toBe('precious');
    expect(env.web.findByPath('Mirror/keep.txt')?.id).toBe(keepId);
    expect((await listed()).filter((e) => e.source === 'box')).toEqual([]);

    // A clash: a new dup.txt took the name; the restore says to pick another with --name.
    env.web.trash('file', dupId);
    env.web.uploadFile(env.rootId, 'dup.txt', 'new dup');
    await ok(['sync', '--once']);
    const clash = await cli(['trash', 'restore', dupId]);
    expect(clash.code, explain(clash)).toBe(1);
    expect(clash.stderr).toContain('--name');
    await ok(['trash', 'restore', dupId, '--name', 'dup-old.txt']);
    await ok(['sync', '--once']);
    expect(await readFile(join(env.mirror, 'dup-old.txt'), 'utf8')).toBe('old dup');
    expect(env.web.findByPath('Mirror/dup-old.txt')?.id).toBe(dupId);

    // Gone from Box for good, still in boxsync's local trash: restored on disk, then uploaded.
    env.web.trash('file', onlyLocalId);
    await ok(['sync', '--once']);
    env.web.purge('file', onlyLocalId);
    const purgedPath = join(env.mirror, 'purged.txt');
    const local = (await listed(purgedPath)).filter((e) => e.path === purgedPath);
    expect(local.map((e) => e.source)).toEqual(['local']);
    expect((await ok(['trash', 'restore', purgedPath])).stdout).toContain('from the local trash');
    expect(await readFile(purgedPath, 'utf8')).toBe('only the local trash has me');
    await ok(['sync', '--once']);
    const back = env.web.findByPath('Mirror/purged.txt');
    expect(back).not.toBeNull();
    expect(env.web.readFile(back!.id).toString()).toBe('only the local trash has me');

    const nothing = await cli(['trash', 'restore', join(env.mirror, 'never-there.txt')]);
    expect(nothing.code, explain(nothing)).toBe(5);
    const outside = await cli(['trash', 'restore', join(env.dir, 'x.txt')]);
    expect(outside.code, explain(outside)).toBe(4);
  }, 240_000);

  it('a file the user deleted to the desktop trash (freedesktop mode) is listed and restored from there, and comes back on both sides', async () => {
    h = await createHarness({ config: { localTrash: { mode: 'freedesktop' } } });
    const env = h;
    const xdg = join(env.dir, 'xdg-data');
    extraEnv = { XDG_DATA_HOME: xdg };
    env.web.uploadFile(env.rootId, 'notes.txt', 'my notes');
    // Another file stays: deleting everything under a root (or a root that lists empty) is a guard of its own.
    env.web.uploadFile(env.rootId, 'stays.txt', 'stays');
    await ok(['sync', '--once']);
    const path = join(env.mirror, 'notes.txt');
    // What a file manager does: the .trashinfo first, then the rename into files/.
    await mkdir(join(xdg, 'Trash', 'info'), { recursive: true });
    await mkdir(join(xdg, 'Trash', 'files'), { recursive: true });
    await writeFile(join(xdg, 'Trash', 'info', 'notes.txt.trashinfo'), `[Trash Info]\nPath=${path.split('/').map(encodeURIComponent).join('/')}\nDeletionDate=2026-11-22T10:00:00\n`);
    await rename(path, join(xdg, 'Trash', 'files', 'notes.txt'));
    await ok(['sync', '--once']);
    expect(env.web.findByPath('Mirror/notes.txt')).toBeNull();

    const entries = (await listed()).filter((e) => e.path === path);
    expect(entries.map((e) => `${e.source} ${e.id}`).sort()).toEqual([expect.stringMatching(/^box \d+$/), 'local desktop:notes.txt']);
    expect((await ok(['trash', 'restore', 'desktop:notes.txt'])).stdout).toContain('from the local trash');
    expect(await readFile(path, 'utf8')).toBe('my notes');
    expect(await exists(join(xdg, 'Trash', 'info', 'notes.txt.trashinfo'))).toBe(false);
    await ok(['sync', '--once']);
    const back = env.web.findByPath('Mirror/notes.txt');
    expect(back).not.toBeNull();
    expect(env.web.readFile(back!.id).toString()).toBe('my notes');
  }, 180_000);

  it('through the daemon: a Box-trashed file leaves the mirror and comes back with the same id', async () => {
    h = await createHarness();
    const env = h;
    const id = env.web.uploadFile(env.rootId, 'doc.txt', 'keep me').id;
    // Another file stays: deleting everything under a root is a guard of its own.
    env.web.uploadFile(env.rootId, 'stays.txt', 'stays');
    await env.start();
    const path = join(env.mirror, 'doc.txt');
    await waitFor(() => exists(path), { timeoutMs: 30_000, what: 'doc.txt in the mirror' });
    env.web.trash('file', id);
    await waitFor(async () => !(await exists(path)), { timeoutMs: 30_000, what: 'doc.txt to leave the mirror' });
    expect((await listed()).some((e) => e.source === 'box' && e.id === id && e.path === path)).toBe(true);
    expect((await ok(['trash', 'restore', path])).stdout).toContain('the daemon brings it down now');
    await waitFor(async () => (await readFile(path, 'utf8').catch(() => null)) === 'keep me', { timeoutMs: 30_000, what: 'doc.txt to come back' });
    expect(env.web.findByPath('Mirror/doc.txt')?.id).toBe(id);
  }, 180_000);
});
