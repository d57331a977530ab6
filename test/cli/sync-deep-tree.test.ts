/**
 * A deep new tree converges in one `sync --once`. A pass never batches a folder with what is inside it, so a
 * chain of new folders used to take a pass per level, and 150 levels stopped at the pass limit (50) with "the
 * plan did not settle", taking four runs. Now a folder the pass creates is followed at once by what it allows
 * inside it (src/engine/follow-ups.ts), in both directions.
 */
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { DryRunReport } from '../../src/engine/dry-run.js';
import { explain, startSyncEnv, type SyncEnv } from './sync-harness.js';

const LEVELS = 150;

/** The passes the run's summary line counts ("(N passes)"). */
function passes(out: string): number {
  const m = /\((\d+) pass(?:es)?\)|, (\d+) pass(?:es)?\)/.exec(out);
  expect(m, out).not.toBeNull();
  return Number(m![1] ?? m![2]);
}
const names = Array.from({ length: LEVELS }, (_, i) => `d${String(i).padStart(3, '0')}`);
let e: (SyncEnv & { remoteRootId: string }) | undefined;

/** One `sync --once` converges (one pass creates the chain, the next finds nothing, a third at most for what it linked), and a second run has nothing to write. */
async function convergesInOneRun(env: SyncEnv): Promise<void> {
  const r = await env.sync([], { timeoutMs: 180_000 });
  expect(r.code, explain(r)).toBe(0);
  expect(r.stdout + r.stderr).not.toMatch(/did not settle/);
  expect(passes(r.stdout)).toBeLessThanOrEqual(3);
  env.srv.control.clearRequests();
  const again = await env.sync([], { timeoutMs: 180_000 });
  expect(again.code, explain(again)).toBe(0);
  expect(env.srv.control.requests().filter((q) => q.method !== 'GET' && q.method !== 'OPTIONS')).toEqual([]);
}
afterEach(async () => {
  await e?.close();
  e = undefined;
});

describe(`a chain of ${LEVELS} new nested folders`, () => {
  it('made here reaches Box in one run, with the file at its bottom', async () => {
    e = await startSyncEnv();
    const deepest = join(e.mirror, ...names);
    await mkdir(deepest, { recursive: true });
    await writeFile(join(deepest, 'bottom.txt'), 'at the bottom');
    // The dry run predicts the same: every folder and the file in the first pass.
    const dry = await e.sync(['-n', '--json'], { timeoutMs: 180_000 });
    expect(dry.code, explain(dry)).toBe(0);
    const predicted = (JSON.parse(dry.stdout) as DryRunReport).roots[0]!;
    expect(predicted.notes).toEqual([]);
    expect(predicted.ops).toHaveLength(LEVELS + 1);
    expect(new Set(predicted.ops.map((o) => o.pass))).toEqual(new Set([1]));
    await convergesInOneRun(e);
    const bottom = e.web.findByPath(['Mirror', ...names, 'bottom.txt'].join('/'));
    expect(bottom?.type).toBe('file');
    expect(e.web.readFile(bottom!.id).toString()).toBe('at the bottom');
  }, 240_000);

  it('made on Box reaches the disk in one run, with the file at its bottom', async () => {
    e = await startSyncEnv();
    let parent = e.remoteRootId;
    for (const n of names) parent = e.web.createFolder(parent, n).id;
    e.web.uploadFile(parent, 'bottom.txt', 'from Box');
    await convergesInOneRun(e);
    expect(await readFile(join(e.mirror, ...names, 'bottom.txt'), 'utf8')).toBe('from Box');
  }, 240_000);

  // What a new folder is followed with is only ever a creation inside it: an item moved into it is still a move.
  it('a file moved into a new folder, here or on Box, is moved (same Box id, same inode), not created again', async () => {
    e = await startSyncEnv();
    await mkdir(e.mirror, { recursive: true });
    await writeFile(join(e.mirror, 'here.txt'), 'moved here');
    e.web.uploadFile(e.remoteRootId, 'there.txt', 'moved on Box');
    const first = await e.sync();
    expect(first.code, explain(first)).toBe(0);
    const hereId = e.web.findByPath('Mirror/here.txt')!.id;
    const thereInode = (await stat(join(e.mirror, 'there.txt'))).ino;

    await mkdir(join(e.mirror, 'New Here', 'deeper'), { recursive: true });
    await rename(join(e.mirror, 'here.txt'), join(e.mirror, 'New Here', 'deeper', 'here.txt'));
    const newOnBox = e.web.createFolder(e.remoteRootId, 'New There');
    e.web.move('file', e.web.findByPath('Mirror/there.txt')!.id, newOnBox.id);
    const r = await e.sync();
    expect(r.code, explain(r)).toBe(0);
    expect(e.web.findByPath('Mirror/New Here/deeper/here.txt')?.id).toBe(hereId);
    expect(e.web.findByPath('Mirror/here.txt')).toBeNull();
    expect((await stat(join(e.mirror, 'New There', 'there.txt'))).ino).toBe(thereInode);
    expect(e.srv.control.requests().filter((q) => q.method === 'POST' && /\/files\/content$/.test(q.path) && q.status === 201)).toHaveLength(1);
  }, 120_000);

  it('a file moved on Box into a chain of new folders is moved here (same inode), not trashed and lost', async () => {
    e = await startSyncEnv();
    await mkdir(e.mirror, { recursive: true });
    const f = e.web.uploadFile(e.remoteRootId, 'there.txt', 'moved on Box');
    const first = await e.sync();
    expect(first.code, explain(first)).toBe(0);
    const inode = (await stat(join(e.mirror, 'there.txt'))).ino;
    let parent = e.remoteRootId;
    for (const n of ['one', 'two', 'three']) parent = e.web.createFolder(parent, n).id;
    e.web.move('file', f.id, parent);
    const r = await e.sync();
    expect(r.code, explain(r)).toBe(0);
    expect((await stat(join(e.mirror, 'one', 'two', 'three', 'there.txt'))).ino).toBe(inode);
    expect(r.stderr).not.toMatch(/local-trash/);
  }, 120_000);
});
