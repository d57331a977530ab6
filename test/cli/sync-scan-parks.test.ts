/**
 * Issue 26, points 2, 3 and the local half of 4, against the real CLI and box-server:
 * - one unreadable file or folder (EACCES), a path longer than PATH_MAX (ENAMETOOLONG) or a name that is not
 *   UTF-8 parks that entry, with its reason, and the rest of the run goes on; nothing below what could not be
 *   read is deleted on either side;
 * - a park on a condition clears itself once the cause is gone (the next `sync --once` re-checks it);
 * - `boxsync retry` makes the next run try parked items again.
 * Tests run as root, where permissions deny nothing: the CLI runs as `nobody` over a temp dir given to it
 * (test/support/run-as.ts), and the permission cases are skipped, saying why, when no such user can be had.
 */
import { spawnSync } from 'node:child_process';
import { chmod, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { giveTo, unprivilegedUser } from '../support/run-as.js';
import { exists, explain, listTree, readText, startSyncEnv, writeRequests, writeText, type SyncEnv } from './sync-harness.js';

const envs: SyncEnv[] = [];
const deepTrees: string[] = [];
afterEach(async () => {
  // fs.rm walks by full paths and fails past PATH_MAX; rm -rf walks by descriptors.
  for (const d of deepTrees.splice(0)) spawnSync('rm', ['-rf', d]);
  for (const e of envs.splice(0)) await e.close();
});

const user = unprivilegedUser();
const as = 'as' in user ? user.as : undefined;
const asUser = as === undefined ? describe.skip : describe;
if (as === undefined) console.warn(`sync-scan-parks: permission cases skipped: ${'skip' in user ? user.skip : ''}`);

async function env(): Promise<SyncEnv & { remoteRootId: string }> {
  const e = await startSyncEnv();
  envs.push(e);
  return e;
}

/** The PARKED lines of a run's end-of-run list. */
const parkedLines = (stdout: string): string[] => stdout.split('\n').filter((l) => l.startsWith('  PARKED '));

/** Failed operations of one path in the journal's history (a retried item adds one). */
function failedAttempts(stateDir: string, path: string): number {
  const db = new Database(join(stateDir, 'journal.db'), { readonly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM operations WHERE path = ? AND ok = 0').get(path) as { n: number }).n;
  } finally {
    db.close();
  }
}

asUser('as an unprivileged user', () => {
  const runAs = as!;

  it('an unreadable folder and an unreadable file are parked with their reason; the rest syncs, nothing is deleted, and fixing the permissions clears them', async () => {
    const e = await env();
    e.web.uploadFile(e.remoteRootId, 'a.txt', 'a');
    const docs = e.web.createFolder(e.remoteRootId, 'docs');
    const b = e.web.uploadFile(docs.id, 'b.txt', 'b v1');
    giveTo(e.dir, runAs);
    const first = await e.sync([], { as: runAs });
    expect(first.code, explain(first)).toBe(0);

    await chmod(join(e.mirror, 'docs'), 0o000);
    await writeText(join(e.mirror, 'new.txt'), 'new');
    await writeText(join(e.mirror, 'secret.txt'), 'secret');
    giveTo(join(e.mirror, 'new.txt'), runAs);
    giveTo(join(e.mirror, 'secret.txt'), runAs);
    await chmod(join(e.mirror, 'secret.txt'), 0o000);
    e.web.uploadFile(e.remoteRootId, 'remote-new.txt', 'from box');
    // Changed on Box below the folder that cannot be read: it waits for the folder, and comes down once it can.
    e.web.uploadVersion(b.id, 'b v2 from box');
    e.srv.control.clearRequests();

    const r = await e.sync([], { as: runAs });
    expect(r.code, explain(r)).toBe(1);
    expect(parkedLines(r.stderr).sort(), explain(r)).toEqual([
      expect.stringMatching(/^ {2}PARKED docs: reading the folder docs failed \(EACCES\); permission denied: this item is skipped until its permissions change/),
      expect.stringMatching(/^ {2}PARKED secret\.txt: hashing secret\.txt failed \(EACCES\); permission denied/),
    ]);
    // The rest of the run went on: the new local file is on Box, the new Box file is here.
    expect(e.web.listFolder(e.remoteRootId).map((i) => i.name).sort()).toEqual(['a.txt', 'docs', 'new.txt', 'remote-new.txt']);
    expect(await readText(join(e.mirror, 'remote-new.txt'))).toBe('from box');
    // Nothing below the folder that could not be read was taken for deleted.
    expect(e.web.listFolder(docs.id).map((i) => i.name)).toEqual(['b.txt']);
    expect(writeRequests(e.srv).filter((q) => q.method === 'DELETE')).toEqual([]);

    await chmod(join(e.mirror, 'docs'), 0o755);
    await chmod(join(e.mirror, 'secret.txt'), 0o644);
    const fixed = await e.sync([], { as: runAs });
    expect(fixed.code, explain(fixed)).toBe(0);
    expect(parkedLines(fixed.stderr)).toEqual([]);
    expect(e.web.listFolder(e.remoteRootId).map((i) => i.name).sort()).toEqual(['a.txt', 'docs', 'new.txt', 'remote-new.txt', 'secret.txt']);
    expect(await listTree(e.mirror)).toEqual(['a.txt', 'docs/', 'docs/b.txt', 'new.txt', 'remote-new.txt', 'secret.txt']);
    expect(await readText(join(e.mirror, 'docs', 'b.txt'))).toBe('b v2 from box');
  });

  it('a sync root that cannot be listed is parked and listed; nothing on Box is touched, and it syncs once readable', async () => {
    const e = await env();
    e.web.uploadFile(e.remoteRootId, 'a.txt', 'a');
    giveTo(e.dir, runAs);
    expect((await e.sync([], { as: runAs })).code).toBe(0);
    // Search but no read permission: its entries can be reached by name (.boxsyncignore is read), not listed.
    await chmod(e.mirror, 0o300);
    e.web.uploadFile(e.remoteRootId, 'b.txt', 'b');
    e.srv.control.clearRequests();
    const r = await e.sync([], { as: runAs });
    expect(r.code, explain(r)).toBe(1);
    expect(parkedLines(r.stderr), explain(r)).toEqual([expect.stringMatching(/^ {2}PARKED \(the synced folder itself\): reading the folder .*mirror failed \(EACCES\)/)]);
    expect(writeRequests(e.srv)).toEqual([]);
    await chmod(e.mirror, 0o755);
    const fixed = await e.sync([], { as: runAs });
    expect(fixed.code, explain(fixed)).toBe(0);
    expect(await listTree(e.mirror)).toEqual(['a.txt', 'b.txt']);
  });

  it('downloads parked in a read-only folder come down by themselves after chmod 755, on the next plain sync --once', async () => {
    const e = await env();
    const docs = e.web.createFolder(e.remoteRootId, 'docs');
    const b = e.web.uploadFile(docs.id, 'b.txt', 'b v1');
    giveTo(e.dir, runAs);
    expect((await e.sync([], { as: runAs })).code).toBe(0);

    await chmod(join(e.mirror, 'docs'), 0o555);
    e.web.uploadVersion(b.id, 'b v2 from box');
    e.web.uploadFile(docs.id, 'c.txt', 'c from box');
    const parked = await e.sync([], { as: runAs });
    expect(parked.code, explain(parked)).toBe(1);
    expect(parkedLines(parked.stderr), explain(parked)).toHaveLength(2);
    expect(parked.stderr).toMatch(/skipped until its permissions change/);
    // Still parked while nothing changed: a plain run does not try them again.
    const again = await e.sync([], { as: runAs });
    expect(again.code).toBe(1);
    expect(failedAttempts(e.stateDir, 'docs/c.txt')).toBe(1);

    await chmod(join(e.mirror, 'docs'), 0o755);
    const fixed = await e.sync([], { as: runAs });
    expect(fixed.code, explain(fixed)).toBe(0);
    expect(parkedLines(fixed.stderr)).toEqual([]);
    expect(await readText(join(e.mirror, 'docs', 'b.txt'))).toBe('b v2 from box');
    expect(await readText(join(e.mirror, 'docs', 'c.txt'))).toBe('c from box');
  });

  it('boxsync retry (no daemon) makes the next run try a parked item again; retry PATH only that one', async () => {
    const e = await env();
    const docs = e.web.createFolder(e.remoteRootId, 'docs');
    const other = e.web.createFolder(e.remoteRootId, 'other');
    giveTo(e.dir, runAs);
    expect((await e.sync([], { as: runAs })).code).toBe(0);
    await chmod(join(e.mirror, 'docs'), 0o555);
    await chmod(join(e.mirror, 'other'), 0o555);
    e.web.uploadFile(docs.id, 'c.txt', 'c');
    e.web.uploadFile(other.id, 'o.txt', 'o');
    expect((await e.sync([], { as: runAs })).code).toBe(1);
    expect(failedAttempts(e.stateDir, 'docs/c.txt')).toBe(1);

    const retried = await runCli(['retry', join(e.mirror, 'docs'), '--config', e.configFile], { as: runAs });
    expect(retried.code, explain(retried)).toBe(0);
    expect(retried.stdout).toMatch(/^1 item to try again at the next run/);
    expect(retried.stdout).toContain('docs/c.txt (permission_denied)');
    const next = await e.sync([], { as: runAs });
    expect(next.code, explain(next)).toBe(1);
    // Tried again (the cause is still there, so it is parked again); the other park was left alone.
    expect(failedAttempts(e.stateDir, 'docs/c.txt')).toBe(2);
    expect(failedAttempts(e.stateDir, 'other/o.txt')).toBe(1);

    const all = await runCli(['retry', '--config', e.configFile], { as: runAs });
    expect(all.stdout).toMatch(/^2 items to try again at the next run/);
    await e.sync([], { as: runAs });
    expect(failedAttempts(e.stateDir, 'other/o.txt')).toBe(2);
  });
});

describe('as any user', () => {
  it('a path longer than PATH_MAX is parked as too long here; everything else syncs', async () => {
    const e = await env();
    await writeText(join(e.mirror, 'ok.txt'), 'ok');
    // 22 nested folders of 200 bytes: about 4,400 bytes below the mirror, built one relative step at a time.
    const seg = 'd'.repeat(200);
    deepTrees.push(join(e.mirror, seg));
    const build = `const fs = require('node:fs'); for (let i = 0; i < 22; i++) { fs.mkdirSync(${JSON.stringify(seg)}); process.chdir(${JSON.stringify(seg)}); } fs.writeFileSync('deep.txt', 'deep');`;
    const r = spawnSync(process.execPath, ['-e', build], { cwd: e.mirror });
    expect(r.status, String(r.stderr)).toBe(0);

    const run = await e.sync();
    expect(run.code, explain(run)).toBe(1);
    const parked = parkedLines(run.stderr);
    expect(parked, explain(run)).toHaveLength(1);
    expect(parked[0]).toMatch(/failed \(ENAMETOOLONG\); the name is too long for this file system/);
    expect(run.stdout).not.toMatch(/unexpected error/);
    expect(e.web.listFolder(e.remoteRootId).map((i) => i.name).sort()).toEqual([seg, 'ok.txt']);
    // Parked on every run until it is fixed.
    const again = await e.sync();
    expect(again.code).toBe(1);
    expect(parkedLines(again.stderr)).toEqual(parked);
  });

  it('a local name that is not UTF-8 is parked and shown escaped on every run (exit 1), and syncs once renamed', async () => {
    const e = await env();
    await writeText(join(e.mirror, 'ok.txt'), 'ok');
    const bad = Buffer.concat([Buffer.from(`${e.mirror}/`), Buffer.from([0x61, 0xff, 0xfe])]);
    await writeFile(bad, 'bad bytes');

    const run = await e.sync();
    expect(run.code, explain(run)).toBe(1);
    expect(parkedLines(run.stderr), explain(run)).toEqual(['  PARKED a\\xff\\xfe: this name is not valid UTF-8 (Box names are Unicode); it is not synced until it is renamed']);
    expect(e.web.listFolder(e.remoteRootId).map((i) => i.name)).toEqual(['ok.txt']);
    const again = await e.sync();
    expect(again.code).toBe(1);
    expect(parkedLines(again.stderr)).toHaveLength(1);

    await rename(bad, join(e.mirror, 'renamed.txt'));
    const fixed = await e.sync();
    expect(fixed.code, explain(fixed)).toBe(0);
    expect(e.web.listFolder(e.remoteRootId).map((i) => i.name).sort()).toEqual(['ok.txt', 'renamed.txt']);
    expect(await exists(join(e.mirror, 'renamed.txt'))).toBe(true);
  });
});
