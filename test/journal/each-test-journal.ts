/** A fresh journal for each test of a file: a real SQLite file in a temp dir, closed and removed after the test. */
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { openJournal } from '../../src/journal/open-journal.js';
import type { Journal } from '../../src/ports/journal.js';
import { makeTempDir } from '../support/tmp.js';

/** Call at the top level of a test file (before its own beforeEach hooks): `opened` gets each test's journal. */
export function journalForEachTest(prefix: string, opened: (journal: Journal) => void): void {
  let tmp: { dir: string; cleanup: () => Promise<void> } | null = null;
  let journal: Journal | null = null;
  beforeEach(async () => {
    tmp = await makeTempDir(prefix);
    journal = openJournal(join(tmp.dir, 'journal.db')).journal;
    opened(journal);
  });
  afterEach(async () => {
    journal?.close();
    await tmp?.cleanup();
    journal = null;
    tmp = null;
  });
}
