/**
 * A SIGHUP reload in the middle of a resumable upload checkpoints it like a shutdown does: the old session's
 * engine closes with the shutdown reason, the upload session stays open on Box, and the reloaded session
 * resumes it (no second session, no abort, the confirmed parts not sent again).
 */
import { createHash, randomBytes } from 'node:crypto';
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait.js';
import { closedAfterEach } from '../support/closed-after-each.js';
import { createHarness, type Harness } from './daemon-harness.js';

const SESSIONS = '/api/2.0/files/upload_sessions';
const PART_BYTES = 8_388_608;

describe('boxsync daemon: reload during an upload (real process)', () => {
  const harness = closedAfterEach(createHarness);

  it('SIGHUP mid-upload keeps the upload session and the reloaded configuration resumes it', async () => {
    const h = await harness();
    const run = await h.start({ BOXSYNC_SHUTDOWN_TIMEOUT_SEC: '2' });
    h.srv.control.failNext({ method: 'PUT', path: `${SESSIONS}/*`, delayMs: 2_000, count: 10_000 });
    h.srv.control.clearRequests();
    const data = randomBytes(6 * PART_BYTES + 1234);
    // Written beside the mirror and renamed in: the file appears whole. (Written in place, a write paused for more
    // than the settle time on a loaded machine is hinted half-written, and its prefix reaches Box first by design:
    // a growing file is uploaded as it grows. That is daemon-growing-file.test.ts's subject, not this one's.)
    const staged = join(h.dir, 'reload.bin.staged');
    await writeFile(staged, data);
    await rename(staged, join(h.mirror, 'reload.bin'));

    const reqs = (): ReturnType<Harness['srv']['control']['requests']> => h.srv.control.requests();
    const partPuts = (): number => reqs().filter((r) => r.method === 'PUT' && r.path.startsWith(`${SESSIONS}/`) && r.status === 200).length;
    await waitFor(() => partPuts() >= 1, { timeoutMs: 60_000, what: 'a confirmed part' });
    const confirmedBeforeReload = partPuts();
    run.child.kill('SIGHUP');
    await waitFor(() => /configuration reloaded/.test(run.output()), { timeoutMs: 20_000, what: 'the reload' });
    h.srv.control.clearFaults();

    const item = await waitFor(() => h.web.findByPath('Mirror/reload.bin'), { timeoutMs: 60_000, what: 'reload.bin on Box' }).catch((e: unknown) => {
      throw new Error(`${String(e)}\n--- daemon ---\n${run.output()}`);
    });
    expect(h.web.getItem('file', item.id)?.['sha1']).toBe(createHash('sha1').update(data).digest('hex'));
    expect(run.output()).toMatch(/upload interrupted by shutdown; session kept for the next start/);
    expect(reqs().filter((r) => r.method === 'POST' && r.path === SESSIONS)).toHaveLength(1);
    expect(reqs().filter((r) => r.method === 'DELETE' && r.path.startsWith(`${SESSIONS}/`))).toEqual([]);
    // Resumed: at most the parts in flight at the reload were sent twice.
    const totalParts = Math.ceil(data.length / PART_BYTES);
    expect(confirmedBeforeReload).toBeGreaterThanOrEqual(1);
    expect(partPuts()).toBeLessThanOrEqual(totalParts + 4);
    expect(reqs().some((r) => r.method === 'GET' && /\/upload_sessions\/[^/]+\/parts$/.test(r.path))).toBe(true);
  }, 180_000);
});
