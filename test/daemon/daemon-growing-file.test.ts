/**
 * A file that keeps growing (a log appended every 30 ms) reaches Box while it grows, not only once it stops:
 * the watcher hints it at least every `daemon.uploadGrowingEverySec` (here 3 s, by its environment variable),
 * and the upload sends the prefix it holds when opened (engine/executor.ts growingUpload). The real daemon
 * process against box-server; what Box holds is sampled while the file grows.
 */
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait.js';
import { createHarness, type DaemonRun, type Harness } from './daemon-harness.js';

/** Well inside the watcher's 150 ms quiet time even on a busy machine (the log wrote every 100 ms). */
const APPEND_EVERY_MS = 30;
const APPEND_FOR_MS = 10_000;

describe('boxsync daemon: a growing file', () => {
  let h: Harness;
  let run: DaemonRun;

  beforeAll(async () => {
    h = await createHarness();
    run = await h.start({ BOXSYNC_UPLOAD_GROWING_EVERY_SEC: '3' });
  });

  afterAll(async () => {
    if (run) expect((await h.stop(run)).code).toBe(0);
    await h?.close();
  });

  it('a log appended every 30 ms reaches Box as a growing prefix while it grows, and whole once it stops', async () => {
    const path = join(h.mirror, 'app.log');
    await writeFile(path, 'start\n');
    const seen = new Set<string>();
    const sample = (): void => {
      const f = h.web.findByPath('Mirror/app.log');
      if (f) seen.add(h.web.readFile(f.id).toString());
    };
    const sampler = setInterval(sample, 50);
    try {
      // Bounded by a count: about 10 s of appends (longer on a slow machine), never a quiet time of 150 ms.
      for (let i = 0; i < APPEND_FOR_MS / APPEND_EVERY_MS; i++) {
        await appendFile(path, `line ${i} ${'x'.repeat(40)}\n`);
        await new Promise((r) => setTimeout(r, APPEND_EVERY_MS));
      }
    } finally {
      clearInterval(sampler);
    }
    const whileGrowing = [...seen];
    const final = await readFile(path, 'utf8');
    // Every version Box held was a prefix of the file (bytes it held at some moment), and at least two distinct
    // ones arrived before the appends stopped: the 3 s bound, not the end of the writing, sent them.
    for (const v of whileGrowing) expect(final.startsWith(v)).toBe(true);
    expect(whileGrowing.filter((v) => v !== final).length).toBeGreaterThanOrEqual(2);
    // Bounded by the longest backoff of a pass that ended unfinished (core/retry.ts unfinishedPassBackoff, 60 s): on a
    // loaded machine more of the passes while the file grew end unfinished, and the last upload may wait that long.
    await waitFor(
      () => {
        const f = h.web.findByPath('Mirror/app.log');
        return f !== null && h.web.readFile(f.id).toString() === final;
      },
      { timeoutMs: 90_000, intervalMs: 50, what: 'the whole log on Box once it stopped growing' },
    );
  }, 180_000);
});
