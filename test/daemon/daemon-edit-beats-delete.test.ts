/**
 * Edit beats delete, whichever side is seen first: with the daemon running, a local file is edited and, a moment
 * later, trashed on Box. The edit must end up on Box (the file restored from the Box trash with the new content,
 * or uploaded again) and stay in the mirror; it never goes to the local trash.
 */
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait.js';
import { createHarness, type DaemonRun, type Harness } from './daemon-harness.js';

// Gaps shorter than the watcher's settling time: the Box trash happens before the edit could be uploaded, so the
// daemon meets both changes in either order. (An edit that reached Box before the trash is a delete made after
// the edit, on Box: the edited version is in the Box trash, and the local trash is then right.)
const sha1 = (s: string): string => createHash('sha1').update(s).digest('hex');

const GAPS_MS = [0, 5, 15, 30, 60, 100];

describe('edit beats delete with the daemon running', () => {
  let h: Harness;
  let run: DaemonRun;

  beforeAll(async () => {
    h = await createHarness();
    for (let i = 0; i < GAPS_MS.length; i++) h.web.uploadFile(h.rootId, `f${i}.txt`, `original ${i}\n`);
    run = await h.start();
  });

  afterAll(async () => {
    if (run) await h.stop(run);
    await h?.close();
  });

  it('a local edit followed by a Box trash keeps the edit, on both sides', async () => {
    const ids = GAPS_MS.map((_, i) => h.web.findByPath(`Mirror/f${i}.txt`)!.id);
    for (let i = 0; i < GAPS_MS.length; i++) {
      await writeFile(join(h.mirror, `f${i}.txt`), `edited here ${i}, a longer line than before\n`);
      await new Promise((r) => setTimeout(r, GAPS_MS[i]));
      h.web.trash('file', ids[i]!);
    }
    const restored: number[] = [];
    for (let i = 0; i < GAPS_MS.length; i++) {
      const want = `edited here ${i}, a longer line than before\n`;
      const local = join(h.mirror, `f${i}.txt`);
      // Settled either way the rule allows: the edit is live on both sides (Box restored the file and took the
      // edit), or the edit reached Box first and the trash came after it on Box (the trashed file holds the edit).
      // Never: the edit in the local trash while Box's trash holds the old content.
      const outcome = await waitFor(
        async () => {
          const onBox = h.web.findByPath(`Mirror/f${i}.txt`);
          const here = await readFile(local, 'utf8').catch(() => null);
          if (onBox !== null && h.web.readFile(onBox.id).toString() === want && here === want) return 'restored';
          const item = h.web.getItem('file', ids[i]!);
          if (onBox === null && here === null && item?.['item_status'] === 'trashed' && item['sha1'] === sha1(want)) return 'trashed-after-edit';
          return null;
        },
        { timeoutMs: 30_000, intervalMs: 50, what: `f${i}.txt (edited ${GAPS_MS[i]} ms before the Box trash) to settle with its edit kept\n${run.output().slice(-20000)}` },
      );
      if (outcome === 'restored') restored.push(i);
    }
    // The first files were trashed on Box long before the watcher could settle their edit: both changes met.
    expect(restored).toContain(0);
  });
});
