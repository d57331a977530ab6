/**
 * Journal micro-benchmark: bulk insert of 100,000 local rows (one transaction), a 10,000-row subtree move and
 * delete (indexed range statements), a full keyset iteration, the same move in a 1,000-row folder, and the
 * reopen cost (quick_check runs on every open).
 * Prints figures; asserts nothing about speed.
 */
import { join } from 'node:path';
import { asRelPath, asRootId, type LocalEntry } from '../../src/core/model.js';
import { openJournal } from '../../src/journal/open-journal.js';
import { makeTempDir } from '../support/tmp.js';

const ms = (t0: bigint): string => `${(Number(process.hrtime.bigint() - t0) / 1e6).toFixed(1)} ms`;

export async function run(): Promise<void> {
  const tmp = await makeTempDir('boxsync-bench-journal-');
  try {
    const { journal } = openJournal(join(tmp.dir, 'journal.db'));
    const root = asRootId('bench');
    const entry = (path: string, inode: number): LocalEntry => ({
      path: asRelPath(path),
      kind: 'file',
      inode,
      sizeBytes: 4096,
      mtimeMs: 1_700_000_000_000 + inode,
      sha1: inode.toString(16).padStart(40, '0'),
    });

    let t0 = process.hrtime.bigint();
    journal.transaction(() => {
      for (let i = 0; i < 100_000; i++) journal.putLocal(root, entry(`d${i % 10}/sub${Math.floor(i / 1000) % 10}/f${i}.bin`, i + 1));
    });
    console.log(`insert 100,000 local rows (one transaction): ${ms(t0)}`);

    t0 = process.hrtime.bigint();
    journal.moveLocalSubtree(root, asRelPath('d3'), asRelPath('moved/d3'));
    console.log(`move a 10,000-row subtree: ${ms(t0)}`);

    t0 = process.hrtime.bigint();
    journal.moveLocalSubtree(root, asRelPath('d4/sub5'), asRelPath('d4/sub5-renamed'));
    console.log(`move a 1,000-row folder: ${ms(t0)}`);

    t0 = process.hrtime.bigint();
    let n = 0;
    for (const _ of journal.localUnder(root, '')) n++;
    console.log(`iterate all ${n.toLocaleString('en')} rows (keyset pages): ${ms(t0)}`);

    t0 = process.hrtime.bigint();
    journal.deleteLocalSubtree(root, asRelPath('moved/d3'));
    console.log(`delete a 10,000-row subtree: ${ms(t0)}`);

    t0 = process.hrtime.bigint();
    for (let i = 0; i < 10_000; i++) journal.getLocal(root, asRelPath(`d1/sub${Math.floor(i / 1000) % 10}/f${i}.bin`));
    console.log(`10,000 point lookups: ${ms(t0)}`);
    journal.close();

    t0 = process.hrtime.bigint();
    const reopened = openJournal(join(tmp.dir, 'journal.db'));
    console.log(`reopen with quick_check, ${n.toLocaleString('en')} rows: ${ms(t0)}`);
    reopened.journal.close();
  } finally {
    await tmp.cleanup();
  }
}
