/**
 * `sync --once` on a mirror the last run left converged (the clean mark set: it plans only what changed) still
 * finds a change anywhere: an edit deep in the tree (a file's content changed in place, its folder's listing
 * unchanged), a file added and one removed in the mirror, 100 edits on each side (the bench's edits,
 * test/bench/edits.ts, each found: the walk reads folders ahead while it compares others with the journal), and a new
 * file whose name's bytes are not UTF-8. The mirror is the bench's synthetic
 * "already mirrored" tree (test/bench/journal-fixture.ts, checked against a real first mirror by its test), real
 * box-server, the real CLI. The first run marks every folder (listing marks: engine/observe-local.ts), so the changes
 * after it are found by runs that skip the folders whose listing did not change.
 */
import { appendFileSync, existsSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { startBoxServer, type BoxServer } from '../../src/box-server/index.js';
import { buildSyncedFixture } from '../bench/journal-fixture.js';
import { editBothSides } from '../bench/edits.js';
import { runCli } from '../support/cli.js';
import { makeTempDir } from '../support/tmp.js';

/** Box's content of `name` in folder `dir` of the root (undefined when Box has no such file). */
function boxContent(server: BoxServer, rootId: string, dir: string, name: string): string | undefined {
  const web = server.control.as('1');
  const folder = web.listFolder(rootId).find((e) => e.type === 'folder' && e.name === dir);
  const file = folder && web.listFolder(folder.id).find((e) => e.type === 'file' && e.name === name);
  return file ? web.readFile(file.id).toString() : undefined;
}

describe('sync --once after a converged run', () => {
  it('finds an edit deep in the tree, an added and a removed file, a name that is not UTF-8, and 100 + 100 edits', async () => {
    const tmp = await makeTempDir('boxsync-once-scale-');
    const srv = await startBoxServer({ port: 0, tokens: ['T'] });
    try {
      await changesFound(srv, tmp.dir);
    } finally {
      await srv.close();
      await tmp.cleanup();
    }
  });
});

async function changesFound(srv: BoxServer, dir: string): Promise<void> {
  // 1,000 files in 20 folders.
  const fx = await buildSyncedFixture({ srv, token: 'T', dir: join(dir, 'fx'), files: 1000 });
  const sync = () => runCli(['sync', '--once', '--config', fx.configFile], { env: { BOXSYNC_LOG_LEVEL: 'warn' } });
  const quiet = await sync();
  expect(quiet.code, quiet.stderr).toBe(0);
  expect(quiet.stdout).toMatch(/\(1 pass\): 0 downloaded \(0 B\), 0 uploaded \(0 B\), 0 conflicts, 0 failed/);
  // That run found every folder equal to its rows and marked it (listing marks): the runs below skip the folders
  // whose listing is unchanged, and must still find each change.
  const db = new Database(fx.journalFile, { readonly: true });
  // (Not counted: the root's own listing, left unmarked by a run that wrote a row of it, such as a folder's mtime.)
  const marked = (db.prepare(`SELECT count(*) AS n FROM local_listing_marks WHERE dir != ''`).get() as { n: number }).n;
  db.close();
  expect(marked).toBe(20);

  // In place, same size class, the folder's listing (and mtime) untouched: only the file's own lstat shows it.
  const deep = join(fx.mirror, 'dir-00019', 'file-0000999.txt');
  appendFileSync(deep, 'edited deep in the tree\n');
  writeFileSync(join(fx.mirror, 'dir-00010', 'new.txt'), 'added\n');
  unlinkSync(join(fx.mirror, 'dir-00005', 'file-0000250.txt'));
  const edited = await sync();
  expect(edited.code, edited.stderr).toBe(0);
  expect(edited.stdout).toMatch(/: 0 downloaded \(0 B\), 2 uploaded .*0 failed/);
  expect(boxContent(srv, fx.boxFolderId, 'dir-00019', 'file-0000999.txt')).toBe(readFileSync(deep, 'utf8'));
  expect(boxContent(srv, fx.boxFolderId, 'dir-00010', 'new.txt')).toBe('added\n');
  expect(boxContent(srv, fx.boxFolderId, 'dir-00005', 'file-0000250.txt')).toBeUndefined();

  await editBothSides(srv, fx.boxFolderId, fx.mirror, 100);
  const hundred = await sync();
  expect(hundred.code, hundred.stderr).not.toBe(2);
  expect(hundred.stdout).toMatch(/100 downloaded .*, 100 uploaded /);
  // Box's edits (the first 100 files of the first folders) are on disk, the mirror's (one file in each folder
  // from the last back) on Box.
  expect(readFileSync(join(fx.mirror, 'dir-00000', 'file-0000000.txt'), 'utf8')).toBe('remote edit 0');
  expect(boxContent(srv, fx.boxFolderId, 'dir-00019', 'file-0000950.txt')).toMatch(/ local edit 0$/);
  // Every one of them, in every folder (the walk reads folders ahead on the thread pool while it compares the ones
  // before with the journal: scan.ts WALK_AHEAD): the two sides hold the same bytes, 100 of each kind of edit.
  const web = srv.control.as('1');
  let remoteEdits = 0;
  let localEdits = 0;
  for (const d of web.listFolder(fx.boxFolderId).filter((e) => e.type === 'folder')) {
    for (const f of web.listFolder(d.id).filter((e) => e.type === 'file')) {
      const onBox = web.readFile(f.id).toString();
      expect(readFileSync(join(fx.mirror, d.name, f.name), 'utf8'), `${d.name}/${f.name}`).toBe(onBox);
      if (onBox.startsWith('remote edit ')) remoteEdits++;
      if (/ local edit \d+$/.test(onBox)) localEdits++;
    }
  }
  expect([remoteEdits, localEdits]).toEqual([100, 100]);
  // A new file whose name's bytes are not UTF-8 (its folder is read again as bytes by the walk): reported, left
  // alone, not on Box.
  const bad = Buffer.concat([Buffer.from(join(fx.mirror, 'dir-00003', 'bad-')), Buffer.from([0xff]), Buffer.from('.txt')]);
  writeFileSync(bad, 'not UTF-8\n');
  const parked = await sync();
  expect(parked.stdout + parked.stderr).toContain('not valid UTF-8');
  expect(existsSync(bad)).toBe(true);
  const dir3 = srv.control.as('1').listFolder(fx.boxFolderId).find((e) => e.name === 'dir-00003')!;
  expect(srv.control.as('1').listFolder(dir3.id).map((e) => e.name).filter((n) => !n.startsWith('file-'))).toEqual([]);
}
