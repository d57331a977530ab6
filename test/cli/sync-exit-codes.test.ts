/**
 * Exit codes of `sync --once` from real situations: 0 converged, 1 some items failed and will be retried,
 * 2 fatal (auth refused), 3 stopped by the mass-delete guard (with nothing deleted). Also the sync directions.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../support/closed-after-each.js';
import { contentRequests, explain, exists, listTree, readText, startSyncEnv, summaryLine, TOKEN, writeText } from './sync-harness.js';

const syncEnv = closedAfterEach(startSyncEnv);

describe('exit codes', () => {
  it('1 when an item fails (a refused upload); the rest syncs and the item backs off', async () => {
    const e = await syncEnv();
    const env = e;
    const contents: Record<string, string> = { 'a.txt': 'a first\n', 'b.txt': 'b first\n' };
    for (const [name, text] of Object.entries(contents)) await writeText(join(env.mirror, name), text);
    env.web.uploadFile(env.remoteRootId, 'remote.txt', 'r\n');
    // The next upload fails; the two uploads run concurrently, so which file it hits is found out below.
    env.srv.control.failNext({ method: 'POST', path: /\/files\/content$/, status: 500, count: 1 });
    const r = await env.sync();
    expect(r.code, explain(r)).toBe(1);
    expect(summaryLine(r)).toMatch(/not in sync: some items failed or are parked.*1 failed/);
    // One bad item never blocks the rest.
    expect(await readText(join(env.mirror, 'remote.txt'))).toBe('r\n');
    const missing = Object.keys(contents).filter((name) => env.web.findByPath(`/Mirror/${name}`) === null);
    expect(missing).toHaveLength(1);
    const failed = missing[0]!;

    // The item backs off (item-level retry, surviving restarts): an immediate re-run does not hammer Box with it.
    env.srv.control.clearRequests();
    const again = await env.sync();
    expect(again.code, explain(again)).toBe(1);
    expect(contentRequests(env.srv).uploads).toEqual([]);
    expect(env.web.findByPath(`/Mirror/${failed}`)).toBeNull();
    expect(await readText(join(env.mirror, failed))).toBe(contents[failed]);
  });

  it('2 when Box refuses the token, and the token is never printed', async () => {
    const e = await syncEnv();
    const bad = 'not-a-valid-token-XYZ';
    const cfg = JSON.parse(await readFile(e.configFile, 'utf8')) as Record<string, unknown>;
    await writeFile(e.configFile, JSON.stringify({ ...cfg, auth: { developerToken: bad } }));
    const r = await e.sync();
    expect(r.code, explain(r)).toBe(2);
    expect(r.stderr).toMatch(/token|auth/i);
    expect(r.stdout + r.stderr).not.toContain(bad);
    expect(r.stdout + r.stderr).not.toContain(TOKEN);
  });

  it('3 when a pass would delete too much, and nothing is deleted', async () => {
    const e = await syncEnv();
    await e.writeConfig({ extra: { safety: { maxDeletes: 2, maxDeleteFraction: 0.5 } } });
    for (let i = 0; i < 6; i++) e.web.uploadFile(e.remoteRootId, `f${i}.txt`, `${i}\n`);
    const first = await e.sync();
    expect(first.code, explain(first)).toBe(0);
    for (let i = 0; i < 5; i++) await rm(join(e.mirror, `f${i}.txt`));
    const r = await e.sync();
    expect(r.code, explain(r)).toBe(3);
    expect(summaryLine(r)).toMatch(/stopped by a safety guard/);
    expect(e.web.listFolder(e.remoteRootId)).toHaveLength(6);
  });

  it('0 and a converged summary on the happy path', async () => {
    const e = await syncEnv();
    e.web.uploadFile(e.remoteRootId, 'x.txt', 'x');
    const r = await e.sync();
    expect(r.code, explain(r)).toBe(0);
    expect(summaryLine(r)).toMatch(/^boxsync: converged in \S+ \S+ \(\d+ pass(es)?\): 1 downloaded \(1 B\)/);
  });
});

describe('directions', () => {
  it('download-only never changes Box', async () => {
    const e = await syncEnv();
    await e.writeConfig({ folder: { direction: 'download-only' } });
    e.web.uploadFile(e.remoteRootId, 'down.txt', 'down\n');
    await writeText(join(e.mirror, 'local-only.txt'), 'stays local\n');
    const r = await e.sync();
    expect(r.code, explain(r)).toBe(0);
    expect(await readText(join(e.mirror, 'down.txt'))).toBe('down\n');
    expect(e.web.listFolder(e.remoteRootId).map((i) => i.name)).toEqual(['down.txt']);
    expect(contentRequests(e.srv).uploads).toEqual([]);
    expect(await exists(join(e.mirror, 'local-only.txt'))).toBe(true);
  });

  it('upload-only never changes the local folder', async () => {
    const e = await syncEnv();
    await e.writeConfig({ folder: { direction: 'upload-only' } });
    e.web.uploadFile(e.remoteRootId, 'remote-only.txt', 'stays remote\n');
    await writeText(join(e.mirror, 'up.txt'), 'up\n');
    const r = await e.sync();
    expect(r.code, explain(r)).toBe(0);
    expect(await listTree(e.mirror)).toEqual(['up.txt']);
    expect(e.web.listFolder(e.remoteRootId).map((i) => i.name).sort()).toEqual(['remote-only.txt', 'up.txt']);
    expect(contentRequests(e.srv).downloads).toEqual([]);
  });
});
