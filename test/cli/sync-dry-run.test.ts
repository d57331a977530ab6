/**
 * `boxsync sync --once --dry-run` (`-n`) end to end: the real CLI against box-server on port 0, a real mirror and
 * a real journal. The printed plan is exactly what the next real run does (operation, path and reason, as a
 * multiset: a batch runs concurrently), and the dry run changes nothing: no write reaches Box, the mirror (names,
 * content, mtimes) and the journal file are byte for byte the same afterwards.
 */
import { createHash } from 'node:crypto';
import { readFile, rm, stat, rename as fsRename } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { DryRunReport } from '../../src/engine/dry-run.js';
import { explain, listTree, startSyncEnv, writeRequests, writeText, type SyncEnv } from './sync-harness.js';

let e: (SyncEnv & { remoteRootId: string }) | undefined;
afterEach(async () => {
  await e?.close();
  e = undefined;
});

/** Every entry of the mirror with its content hash and mtime: what "nothing changed on disk" compares. */
async function fingerprint(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const rel of await listTree(dir)) {
    const st = await stat(join(dir, rel));
    out.push(rel.endsWith('/') ? rel : `${rel} ${st.size} ${st.mtimeMs} ${createHash('sha1').update(await readFile(join(dir, rel))).digest('hex')}`);
  }
  return out;
}

async function fileHash(path: string): Promise<string> {
  return createHash('sha1').update(await readFile(path)).digest('hex');
}

/** The operation lines a real `sync --once` prints on stderr (non-TTY): `kind  path  (reason)`. */
function executedOps(stderr: string): string[] {
  const out: string[] = [];
  for (const line of stderr.split('\n')) {
    const m = /^([a-z-]+) +(.+?) {2}\((.*)\)$/.exec(line);
    if (m) out.push(`${m[1]} ${m[2]} (${m[3]})`);
  }
  return out.sort();
}

function plannedOps(report: DryRunReport): string[] {
  return report.roots.flatMap((r) => r.ops.map((o) => `${o.kind} ${o.path} (${o.reason})`)).sort();
}

