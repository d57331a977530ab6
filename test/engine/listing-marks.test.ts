/**
 * The full scan's listing marks (engine/observe-local.ts, local/scan.ts, journal step 9), over real temp dirs, the
 * native walk and real SQLite journals: a folder whose listing is the one its rows were last found equal to is not
 * compared again, and nothing a user can do to a folder goes unseen because of that. The oracle of each check is a
 * scan of the same tree into a fresh journal, without marks.
 */
import { appendFile, mkdir, rename, rm, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { asRelPath as p, type LocalEntry, type RelPath } from '../../src/core/model.js';
import { scanLocal, type LocalObserverDeps } from '../../src/engine/observe-local.js';
import { SCAN_PROBE_PREFIX } from '../../src/engine/scan-parks.js';
import type { Journal } from '../../src/ports/journal.js';
import { tempJournal } from './support/journal.js';
import { tempLocalRoot } from './support/local-root.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

const SALT = 'rules-1';

async function setup(): Promise<{ deps: LocalObserverDeps; dir: string }> {
  const { dir, root, journal, fs } = await tempLocalRoot('boxsync-listing-marks-', cleanups);
  return { deps: { journal, root, fs, isIgnored: () => false, listingSalt: SALT }, dir };
}

const rowsOf = (journal: Journal, deps: LocalObserverDeps): LocalEntry[] => [...journal.localUnder(deps.root.id, '')].sort((a, b) => a.path.localeCompare(b.path));

/** The folders whose rows a scan read to compare (each compared folder's rows are read once). */
async function scanCounting(deps: LocalObserverDeps): Promise<string[]> {
  const j = deps.journal;
  const read: string[] = [];
  const own = j.localChildren.bind(j);
  const counting = Object.assign(Object.create(j) as Journal, {
    localChildren: (root: Parameters<Journal['localChildren']>[0], path: RelPath | '') => {
      read.push(path);
      return own(root, path);
    },
  });
  await scanLocal({ ...deps, journal: counting });
  return read.sort();
}

/** The rows a scan without marks makes of the same tree in a fresh journal. */
async function oracle(deps: LocalObserverDeps): Promise<LocalEntry[]> {
  const j = await tempJournal();
  try {
    const { listingSalt: _, ...plain } = deps;
    await scanLocal({ ...plain, journal: j.journal });
    return rowsOf(j.journal, deps);
  } finally {
    await j.cleanup();
  }
}

async function tree(dir: string): Promise<void> {
  for (const d of ['a', 'a/deep', 'b', 'c']) await mkdir(join(dir, d), { recursive: true });
  for (const f of ['top.txt', 'a/x', 'a/y', 'a/deep/z', 'b/w', 'c/v']) await writeFile(join(dir, f), `content of ${f}`);
}

/** The tree scanned twice: the first scan hashes every file, the second finds each folder equal to its rows and marks it. */
async function markedTree(): Promise<{ deps: LocalObserverDeps; dir: string; mark: (d: string) => { mark: string; entries: number } | undefined }> {
  const { deps, dir } = await setup();
  await tree(dir);
  await scanLocal(deps);
  await scanLocal(deps);
  return { deps, dir, mark: (d) => deps.journal.listingMark?.(deps.root.id, d as RelPath | '') };
}

describe('listing marks', () => {
  it('a scan of an unchanged tree compares no folder, and the rows stay what a scan without marks makes', async () => {
    const { deps, dir } = await setup();
    await tree(dir);
    // The first scan hashes every file (new to the journal): no folder was found equal to its rows, none is marked.
    expect(await scanCounting(deps)).toEqual(['', 'a', 'a/deep', 'b', 'c']);
    expect(deps.journal.listingMark?.(deps.root.id, '')).toBeUndefined();
    // The second reads each folder with the native walk and finds each entry equal to its row: each is marked.
    expect(await scanCounting(deps)).toEqual(['', 'a', 'a/deep', 'b', 'c']);
    for (const d of ['', 'a', 'a/deep', 'b', 'c']) expect(deps.journal.listingMark?.(deps.root.id, d as RelPath | '')).toBeDefined();
    expect(deps.journal.listingMark?.(deps.root.id, p('a'))?.entries).toBe(3);
    expect(await scanCounting(deps)).toEqual([]);
    expect(rowsOf(deps.journal, deps)).toEqual(await oracle(deps));
  });

  it('a change deep in the tree is found below folders that are skipped, and only its folder is compared', async () => {
    const { deps, dir } = await markedTree();
    await appendFile(join(dir, 'a', 'deep', 'z'), ' and more');
    expect(await scanCounting(deps)).toEqual(['a/deep']);
    expect(deps.journal.getLocal(deps.root.id, p('a/deep/z'))?.sizeBytes).toBe('content of a/deep/z and more'.length);
    expect(rowsOf(deps.journal, deps)).toEqual(await oracle(deps));
  });

  it('a row written in a marked folder drops its mark (the journal trigger); rows of other folders do not', async () => {
    const { deps, mark } = await markedTree();
    const { journal, root } = deps;
    const row = journal.getLocal(root.id, p('a/x'))!;
    // A row the disk no longer matches (another mtime): the next scan of the folder hashes the file again.
    journal.putLocal(root.id, { ...row, mtimeMs: row.mtimeMs - 1000, sha1: 'f'.repeat(40) });
    expect(mark('a')).toBeUndefined();
    expect([mark(''), mark('a/deep'), mark('b'), mark('c')].every((m) => m !== undefined)).toBe(true);
    journal.deleteLocal(root.id, p('b/w'));
    expect(mark('b')).toBeUndefined();
    expect(mark('c')).toBeDefined();
    journal.moveLocalSubtree(root.id, p('c/v'), p('top2.txt'));
    expect(mark('c')).toBeUndefined();
    expect(mark('')).toBeUndefined();
    expect(mark('a/deep')).toBeDefined();
    // The next scan compares those folders again and puts right what the writes made wrong.
    expect(await scanCounting(deps)).toEqual(['', 'a', 'b', 'c']);
    expect(rowsOf(journal, deps)).toEqual(await oracle(deps));
  });

  it('the triggers find the folder of a row whose names are not ASCII', async () => {
    const { deps, dir } = await setup();
    await mkdir(join(dir, 'dé', 'ü ü'), { recursive: true });
    await writeFile(join(dir, 'dé', 'ü ü', '日本 🙂.txt'), 'x');
    await scanLocal(deps);
    await scanLocal(deps);
    const { journal, root } = deps;
    const mark = (d: string) => journal.listingMark?.(root.id, d as RelPath | '');
    expect([mark(''), mark('dé'), mark('dé/ü ü')].every((m) => m !== undefined)).toBe(true);
    const row = journal.getLocal(root.id, p('dé/ü ü/日本 🙂.txt'))!;
    journal.putLocal(root.id, { ...row, mtimeMs: row.mtimeMs - 1000 });
    expect(mark('dé/ü ü')).toBeUndefined();
    expect([mark(''), mark('dé')].every((m) => m !== undefined)).toBe(true);
  });

  it('another salt (ignore rules changed) drops every mark: a file ignored before is found in a folder left as it was', async () => {
    const { deps, dir } = await setup();
    await tree(dir);
    await writeFile(join(dir, 'b', 'notes.log'), 'log');
    const ignoringLogs = { ...deps, isIgnored: (path: string) => path.endsWith('.log') };
    await scanLocal(ignoringLogs);
    await scanLocal(ignoringLogs);
    expect(deps.journal.getLocal(deps.root.id, p('b/notes.log'))).toBeUndefined();
    expect(deps.journal.listingMark?.(deps.root.id, p('b'))).toBeDefined();
    await scanLocal({ ...deps, listingSalt: 'rules-2' });
    expect(deps.journal.getLocal(deps.root.id, p('b/notes.log'))?.sha1).not.toBeNull();
    expect(rowsOf(deps.journal, deps)).toEqual(await oracle(deps));
  });

  it('a folder with a file that had to be hashed is not marked by that scan; the next scan marks it', async () => {
    const { deps, dir, mark } = await markedTree();
    await writeFile(join(dir, 'b', 'new'), 'new file');
    // The root's listing changed too (the folder b's mtime): both compared, b's new file hashed, and the root's row
    // of b written: neither is marked by this scan; the others keep theirs.
    expect(await scanCounting(deps)).toEqual(['', 'b']);
    expect(mark('b')).toBeUndefined();
    expect(mark('')).toBeUndefined();
    expect(mark('a')).toBeDefined();
    expect(await scanCounting(deps)).toEqual(['', 'b']);
    expect(mark('b')).toBeDefined();
    expect(await scanCounting(deps)).toEqual([]);
  });

  it("a folder holding a scan park is always compared (the scan clears a park it does not raise again)", async () => {
    const { deps, dir } = await markedTree();
    deps.journal.recordFailure({ root: deps.root.id, path: p('b/w'), code: 'permission_denied', message: 'could not read', attempts: 1, nextRetryAtMs: 0, disposition: 'skip', probe: `${SCAN_PROBE_PREFIX}x` });
    expect(await scanCounting(deps)).toEqual(['b']);
    // Readable: the park is gone, and the folder is skipped from now on.
    expect(deps.journal.getFailure(deps.root.id, p('b/w'))).toBeUndefined();
    expect(await scanCounting(deps)).toEqual([]);
  });

  it('a subtree scan of a marked folder keeps the rows below it', async () => {
    const { deps, dir } = await markedTree();
    const before = rowsOf(deps.journal, deps);
    await scanLocal(deps, p('a'));
    expect(rowsOf(deps.journal, deps)).toEqual(before);
    await rm(join(dir, 'a', 'y'));
    await scanLocal(deps, p('a'));
    expect(deps.journal.getLocal(deps.root.id, p('a/y'))).toBeUndefined();
    // A subtree scan leaves the row of the folder itself as it was (its mtime moved): the rows below it are compared.
    const below = (rows: LocalEntry[]) => rows.filter((r) => r.path.startsWith('a/'));
    expect(below(rowsOf(deps.journal, deps))).toEqual(below(await oracle(deps)));
  });

  it('whatever is done to the tree between scans, the rows are those a scan without marks makes (property)', async () => {
    const names = ['a', 'b', 'c'] as const;
    const pathArb = fc.tuple(fc.constantFrom('', 'a', 'a/b', 'c'), fc.constantFrom(...names)).map(([d, n]) => (d === '' ? n : `${d}/${n}`));
    const op = fc.oneof(
      fc.record({ kind: fc.constant('write' as const), path: pathArb, text: fc.string({ maxLength: 8 }) }),
      fc.record({ kind: fc.constant('append' as const), path: pathArb }),
      fc.record({ kind: fc.constant('mtime' as const), path: pathArb }),
      fc.record({ kind: fc.constant('mkdir' as const), path: pathArb }),
      fc.record({ kind: fc.constant('rm' as const), path: pathArb }),
      fc.record({ kind: fc.constant('rename' as const), path: pathArb, to: pathArb }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(op, { maxLength: 4 }), { minLength: 1, maxLength: 5 }), async (rounds) => {
        const { deps, dir } = await setup();
        await tree(dir);
        await scanLocal(deps);
        // Every mtime set is new: a file given back an mtime and size it had is unseen with or without marks (the
        // quick check by size, mtime and inode), which is not what this checks.
        let seconds = 1_000_000_000;
        for (const round of rounds) {
          for (const o of round) {
            const abs = join(dir, o.path);
            // Each may fail (no such parent, a file where a folder is): the tree is whatever it then is.
            await (async () => {
              if (o.kind === 'write') {
                await writeFile(abs, `w:${o.text}`);
                await utimes(abs, ++seconds, seconds);
              } else if (o.kind === 'append') await appendFile(abs, '+');
              else if (o.kind === 'mtime') await utimes(abs, ++seconds, seconds);
              else if (o.kind === 'mkdir') await mkdir(abs);
              else if (o.kind === 'rm') await rm(abs, { recursive: true });
              else await rename(abs, join(dir, o.to));
            })().catch(() => undefined);
          }
          await scanLocal(deps);
          expect(rowsOf(deps.journal, deps)).toEqual(await oracle(deps));
        }
        for (const c of cleanups.splice(0)) await c();
      }),
      { numRuns: 40 },
    );
  });
});
