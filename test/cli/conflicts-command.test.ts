/**
 * `boxsync conflicts` and `boxsync conflicts resolve` end to end (real CLI, box-server on port 0, real mirror and
 * journal): a conflict made by sync is listed with both sides' sizes and times; once the user deletes the copy it
 * is no longer listed, through the daemon and after a daemon restart too; `resolve --keep local|remote|both`
 * settles one and the next sync carries the choice to Box.
 */
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sendControl } from '../../src/daemon/control/control-client.js';
import type { DaemonStatus } from '../../src/daemon/control/control-protocol.js';
import type { ConflictsResult } from '../../src/daemon/control/item-protocol.js';
import { createHarness, type Harness } from '../daemon/daemon-harness.js';
import { runCli, type CliResult } from '../support/cli.js';
import { waitFor } from '../support/wait.js';

const explain = (r: CliResult): string => `exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr.slice(-3000)}`;

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function cli(args: readonly string[]): Promise<CliResult> {
  return runCli([...args, '--config', h!.configFile], { env: { BOXSYNC_LOG_LEVEL: 'warn' }, timeoutMs: 60_000 });
}
async function ok(args: readonly string[]): Promise<CliResult> {
  const r = await cli(args);
  expect(r.code, explain(r)).toBe(0);
  return r;
}
async function listed(): Promise<ConflictsResult['conflicts']> {
  return (JSON.parse((await ok(['conflicts', '--json'])).stdout) as ConflictsResult).conflicts;
}
const copies = async (dir: string): Promise<string[]> => (await readdir(dir)).filter((n) => n.includes('(conflicted copy'));

/** Both sides edited `doc.txt` since the last sync: the next sync makes a conflict copy. */
async function makeConflict(env: Harness, fileId: string, mine: string, theirs: string): Promise<void> {
  await writeFile(join(env.mirror, 'doc.txt'), mine);
  env.web.uploadVersion(fileId, theirs);
}