describe('sync --once --dry-run', () => {
  it('prints the plan of the next run for changes on both sides, changes nothing, and the next real run does exactly that', async () => {
    e = await startSyncEnv();
    const env = e;
    const keep = env.web.uploadFile(env.remoteRootId, 'keep.txt', 'keep').id;
    const edited = env.web.uploadFile(env.remoteRootId, 'edited-on-box.txt', 'v1').id;
    const trashed = env.web.uploadFile(env.remoteRootId, 'trashed-on-box.txt', 'bye').id;
    env.web.uploadFile(env.remoteRootId, 'deleted-here.txt', 'bye too');
    env.web.uploadFile(env.remoteRootId, 'renamed-here.txt', 'moving');
    env.web.uploadFile(env.remoteRootId, 'edited-here.txt', 'h1');
    await env.syncOk();
    expect(keep).toBeTruthy();

    // Box side: a new file in a new folder (downloaded in the pass that creates the folder), an edit, a trash.
    const folder = env.web.createFolder(env.remoteRootId, 'From Box');
    env.web.uploadFile(folder.id, 'inside.txt', 'from the web');
    env.web.uploadVersion(edited, 'v2 from the web');
    env.web.trash('file', trashed);
    // Local side: a new folder with two files (created on Box, then uploaded into it), an edit, a delete, a rename.
    await writeText(join(env.mirror, 'Made Here', 'one.txt'), 'one');
    await writeText(join(env.mirror, 'Made Here', 'two.txt'), 'two');
    await writeText(join(env.mirror, 'edited-here.txt'), 'h2, longer');
    await rm(join(env.mirror, 'deleted-here.txt'));
    await fsRename(join(env.mirror, 'renamed-here.txt'), join(env.mirror, 'renamed-now.txt'));

    const before = await fingerprint(env.mirror);
    const journalBefore = await fileHash(join(env.stateDir, 'journal.db'));
    env.srv.control.clearRequests();

    const json = await env.sync(['--dry-run', '--json']);
    expect(json.code, explain(json)).toBe(0);
    const report = JSON.parse(json.stdout) as DryRunReport;
    const readable = await env.sync(['-n']);
    expect(readable.code, explain(readable)).toBe(0);
    expect(readable.stdout).toContain('dry run: nothing was changed');
    expect(readable.stdout).toContain('safety guards: would not stop this run');
    expect(readable.stdout).toMatch(/pass 1:\n(?: {4}.*\n)* {4}upload +Made Here\/(one|two)\.txt/);

    // Nothing changed anywhere.
    expect(writeRequests(env.srv), 'no write reached Box').toEqual([]);
    expect(await fingerprint(env.mirror)).toEqual(before);
    expect(await fileHash(join(env.stateDir, 'journal.db'))).toBe(journalBefore);

    const planned = plannedOps(report);
    expect(report.guarded).toBe(false);
    expect(report.roots[0]!.guard).toBeNull();
    expect(planned.map((l) => l.split(' (')[0])).toEqual(
      [
        'create-local-folder From Box',
        'create-remote-folder Made Here',
        'download From Box/inside.txt',
        'download edited-on-box.txt',
        'local-trash trashed-on-box.txt',
        'remote-move renamed-now.txt',
        'remote-trash deleted-here.txt',
        'upload Made Here/one.txt',
        'upload Made Here/two.txt',
        'upload-version edited-here.txt',
      ].sort(),
    );
    // The uploads follow their new folder in the same pass (engine/follow-ups.ts), as in the real run.
    expect(report.roots[0]!.ops.filter((o) => o.path.startsWith('Made Here/')).map((o) => o.pass)).toEqual([1, 1]);
    expect(report.roots[0]!.ops.filter((o) => o.path.startsWith('From Box/')).map((o) => o.pass)).toEqual([1]);

    const real = await env.sync();
    expect(real.code, explain(real)).toBe(0);
    expect(executedOps(real.stderr)).toEqual(planned);

    // And now there is nothing left to plan.
    const after = await env.sync(['-n', '--json']);
    expect(after.code, explain(after)).toBe(0);
    expect((JSON.parse(after.stdout) as DryRunReport).total).toBe(0);
  });

  it('says what the mass-delete guard would do, with exit code 3, and deletes nothing', async () => {
    e = await startSyncEnv();
    const env = e;
    for (const n of ['a', 'b', 'c', 'd']) env.web.uploadFile(env.remoteRootId, `${n}.txt`, n);
    await env.syncOk();
    await env.writeConfig({ extra: { safety: { maxDeletes: 2, maxDeleteFraction: 0.5 } } });
    for (const n of ['a', 'b', 'c']) await rm(join(env.mirror, `${n}.txt`));
    env.srv.control.clearRequests();

    const r = await env.sync(['-n']);
    expect(r.code, explain(r)).toBe(3);
    expect(r.stdout).toMatch(/safety guard WOULD STOP this root \(mass-delete:[^:]+:3\): refusing to delete 3 of 4 synced items/);
    expect(r.stdout).toContain('sync --once would exit 3');
    expect(writeRequests(env.srv)).toEqual([]);
    expect(env.web.listFolder(env.remoteRootId).map((i) => i.name).sort()).toEqual(['a.txt', 'b.txt', 'c.txt', 'd.txt']);

    const real = await env.sync();
    expect(real.code, explain(real)).toBe(3);
  });

  it('is refused while another boxsync holds the state dir (exit 2), naming its pid and what to do', async () => {
    e = await startSyncEnv();
    const env = e;
    const { acquireStateLock } = await import('../../src/daemon/lock.js');
    for (const purpose of ['daemon', 'sync --once'] as const) {
      const lock = acquireStateLock(env.stateDir, purpose);
      try {
        const r = await env.sync(['--dry-run']);
        expect(r.code, explain(r)).toBe(2);
        expect(r.stderr).toContain(`pid ${process.pid}`);
        expect(r.stderr).toContain(purpose === 'daemon' ? 'boxsync status' : 'Wait for it to finish');
      } finally {
        lock.release();
      }
    }
  });
});
