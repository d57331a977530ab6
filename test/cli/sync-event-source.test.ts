/**
 * Issue 29 point 7: an edit of a synced file on Box whose event carries the whole file (its `source`) costs no GET of
 * the item: the event's source is taken when its sequence_id is newer than the journal's (engine/remote-hints.ts
 * trustedSources). An event that is late, repeated or out of order never rolls the file back, and a source that
 * lacks a field a GET reads is not taken (the item is fetched). Real CLI runs against box-server.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { explain, startSyncEnv, TOKEN } from './sync-harness.js';

type Env = Awaited<ReturnType<typeof startSyncEnv>>;
let env: Env | null = null;
afterEach(async () => {
  await env?.close();
  env = null;
});

/** The item GETs (`GET /2.0/files/ID`) made since the log was last cleared, by file id. */
function itemGets(e: Env): string[] {
  return e.srv.control
    .requests()
    .filter((r) => r.method === 'GET' && /^\/2\.0\/files\/[^/]+$/.test(r.path))
    .map((r) => r.path.slice('/2.0/files/'.length));
}

/** Every event of the `changes` stream so far, as Box sends them. */
async function allEvents(e: Env): Promise<{ event_type: string; source: { id: string; sequence_id: string } | null }[]> {
  const res = await fetch(`${e.srv.apiUrl}/events?stream_type=changes&stream_position=0&limit=500`, { headers: { authorization: `Bearer ${TOKEN}` } });
  return ((await res.json()) as { entries: { event_type: string; source: { id: string; sequence_id: string } | null }[] }).entries;
}

const text = (e: Env, name: string): Promise<string> => readFile(join(e.mirror, name), 'utf8');

/** A Box folder holding a.txt ("v1"), mirrored by a first sync. */
async function mirroredFile(): Promise<{ e: Env; a: { id: string } }> {
  env = await startSyncEnv();
  const a = env.web.uploadFile(env.remoteRootId, 'a.txt', 'v1');
  await env.syncOk();
  return { e: env, a };
}

describe("sync --once: Box events' sources", () => {
  it('edits on Box sync without a GET of each edited file; a source without content_modified_at is fetched', async () => {
    env = await startSyncEnv();
    const e = env;
    const files = ['a.txt', 'b.txt', 'c.txt'].map((name) => ({ name, id: e.web.uploadFile(e.remoteRootId, name, `${name} v1`).id }));
    await e.syncOk();
    for (const f of files) e.web.uploadVersion(f.id, `${f.name} v2`);
    const c = files[2]!.id;
    // c's events show it without content_modified_at (a GET would read it): c is fetched.
    e.srv.control.failNext({
      method: 'GET',
      path: '/2.0/events',
      count: 10_000,
      transform: (b) => {
        const body = b as { entries: { source?: Record<string, unknown> | null }[] };
        return { ...body, entries: body.entries.map((ev) => (ev.source?.id === c ? { ...ev, source: { ...ev.source, content_modified_at: undefined } } : ev)) };
      },
    });
    e.srv.control.clearRequests();
    const r = await e.syncOk();
    for (const f of files) expect(await text(e, f.name), explain(r)).toBe(`${f.name} v2`);
    expect(itemGets(e)).toEqual([c]);
  });

  it('a late event of an older version, sent again after a newer one synced, is fetched and never rolls the file back', async () => {
    const { e, a } = await mirroredFile();
    e.web.uploadVersion(a.id, 'v2');
    await e.syncOk();
    expect(await text(e, 'a.txt')).toBe('v2');
    // The event of v2 (the newest of a's events so far), kept to be sent again later.
    const v2 = (await allEvents(e)).filter((ev) => ev.source?.id === a.id).at(-1)!;
    expect(v2).toBeDefined();
    e.web.uploadVersion(a.id, 'v3');
    await e.syncOk();
    expect(await text(e, 'a.txt')).toBe('v3');
    // The next answer of the event stream repeats v2's event, whose source shows v2 (an older sequence_id).
    e.srv.control.failNext({
      method: 'GET',
      path: '/2.0/events',
      count: 1,
      transform: (b) => {
        const body = b as { entries: unknown[] };
        return { ...body, chunk_size: body.entries.length + 1, entries: [v2, ...body.entries] };
      },
    });
    e.srv.control.clearRequests();
    const r = await e.syncOk();
    expect(await text(e, 'a.txt'), explain(r)).toBe('v3');
    // Not taken from the stale source: fetched, and Box's answer (v3) is what the journal holds.
    expect(itemGets(e)).toEqual([a.id]);
    e.srv.control.clearRequests();
    await e.syncOk();
    expect(await text(e, 'a.txt')).toBe('v3');
  });

  it('two versions whose events come reordered and repeated in one batch: the newer one is synced', async () => {
    const { e, a } = await mirroredFile();
    e.web.uploadVersion(a.id, 'v2');
    e.web.uploadVersion(a.id, 'v3');
    e.srv.control.setEventChaos({ duplicate: true, reorder: true });
    const r = await e.syncOk();
    expect(await text(e, 'a.txt'), explain(r)).toBe('v3');
    e.srv.control.setEventChaos({});
    await e.syncOk();
    expect(await text(e, 'a.txt')).toBe('v3');
  });
});
