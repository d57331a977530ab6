/**
 * Ctrl-C in the middle of a chunked upload is a checkpoint, not a cancel: `sync --once` exits, the Box upload
 * session and its journal record stay, and the next run resumes that same session, sending only the missing parts.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { spawnCli } from '../support/cli.js';
import { waitFor } from '../support/wait.js';
import { explain, startSyncEnv, type SyncEnv } from './sync-harness.js';

const SESSIONS = '/api/2.0/files/upload_sessions';
let e: (SyncEnv & { remoteRootId: string }) | undefined;
afterEach(async () => {
  await e?.close();
  e = undefined;
});

it('SIGINT mid-upload keeps the session; the next run resumes it without re-sending confirmed parts', async () => {
  e = await startSyncEnv({ chunkedPartSizeBytes: 4 * 1024 * 1024 });
  const env = e;
  const data = randomBytes(30 * 1024 * 1024);
  await mkdir(env.mirror, { recursive: true });
  await writeFile(join(env.mirror, 'big.bin'), data);
  // Slow the parts so the signal lands while some are confirmed and others are not.
  env.srv.control.failNext({ method: 'PUT', path: `${SESSIONS}/*`, delayMs: 400, count: 10_000 });
  env.srv.control.clearRequests();

  const partsOk = (): number => env.srv.control.requests().filter((r) => r.method === 'PUT' && r.path.startsWith(`${SESSIONS}/`) && r.status === 200).length;
  const sessionsCreated = (): number => env.srv.control.requests().filter((r) => r.method === 'POST' && r.path === SESSIONS && r.status === 201).length;

  const child = spawnCli(['sync', '--once', '--config', env.configFile], { env: { BOXSYNC_LOG_LEVEL: 'warn' } });
  const closed = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  await waitFor(() => partsOk() >= 2, { timeoutMs: 60_000, what: 'two parts confirmed' });
  child.kill('SIGINT');
  expect(await closed).not.toBe(0);
  const confirmedBefore = partsOk();
  expect(sessionsCreated()).toBe(1);
  expect(env.srv.control.requests().some((r) => r.method === 'DELETE' && r.path.startsWith(`${SESSIONS}/`))).toBe(false);

  env.srv.control.clearFaults();
  env.srv.control.clearRequests();
  const again = await env.sync();
  expect(again.code, explain(again)).toBe(0);
  expect(sessionsCreated()).toBe(0);
  // 30 MiB in 4 MiB parts is 8 parts: the second run sends only what the first did not get confirmed.
  expect(partsOk()).toBeLessThanOrEqual(8 - confirmedBefore + 1);
  const item = env.web.findByPath('Mirror/big.bin');
  expect(item).not.toBeNull();
  expect(createHash('sha1').update(env.web.readFile(item!.id)).digest('hex')).toBe(createHash('sha1').update(data).digest('hex'));
});
