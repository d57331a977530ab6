import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { asRelPath as p, asRootId } from '../../src/core/model.js';
import { openJournal } from '../../src/journal/open-journal.js';
import type { Journal } from '../../src/ports/journal.js';
import { makeTempDir } from '../support/tmp.js';
import { localFile, localFolder } from './entries.js';

const R = asRootId('root-a');
const R2 = asRootId('root-b');

let tmp: { dir: string; cleanup: () => Promise<void> };
let j: Journal;
let dbPath: string;

beforeEach(async () => {
  tmp = await makeTempDir('boxsync-scan-marks-');
  dbPath = join(tmp.dir, 'journal.db');
  j = openJournal(dbPath).journal;
});
afterEach(async () => {
  j.close();
  await tmp.cleanup();
});

const paths = (it: Iterable<{ path: string }>): string[] => [...it].map((e) => e.path);

describe('local scan marks', () => {
  it('yields the rows of the root the scan did not mark, in path order, and only of that root', () => {
    for (const e of [localFolder('a', 1), localFile('a/x'), localFile('a/y'), localFile('b'), localFile('c')]) j.putLocal(R, e);
    j.putLocal(R2, localFile('z'));
    const scan = j.beginLocalScan();
    j.markLocalSeen(scan, [p('a'), p('a/y'), p('c')]);
    expect(paths(j.localUnseen(scan, R, ''))).toEqual(['a/x', 'b']);
    expect(paths(j.localUnseen(scan, R2, ''))).toEqual(['z']);
  });

  it('under a path: only rows strictly below it, never the path itself or a sibling with a longer name', () => {
    for (const e of [localFolder('d', 1), localFile('d/1'), localFile('d/e/2'), localFile('d0'), localFile('d.txt'), localFile('d e')]) j.putLocal(R, e);
    const scan = j.beginLocalScan();
    j.markLocalSeen(scan, [p('d/1')]);
    expect(paths(j.localUnseen(scan, R, p('d')))).toEqual(['d/e/2']);
  });

  it('keeps overlapping scans apart, and forgets a scan when it ends', () => {
    for (const e of [localFile('a'), localFile('b')]) j.putLocal(R, e);
    const first = j.beginLocalScan();
    const second = j.beginLocalScan();
    expect(second).not.toBe(first);
    j.markLocalSeen(first, [p('a')]);
    j.markLocalSeen(second, [p('b')]);
    expect(paths(j.localUnseen(first, R, ''))).toEqual(['b']);
    expect(paths(j.localUnseen(second, R, ''))).toEqual(['a']);
    j.endLocalScan(first);
    expect(paths(j.localUnseen(first, R, ''))).toEqual(['a', 'b']);
    expect(paths(j.localUnseen(second, R, ''))).toEqual(['a']);
  });

  it('pages through more rows than one page while the caller deletes them, and leaves the journal file alone', () => {
    const all = Array.from({ length: 2500 }, (_, i) => `f${String(i).padStart(5, '0')}`);
    j.transaction(() => {
      for (const name of all) j.putLocal(R, localFile(name));
    });
    const scan = j.beginLocalScan();
    const kept = all.filter((_, i) => i % 3 === 0);
    j.markLocalSeen(scan, kept.map(p));
    const gone: string[] = [];
    for (const e of j.localUnseen(scan, R, '')) {
      gone.push(e.path);
      j.deleteLocal(R, e.path);
    }
    expect(gone).toEqual(all.filter((_, i) => i % 3 !== 0));
    expect(paths(j.localUnder(R, ''))).toEqual(kept);
    j.endLocalScan(scan);
    j.close();
    // The marks live in the connection's temp schema: a new connection sees no trace of them.
    j = openJournal(dbPath).journal;
    const fresh = j.beginLocalScan();
    expect(paths(j.localUnseen(fresh, R, ''))).toEqual(kept);
  });
});
