/**
 * Issue 29 point 7 through the real CLI against box-server: the first root's check and whole scan run while Box's
 * events are read (engine.ts scansEarly). With the events' GET held back, the edits of both sides still sync, an
 * edit made on disk while the GET is held is synced (by the next run, if this run's scan was over), the root check
 * still refuses a root that lists empty, the scan is over (a leftover temp file removed) before Box answers, and
 * an events read that fails ends the run cleanly once the scan is done.
 */
import { rm, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TempNames } from '../../src/local/temp-name.js';
import { waitFor } from '../support/wait.js';
import { exists, explain, readText, startSyncEnv, writeRequests, writeText, type SyncEnv } from './sync-harness.js';

type Env = SyncEnv & { remoteRootId: string };
let e: Env | undefined;

afterEach(async () => {
  await e?.close();
  e = undefined;
});

const HOLD_MS = 1500;
/** Long enough for a loaded machine to start the CLI and scan two files while the GET is held. */
const LONG_HOLD_MS = 15_000;

/** Two files synced both ways: a.txt and b.txt, in the mirror and on Box. */
async function synced(env: Env): Promise<{ a: string; b: string }> {
  const a = env.web.uploadFile(env.remoteRootId, 'a.txt', 'a one\n').id;
  const b = env.web.uploadFile(env.remoteRootId, 'b.txt', 'b one\n').id;
  await env.syncOk();
  return { a, b };
}

const eventsAnswered = (env: Env): number => env.srv.control.requests().filter((r) => r.method === 'GET' && r.path === '/2.0/events').length;

describe('sync --once: the scan runs while Box events are read', () => {
  it('the whole scan runs while the events GET is held: a partial download a killed run left is removed before Box answers', async () => {
    e = await startSyncEnv();
    const env = e;
    await synced(env);
    // A partial download a killed run of this state dir left: the whole scan removes it (removeTemps).
    const leftover = join(env.mirror, new TempNames((await readText(join(env.stateDir, 'temp-key'))).trim()).next());
    await writeText(leftover, 'half a download');
    env.srv.control.clearRequests();
    env.srv.control.failNext({ method: 'GET', path: '/2.0/events', delayMs: LONG_HOLD_MS });
    const run = env.sync();
    // The request log records a request once answered: none of the events yet while the scan already ran.
    await waitFor(async () => !(await exists(leftover)), { timeoutMs: LONG_HOLD_MS - 1000, what: 'the scan to remove the leftover temp file' });
    expect(eventsAnswered(env)).toBe(0);
    const r = await run;
    expect(r.code, explain(r)).toBe(0);
    expect(eventsAnswered(env)).toBeGreaterThan(0);
  });

  it('with the events GET held back, an edit on each side syncs, and a local edit made meanwhile syncs too', async () => {
    e = await startSyncEnv();
    const env = e;
    const ids = await synced(env);
    await writeText(join(env.mirror, 'a.txt'), 'a two, edited here\n');
    env.web.uploadVersion(ids.b, 'b two, edited on Box\n');
    env.srv.control.clearRequests();
    env.srv.control.failNext({ method: 'GET', path: '/2.0/events', delayMs: HOLD_MS });
    const run = env.sync();
    // The run holds its lock (it is starting, scanning or waiting on the held GET): a new file made on disk now.
    await waitFor(() => exists(join(env.stateDir, 'lock')), { timeoutMs: 30_000, what: 'the run to take its lock' });
    await writeText(join(env.mirror, 'c.txt'), 'c, made while the events were read\n');
    const r = await run;
    expect(r.code, explain(r)).toBe(0);
    expect(env.web.readFile(ids.a).toString()).toBe('a two, edited here\n');
    expect(await readText(join(env.mirror, 'b.txt'))).toBe('b two, edited on Box\n');
    // c.txt: this run's scan saw it or not (it may have ended before); either way it is on Box after the next run.
    const again = await env.sync();
    expect(again.code, explain(again)).toBe(0);
    const c = env.web.listFolder(env.remoteRootId).find((i) => i.name === 'c.txt');
    expect(c, 'c.txt on Box').toBeDefined();
    expect(env.web.readFile(c!.id).toString()).toBe('c, made while the events were read\n');
    // Nothing left: a third run writes nothing on Box.
    env.srv.control.clearRequests();
    const third = await env.sync();
    expect(third.code, explain(third)).toBe(0);
    expect(writeRequests(env.srv)).toEqual([]);
  });

  it('the root check still runs before the early scan: a root that lists empty is refused, nothing trashed on Box', async () => {
    e = await startSyncEnv();
    const env = e;
    await synced(env);
    for (const name of await readdir(env.mirror)) await rm(join(env.mirror, name), { recursive: true });
    env.srv.control.clearRequests();
    env.srv.control.failNext({ method: 'GET', path: '/2.0/events', delayMs: HOLD_MS });
    const r = await env.sync();
    expect(r.code, explain(r)).toBe(3);
    expect(r.stdout + r.stderr).toMatch(/is suddenly empty while files were in sync; refusing to delete them on Box/);
    expect(writeRequests(env.srv).filter((q) => q.method === 'DELETE')).toEqual([]);
    expect(env.web.listFolder(env.remoteRootId).map((i) => i.name).sort()).toEqual(['a.txt', 'b.txt']);
  });

  it('an events read that fails while the scan runs ends the run with the error, and the next run syncs the edit', async () => {
    e = await startSyncEnv();
    const env = e;
    const ids = await synced(env);
    await writeText(join(env.mirror, 'a.txt'), 'a two, edited here\n');
    env.srv.control.failNext({ method: 'GET', path: '/2.0/events', status: 500, count: 50, delayMs: 50 });
    const r = await env.sync();
    expect(r.code, explain(r)).not.toBe(0);
    expect(r.stdout + r.stderr).not.toMatch(/unexpected error|database connection is not open/i);
    env.srv.control.clearFaults();
    const again = await env.sync();
    expect(again.code, explain(again)).toBe(0);
    expect(env.web.readFile(ids.a).toString()).toBe('a two, edited here\n');
  });
});
