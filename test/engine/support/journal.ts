/** A real SQLite journal in a fresh temp directory, for engine tests. */
import { join } from 'node:path';
import { openJournal } from '../../../src/journal/index.js';
import type { Journal } from '../../../src/ports/journal.js';
import { makeTempDir } from '../../support/tmp.js';

export async function tempJournal(): Promise<{ journal: Journal; dir: string; path: string; cleanup: () => Promise<void> }> {
  const { dir, cleanup } = await makeTempDir('boxsync-engine-journal-');
  const path = join(dir, 'journal.sqlite');
  const { journal } = openJournal(path);
  return {
    journal,
    dir,
    path,
    cleanup: async () => {
      journal.close();
      await cleanup();
    },
  };
}
