/**
 * The daemon's idle collections (daemon/lifecycle/idle-reclaim.ts) change nothing it does: once both have run
 * (the first after the pass, the follow-up a quiet stretch after it), a change on either side still syncs.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait.js';
import { closedAfterEach } from '../support/closed-after-each.js';
import { createHarness } from './daemon-harness.js';

const reclaims = (out: string): number => out.split('\n').filter((l) => l.startsWith('{') && l.includes('idle: unused heap returned')).length;

describe('daemon idle memory reclaim', () => {
  const harness = closedAfterEach(createHarness);

  it('after both idle collections, a local and a Box change still sync', async () => {
    const h = await harness();
    const run = await h.start({ BOXSYNC_LOG_LEVEL: 'debug' });
    // The first collection after the first pass, then the follow-up (it runs whenever the first did).
    await waitFor(() => reclaims(run.output()) >= 2, { timeoutMs: 60_000, what: 'the two idle collections' });

    await writeFile(join(h.mirror, 'after-idle.txt'), 'local after idle');
    const folder = h.web.listFolder(h.rootId);
    expect(folder.some((e) => e.name === 'from-box.txt')).toBe(false);
    h.web.uploadFile(h.rootId, 'from-box.txt', 'box after idle');
    await waitFor(() => h.web.findByPath('Mirror/after-idle.txt'), { timeoutMs: 30_000, what: 'the local file on Box' });
    await waitFor(async () => (await readFile(join(h.mirror, 'from-box.txt'), 'utf8').catch(() => '')) === 'box after idle', { timeoutMs: 30_000, what: 'the Box file on disk' });
  });
});
