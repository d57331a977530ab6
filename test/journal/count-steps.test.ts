/**
 * The in-sync count in steps (SyncedTree.countSteps, Journal.countSyncedSteps): the daemon's status counts a
 * million merge-base rows in slices (engine/status-tracker.ts) instead of in one call. On a real journal.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { asRootId } from '../../src/core/model.js';
import { runWhole } from '../../src/core/slices.js';
import { openJournal } from '../../src/journal/open-journal.js';
import { COUNT_STEP_ROWS } from '../../src/journal/synced-tree.js';
import type { Journal } from '../../src/ports/journal.js';
import { makeTempDir } from '../support/tmp.js';
import { synced } from './entries.js';

const R = asRootId('r');
const R2 = asRootId('r2');

let tmp: { dir: string; cleanup: () => Promise<void> };
let j: Journal;

beforeEach(async () => {
  tmp = await makeTempDir('boxsync-count-steps-');
  j = openJournal(join(tmp.dir, 'journal.db')).journal;
});
afterEach(async () => {
  j.close();
  await tmp.cleanup();
});

/** `n` rows under root `root`: every tenth a folder (its size not counted), the files 1 to 7 bytes. */
function fill(root: typeof R, n: number): void {
  j.transaction(() => {
    for (let i = 0; i < n; i++) {
      const folder = i % 10 === 0;
      j.putSynced(root, synced(`d${i % 37}/e-${String(i).padStart(6, '0')}`, `${root}-${i}`, folder ? { kind: 'folder', sizeBytes: 999 } : { sizeBytes: 1 + (i % 7) }));
    }
  });
}

describe('countSyncedSteps', () => {
  it('counts what countSynced counts, pausing between pages of COUNT_STEP_ROWS rows, and only its root', () => {
    fill(R, 2 * COUNT_STEP_ROWS + COUNT_STEP_ROWS / 2);
    fill(R2, 1234);
    const steps = j.countSyncedSteps!(R);
    let pauses = 0;
    let r = steps.next();
    while (!r.done) {
      pauses += 1;
      r = steps.next();
    }
    expect(pauses).toBe(2);
    expect(r.value).toEqual(j.countSynced(R));
    expect(r.value.files + r.value.folders).toBe(2 * COUNT_STEP_ROWS + COUNT_STEP_ROWS / 2);
    expect(runWhole(j.countSyncedSteps!(R2))).toEqual(j.countSynced(R2));
  });

  it('a root with no rows, and one of exactly a page: the same as countSynced', () => {
    expect(runWhole(j.countSyncedSteps!(R))).toEqual({ files: 0, folders: 0, bytes: 0 });
    fill(R, COUNT_STEP_ROWS);
    expect(runWhole(j.countSyncedSteps!(R))).toEqual(j.countSynced(R));
  });

  it('rows written between two steps behind the pause point are counted, rows before it are not counted twice', () => {
    fill(R, COUNT_STEP_ROWS + 10);
    const steps = j.countSyncedSteps!(R);
    expect(steps.next().done).toBe(false);
    // A pass writes meanwhile: a row after the page read (counted) and one before it (missed: a figure for display).
    j.putSynced(R, synced('zz-late', 'late-1', { sizeBytes: 5 }));
    j.putSynced(R, synced('a-early', 'early-1', { sizeBytes: 5 }));
    let r = steps.next();
    while (!r.done) r = steps.next();
    expect(r.value.files + r.value.folders).toBe(COUNT_STEP_ROWS + 11);
  });
});
