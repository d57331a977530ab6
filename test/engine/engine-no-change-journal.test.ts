/**
 * A run that finds nothing changed writes nothing to the journal (issue 29 point 7; src/journal/first-write.ts),
 * over HTTP to box-server with a real journal file: the file is left byte for byte as it was (its clean mark stands,
 * no row, no WAL frame), and the time of the run's success is kept in memory and in the note beside the journal,
 * so that `status` of this engine and of one started later on the same state shows it. A run with a change writes
 * as before, its clean mark cleared before its first write and set again when it converges.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../support/closed-after-each.js';
import { makeBoxHarness } from './support/box-harness.js';
import { expectConverged } from './support/harness.js';

const harness = closedAfterEach(() => makeBoxHarness());
const LAST = 'engine.lastSuccessfulSyncAtMs';

describe('a run with nothing to do', () => {
  it('writes nothing to the journal; status still shows the time of its success, also to an engine started later', async () => {
    const h = await harness();
    const journalFile = join(dirname(h.localPath), 'state', 'journal.db');
    const f = h.actor.uploadFile(h.topId, 'a.txt', 'one');
    expectConverged(await h.run());
    // The first run after a mirror moves the event cursor past that mirror's own events (a write).
    await h.restart();
    expectConverged(await h.run());
    await h.restart();
    const older = Number(h.journal.getMeta(LAST));
    const mark = h.journal.getMeta('clean:r1');
    expect(mark).toMatch(/^[0-9a-f]{40}$/);
    const bytes = await readFile(journalFile);

    await new Promise((r) => setTimeout(r, 5));
    const t0 = Date.now();
    const s = expectConverged(await h.run());
    expect(s.ops).toEqual({});
    const shown = h.engine.status().lastSuccessfulSyncAtMs!;
    expect(shown).toBeGreaterThanOrEqual(t0);
    expect(h.journal.getNote!(LAST)).toBe(String(shown));
    expect(existsSync(`${journalFile}-wal`) ? (await readFile(`${journalFile}-wal`)).length : 0).toBe(0);

    // A new process on the same state: the journal file is as it was, and its status shows that run.
    await h.restart();
    expect((await readFile(journalFile)).equals(bytes)).toBe(true);
    expect(h.engine.status().lastSuccessfulSyncAtMs).toBe(shown);
    expect(Number(h.journal.getMeta(LAST))).toBe(older);
    expect(h.journal.getMeta('clean:r1')).toBe(mark);

    // A change is written, the mark cleared before it and set again once the run converged.
    h.actor.uploadVersion(f.id, 'two');
    let markAtFirstWrite: string | undefined;
    const setCursor = h.journal.setCursor.bind(h.journal);
    h.journal.setCursor = (name, position) => {
      markAtFirstWrite ??= h.journal.getMeta('clean:r1');
      setCursor(name, position);
    };
    const t1 = Date.now();
    expectConverged(await h.run());
    expect(await h.read('a.txt')).toBe('two');
    expect(markAtFirstWrite).toBe('');
    expect(h.journal.getMeta('clean:r1')).toBe(mark);
    expect(Number(h.journal.getMeta(LAST))).toBeGreaterThanOrEqual(t1);
    expect(h.engine.status().lastSuccessfulSyncAtMs).toBe(Number(h.journal.getMeta(LAST)));
  });
});