describe('boxsync conflicts', () => {
  it('without a daemon: lists a conflict with both sides, forgets a copy the user deleted, and resolve settles one', async () => {
    h = await createHarness();
    const env = h;
    const fileId = env.web.uploadFile(env.rootId, 'doc.txt', 'base').id;
    await ok(['sync', '--once']);
    await makeConflict(env, fileId, 'mine', 'theirs!');
    await ok(['sync', '--once']);
    expect(await copies(env.mirror)).toHaveLength(1);

    const [c] = await listed();
    expect(c).toMatchObject({ originalPath: join(env.mirror, 'doc.txt'), local: { sizeBytes: 4 }, remote: { boxId: fileId, sizeBytes: 7 } });
    expect(c!.copyPath).toContain('doc (conflicted copy ');
    const text = (await ok(['conflicts'])).stdout;
    expect(text).toContain('conflicts with: ' + join(env.mirror, 'doc.txt'));
    expect(text).toMatch(/yours \(local\): {2}4 B, modified \S+/);
    expect(text).toMatch(/Box version: {4}7 B, modified \S+ \(Box file \d+\)/);

    // The user deletes the copy: it is no longer listed, before and after the next sync.
    await rm(c!.copyPath);
    expect(await listed()).toEqual([]);
    await ok(['sync', '--once']);
    expect(await listed()).toEqual([]);

    // keep local: the copy's content replaces the original, and Box gets it as a new version.
    await makeConflict(env, fileId, 'mine again', 'theirs again');
    await ok(['sync', '--once']);
    expect(await listed()).toHaveLength(1);
    const settled = await ok(['conflicts', 'resolve', join(env.mirror, 'doc.txt'), '--keep', 'local']);
    expect(settled.stdout).toContain('kept your version as');
    expect(await readFile(join(env.mirror, 'doc.txt'), 'utf8')).toBe('mine again');
    await ok(['sync', '--once']);
    expect(env.web.readFile(fileId).toString()).toBe('mine again');
    expect(await copies(env.mirror)).toEqual([]);
    expect(await listed()).toEqual([]);

    // keep remote: the copy goes to the local trash; keep both: it gets a plain name.
    await makeConflict(env, fileId, 'mine 3', 'theirs 3');
    await ok(['sync', '--once']);
    const [third] = await listed();
    await ok(['conflicts', 'resolve', third!.copyPath, '--keep', 'remote']);
    expect(await copies(env.mirror)).toEqual([]);
    expect(await readFile(join(env.mirror, 'doc.txt'), 'utf8')).toBe('theirs 3');

    await makeConflict(env, fileId, 'mine 4', 'theirs 4');
    await ok(['sync', '--once']);
    await ok(['conflicts', 'resolve', join(env.mirror, 'doc.txt'), '--keep', 'both']);
    expect(await readFile(join(env.mirror, 'doc (2).txt'), 'utf8')).toBe('mine 4');
    await ok(['sync', '--once']);
    expect(await listed()).toEqual([]);
    expect(env.web.findByPath('Mirror/doc (2).txt')).not.toBeNull();

    const none = await cli(['conflicts', 'resolve', join(env.mirror, 'doc.txt'), '--keep', 'local']);
    expect(none.code, explain(none)).toBe(1);
    expect(none.stderr).toContain('has no conflict copy');
  }, 180_000);

  it('through the daemon: listed, gone once the user deletes the copy, and still gone after a restart', async () => {
    h = await createHarness();
    const env = h;
    const fileId = env.web.uploadFile(env.rootId, 'doc.txt', 'base').id;
    let run = await env.start();
    await env.stop(run);
    await makeConflict(env, fileId, 'mine', 'theirs!');
    run = await env.start();
    await waitFor(async () => (await copies(env.mirror)).length === 1, { timeoutMs: 30_000, what: 'the conflict copy' });
    const [c] = await waitFor(async () => {
      const l = await listed();
      return l.length === 1 ? l : null;
    }, { timeoutMs: 30_000, what: 'the conflict in the listing' });
    expect(c).toMatchObject({ originalPath: join(env.mirror, 'doc.txt'), local: { sizeBytes: 4 }, remote: { sizeBytes: 7 } });

    const before = (await env.status()).passes;
    await rm(c!.copyPath);
    expect(await listed()).toEqual([]);
    // The daemon sees the deletion (and trashes the copy's Box item); the journal forgets the copy.
    await waitFor(async () => {
      const s = await sendControl<DaemonStatus>(env.socketPath, { verb: 'status' });
      return s.passes > before && s.engine.phase === 'idle' && env.web.findByPath(`Mirror/${c!.copyPath.split('/').pop()}`) === null;
    }, { timeoutMs: 30_000, what: 'the daemon to take the deletion to Box' });
    expect(await listed()).toEqual([]);

    await env.stop(run);
    await env.start();
    expect(await listed()).toEqual([]);
  }, 180_000);

  it('a path: only the copies under it are listed (the path may be a copy itself)', async () => {
    h = await createHarness();
    const env = h;
    const ids = ['a', 'b'].map((d) => env.web.uploadFile(env.web.createFolder(env.rootId, d).id, 'doc.txt', 'base').id);
    await ok(['sync', '--once']);
    for (const [i, d] of ['a', 'b'].entries()) {
      await writeFile(join(env.mirror, d, 'doc.txt'), `mine ${d}`);
      env.web.uploadVersion(ids[i]!, `theirs ${d}!`);
    }
    await ok(['sync', '--once']);
    const under = async (path: string): Promise<string[]> =>
      (JSON.parse((await ok(['conflicts', path, '--json'])).stdout) as ConflictsResult).conflicts.map((c) => c.originalPath);
    expect((await listed()).map((c) => c.originalPath).sort()).toEqual([join(env.mirror, 'a', 'doc.txt'), join(env.mirror, 'b', 'doc.txt')]);
    expect(await under(join(env.mirror, 'a'))).toEqual([join(env.mirror, 'a', 'doc.txt')]);
    const [copy] = await copies(join(env.mirror, 'b'));
    expect(await under(join(env.mirror, 'b', copy!))).toEqual([join(env.mirror, 'b', 'doc.txt')]);
  });
});
