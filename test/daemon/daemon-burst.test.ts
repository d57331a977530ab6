/**
 * A burst of 10,000 files copied into the mirror converges on Box, in a handful of engine passes (hints are
 * batched, not handled one planner pass per file).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait.js';
import { createHarness, type Harness } from './daemon-harness.js';

const FOLDERS = 100;
const PER_FOLDER = 100;

describe('boxsync daemon burst (real process)', () => {
  let h: Harness | null = null;
  afterAll(async () => h?.close());

  it('uploads a 10,000-file burst in few passes', async () => {
    h = await createHarness({ config: { transferConcurrency: 16 } });
    await h.start();
    const passesBefore = (await h.status()).passes;
    // Copied in from elsewhere in one go, as `cp -r` would.
    for (let d = 0; d < FOLDERS; d++) {
      const dir = join(h.mirror, 'burst', `d${String(d).padStart(3, '0')}`);
      await mkdir(dir, { recursive: true });
      await Promise.all(Array.from({ length: PER_FOLDER }, (_, i) => writeFile(join(dir, `f${i}.txt`), `file ${d}/${i}\n`)));
    }
    const burst = await waitFor(() => h!.web.findByPath('Mirror/burst'), { timeoutMs: 60_000, what: 'the burst folder on Box' });
    const countOnBox = (): number =>
      h!.web.listFolder(burst.id).reduce((n, folder) => n + (folder.type === 'folder' ? h!.web.listFolder(folder.id).filter((f) => f.type === 'file').length : 0), 0);
    await waitFor(() => countOnBox() === FOLDERS * PER_FOLDER, { timeoutMs: 400_000, intervalMs: 1_000, what: '10,000 files on Box' });
    const s = await waitFor(async () => {
      const st = await h!.status();
      return st.engine.phase === 'idle' ? st : null;
    }, { timeoutMs: 60_000 });
    expect(s.engine.roots[0]!.inSync.files).toBeGreaterThanOrEqual(FOLDERS * PER_FOLDER);
    expect(s.engine.errors).toEqual([]);
    const passes = s.passes - passesBefore;
    console.log(`10,000-file burst: ${passes} engine passes`);
    expect(passes).toBeLessThan(100);
  }, 600_000);
});
