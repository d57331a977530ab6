/**
 * Answers that contradict the request are checked, never just believed. A server or proxy answering an upload
 * with another parent folder than the one uploaded to used to make boxsync take the file as moved out of the
 * mirror and move it (with an unsynced edit) and a new file to the local trash. Now such an answer is checked
 * with a GET of the item: when the GET shows it as asked, the sync goes on with it; when the GET says the same
 * wrong thing, the items are parked with the reason and nothing local is moved or trashed.
 */
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { exists, explain, readText, startSyncEnv, type SyncEnv } from './sync-harness.js';

let e: SyncEnv & { remoteRootId: string };
let elsewhere: string;
let keptId: string;

/** Every name anywhere under the local trash (empty when it was never made). */
async function trashed(): Promise<string[]> {
  const dir = join(e.stateDir, 'trash');
  if (!(await exists(dir))) return [];
  return (await readdir(dir, { recursive: true })).map(String);
}

/** A transform that moves the answered file into `elsewhere`, whether the body is an upload's list or an item. */
function otherParent(body: unknown): unknown {
  const b = body as { entries?: { parent?: { id: string } }[]; parent?: { id: string } };
  for (const item of b.entries ?? [b]) if (item.parent) item.parent = { ...item.parent, id: elsewhere };
  return body;
}

beforeEach(async () => {
  e = await startSyncEnv();
  elsewhere = e.web.createFolder('0', 'Elsewhere').id;
  await mkdir(e.mirror, { recursive: true });
  await writeFile(join(e.mirror, 'kept.txt'), 'first');
  const first = await e.sync();
  expect(first.code, explain(first)).toBe(0);
  keptId = e.web.findByPath('Mirror/kept.txt')!.id;
  // An unsynced edit and a new file: both go up in the next run.
  await writeFile(join(e.mirror, 'kept.txt'), 'edited here');
  await writeFile(join(e.mirror, 'new.txt'), 'new here');
});
afterEach(async () => {
  await e.close();
});

describe('an upload answer naming another parent folder', () => {
  it('is checked with a GET; the GET shows the file where it was uploaded, and the sync goes on with no local file moved', async () => {
    e.srv.control.failNext({ method: 'POST', path: /^\/api\/2\.0\/files\/(content|\d+\/content)$/, count: 2, transform: otherParent });
    e.srv.control.clearRequests();
    const r = await e.sync();
    expect(r.code, explain(r)).toBe(0);
    expect(await readText(join(e.mirror, 'kept.txt'))).toBe('edited here');
    expect(await readText(join(e.mirror, 'new.txt'))).toBe('new here');
    expect(await trashed()).toEqual([]);
    expect(e.web.readFile(keptId).toString()).toBe('edited here');
    expect(e.web.findByPath('Mirror/new.txt')).not.toBeNull();
    // Each contradicted answer was read again.
    const gets = e.srv.control.requests().filter((q) => q.method === 'GET' && /^\/2\.0\/files\/\d+$/.test(q.path));
    expect(gets.length).toBeGreaterThanOrEqual(2);
    // And the next run has nothing to do.
    e.srv.control.clearRequests();
    const again = await e.sync();
    expect(again.code, explain(again)).toBe(0);
    expect(e.srv.control.requests().filter((q) => q.method !== 'GET' && q.method !== 'OPTIONS')).toEqual([]);
  }, 120_000);

  it('that a GET of the item repeats parks both files with the reason, moves and trashes nothing local, and a later run converges', async () => {
    e.srv.control.failNext({ method: 'POST', path: /^\/api\/2\.0\/files\/(content|\d+\/content)$/, count: 2, transform: otherParent });
    e.srv.control.failNext({ method: 'GET', path: /^\/2\.0\/files\/\d+$/, count: 1000, transform: otherParent });
    const r = await e.sync();
    expect(r.code, explain(r)).not.toBe(0);
    expect(`${r.stdout}${r.stderr}`).toMatch(/contradicts the request/);
    expect(`${r.stdout}${r.stderr}`).toMatch(/nothing local was moved or trashed/);
    expect(await readText(join(e.mirror, 'kept.txt'))).toBe('edited here');
    expect(await readText(join(e.mirror, 'new.txt'))).toBe('new here');
    expect(await trashed()).toEqual([]);

    // The uploads did reach Box where they were asked to go; only the answers lied. Once the server answers
    // truthfully, the next run sees Box holding the same content as the disk and links them: nothing is
    // uploaded twice, nothing is lost, no conflict copy.
    e.srv.control.clearFaults();
    const later = await e.sync();
    expect(later.code, explain(later)).toBe(0);
    expect(await trashed()).toEqual([]);
    expect((await readdir(e.mirror)).sort()).toEqual(['kept.txt', 'new.txt']);
    expect(e.web.readFile(keptId).toString()).toBe('edited here');
    expect(e.web.readFile(e.web.findByPath('Mirror/new.txt')!.id).toString()).toBe('new here');
  }, 120_000);
});
