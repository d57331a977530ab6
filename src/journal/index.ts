/** The SQLite journal: open it with openJournal; everything else goes through the Journal port. */
export { openJournal, openJournalCheckedApart, type OpenJournalOptions, type OpenJournalResult } from './open-journal.js';
export { SCHEMA_VERSION } from './migrations.js';
export { copyJournal } from './copy-journal.js';
