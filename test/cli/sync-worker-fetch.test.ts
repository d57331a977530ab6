/**
 * A big file's body read by a file worker thread (src/local/worker-fetch.ts): the real CLI against box-server. A body
 * that never ends is cut there at the listed size (not taken for a cut connection) and nothing lands under the file's
 * name; SIGTERM while the thread
 * reads ends the run, leaving nothing under the final name, and the next run brings the file whole.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnCli } from '../support/cli.js';
import { waitFor } from '../support/wait.js';
import { explain, listTree, startSyncEnv, type SyncEnv } from './sync-harness.js';

let e: SyncEnv | undefined;

/** An env whose one-file passes still use the threads (a pass this small is written on the main thread otherwise: http.fileWorkersMinFiles). */
async function threadedEnv(): Promise<SyncEnv & { readonly remoteRootId: string }> {
  const env = await startSyncEnv();
  e = env;
  await env.writeConfig({ extra: { http: { fileWorkersMinFiles: 0 } } });
  return env;
}
afterEach(async () => {
  await e?.close();
  e = undefined;
});

/** Past the workers' 256 KiB: its body is read by a worker thread. */
const BIG = 600 * 1024;

describe('a big download read by a file worker thread', () => {
  it('a body that never ends is cut at the listed size on the thread; nothing lands under the name', async () => {
    const env = await threadedEnv();
    e = env;
    env.web.uploadFile(env.remoteRootId, 'big.bin', randomBytes(BIG));
    env.srv.control.failNext({ method: 'GET', path: /^\/dl\//, count: 1000, stream: { sendBytes: 'forever', chunkBytes: 64 * 1024, everyMs: 1 } });
    const r = await env.sync([], { timeoutMs: 60_000 });
    expect(r.code, explain(r)).toBe(1);
    expect(r.stdout + r.stderr).toMatch(new RegExp(`big\\.bin[\\s\\S]*sent more than ${BIG} bytes`));
    expect(await listTree(env.mirror)).toEqual([]);
  });

  it('SIGTERM while the thread reads ends the run with nothing under the final name; the next run brings the file', async () => {
    const env = await threadedEnv();
    e = env;
    const body = randomBytes(BIG);
    env.web.uploadFile(env.remoteRootId, 'big.bin', body);
    // A body that trickles: the thread is still reading it when the signal comes.
    env.srv.control.failNext({ method: 'GET', path: /^\/dl\//, stream: { announceBytes: BIG, sendBytes: BIG, chunkBytes: 1024, everyMs: 50 } });
    const child = spawnCli(['sync', '--once', '--config', env.configFile], { env: { BOXSYNC_LOG_LEVEL: 'warn' } });
    const closed = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    try {
      // Its temp file holds bytes: the thread is writing them.
      await waitFor(async () => (await listTree(env.mirror).catch(() => [] as string[])).some((p) => p.includes('.boxsync-')), { timeoutMs: 60_000, what: 'the temp file' });
    } finally {
      child.kill('SIGTERM');
    }
    await waitFor(() => child.exitCode !== null || child.signalCode !== null, { timeoutMs: 30_000, what: 'the run to end after SIGTERM' });
    await closed;
    expect((await listTree(env.mirror)).filter((p) => p === 'big.bin')).toEqual([]);
    env.srv.control.clearFaults();
    const again = await env.sync();
    expect(again.code, explain(again)).toBe(0);
    expect((await listTree(env.mirror)).filter((p) => p.includes('.boxsync-'))).toEqual([]);
    expect((await readFile(join(env.mirror, 'big.bin'))).equals(body)).toBe(true);
  });
});
