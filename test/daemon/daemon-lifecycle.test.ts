/**
 * Lifecycle of the real daemon process: SIGTERM in the middle of a 100 MB upload checkpoints it (engine.close()
 * with the shutdown reason keeps the upload session) and a restart resumes the same upload session; SIGHUP
 * reloads the configuration (and keeps the old one when the new file is invalid); a second daemon on the same
 * state dir is refused by the lock.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { waitFor } from '../support/wait.js';
import { closedAfterEach } from '../support/closed-after-each.js';
import { createHarness } from './daemon-harness.js';

const SESSION_PARTS = '/api/2.0/files/upload_sessions/';

describe('boxsync daemon lifecycle (real process)', () => {
  const harness = closedAfterEach(createHarness);

  it('SIGTERM in the middle of a 100 MB upload exits within the bound, and a restart resumes the same session', async () => {
    const h = await harness();
    const first = await h.start({ BOXSYNC_SHUTDOWN_TIMEOUT_SEC: '3' });
    // Slow every part down so the signal lands mid-upload.
    h.srv.control.failNext({ method: 'PUT', path: `${SESSION_PARTS}*`, delayMs: 2_500, count: 10_000 });
    h.srv.control.clearRequests();
    const data = randomBytes(100 * 1024 * 1024);
    const sha1 = createHash('sha1').update(data).digest('hex');
    // Staged beside the mirror and renamed in, so the file appears whole (daemon-reload-upload.test.ts says why).
    const staged = join(h.dir, 'big.bin.staged');
    await writeFile(staged, data);
    await rename(staged, join(h.mirror, 'big.bin'));

    const partPuts = (): number => h.srv.control.requests().filter((r) => r.method === 'PUT' && r.path.startsWith(SESSION_PARTS) && r.status === 200).length;
    await waitFor(() => partPuts() >= 2, { timeoutMs: 60_000, what: 'two confirmed parts' });
    const beforeStop = partPuts();
    const t0 = Date.now();
    const exit = await h.stop(first);
    const stopMs = Date.now() - t0;
    expect(exit.code).toBe(0);
    // The daemon gives transfers 3 s (BOXSYNC_SHUTDOWN_TIMEOUT_SEC) and then exits; the bound leaves room for a
    // loaded machine (process exit, journal close) while still failing a daemon that waits for the upload.
    expect(stopMs).toBeLessThan(15_000);
    expect(first.output()).toMatch(/SIGTERM: stopping/);
    expect(first.output()).toMatch(/transfer\(s\) in flight; they resume from their last confirmed part/);
    expect(first.output()).toMatch(/boxsync daemon stopped \(transfers checkpointed\)/);
    // The upload was stopped by engine.close() with the shutdown reason (not left running, not cancelled), and
    // the engine, journal and HTTP client closed within the bound.
    expect(first.output()).toMatch(/upload interrupted by shutdown; session kept for the next start/);
    expect(first.output()).not.toMatch(/did not close within the shutdown bound/);
    expect(h.srv.control.requests().filter((r) => r.method === 'DELETE' && r.path.startsWith(SESSION_PARTS))).toEqual([]);
    expect(h.web.findByPath('Mirror/big.bin')).toBeNull();
    const sessionsCreated = (): number => h.srv.control.requests().filter((r) => r.method === 'POST' && r.path === '/api/2.0/files/upload_sessions').length;
    expect(sessionsCreated()).toBe(1);

    h.srv.control.clearFaults();
    const again = await h.start();
    const item = await waitFor(() => h.web.findByPath('Mirror/big.bin'), { timeoutMs: 60_000, what: 'big.bin on Box after the restart' }).catch((e: unknown) => {
      throw new Error(`${String(e)}\n--- first run ---\n${first.output()}\n--- second run ---\n${again.output()}`);
    });
    expect(h.web.getItem('file', item.id)?.['sha1']).toBe(sha1);
    // Resumed, not restarted: no second session, and the parts confirmed before SIGTERM were not sent again.
    expect(sessionsCreated()).toBe(1);
    const totalParts = Math.ceil(data.length / 8_388_608);
    expect(partPuts()).toBeLessThanOrEqual(totalParts + 4);
    expect(beforeStop).toBeGreaterThanOrEqual(2);
  }, 240_000);

  it('SIGHUP reloads the configuration, and keeps the running one when the new file is invalid', async () => {
    const h = await harness();
    const run = await h.start();
    const config = JSON.parse(await readFile(h.configFile, 'utf8')) as { folders: { remoteId: string; localPath: string }[] };
    const second = h.web.createFolder('0', 'Second');
    h.web.uploadFile(second.id, 'hello.txt', 'from the second root');
    const secondLocal = join(h.dir, 'Second');
    await mkdir(secondLocal);
    await writeFile(h.configFile, JSON.stringify({ ...config, folders: [...config.folders, { remoteId: second.id, localPath: secondLocal }] }));
    run.child.kill('SIGHUP');
    await waitFor(async () => (await readFile(join(secondLocal, 'hello.txt'), 'utf8').catch(() => '')) === 'from the second root', { timeoutMs: 30_000, what: 'the new root synced after SIGHUP' }).catch(
      (e: unknown) => {
        throw new Error(`${String(e)}\n--- daemon ---\n${run.output()}`);
      },
    );
    expect((await h.status()).engine.roots).toHaveLength(2);
    expect(run.output()).toMatch(/configuration reloaded/);

    await writeFile(h.configFile, '{ "folders": "not a list" ');
    run.child.kill('SIGHUP');
    await waitFor(() => /SIGHUP: .*keeping the running configuration/.test(run.output()), { timeoutMs: 10_000, what: 'the reload refusal in the log' });
    expect((await h.status()).engine.roots).toHaveLength(2);
    await writeFile(join(h.mirror, 'still-live.txt'), 'yes');
    await waitFor(() => h.web.findByPath('Mirror/still-live.txt'), { timeoutMs: 15_000, what: 'sync still running after a bad reload' });
  });

  it('refuses a second daemon on the same state dir (the lock `sync --once` takes too)', async () => {
    const h = await harness();
    await h.start();
    const r = await runCli(['daemon', '--config', h.configFile], { timeoutMs: 30_000 });
    expect(r.code).toBe(2);
    expect(r.stdout + r.stderr).toMatch(/another boxsync process \(pid \d+, daemon\)/);
    expect((await h.status()).engine.phase).toBe('idle');
  });
});
