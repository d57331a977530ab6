/**
 * box-server events: paging by stream position, stream types (all, changes, sync), the realtime server entry,
 * and the long poll (new_change at once or as soon as something happens, reconnect on timeout).
 */
import { describe, expect, it } from 'vitest';
import { arr, boxHttp, obj, useBoxServer } from '../support/box-server.js';

const h = useBoxServer({ longPollTimeoutMs: 400 });

async function position(): Promise<string> {
  return String(obj((await boxHttp(h.srv).get('/events?stream_position=now')).json).next_stream_position);
}

async function eventsFrom(pos: string, streamType = 'all', limit = 100): Promise<{ types: string[]; next: string; entries: Record<string, unknown>[] }> {
  const page = obj((await boxHttp(h.srv).get(`/events?stream_position=${pos}&stream_type=${streamType}&limit=${limit}`)).json);
  const entries = arr(page.entries).map(obj);
  expect(page.chunk_size).toBe(entries.length);
  expect(typeof page.next_stream_position).toBe('string');
  return { types: entries.map((e) => String(e.event_type)), next: String(page.next_stream_position), entries };
}

describe('GET /events', () => {
  it('pages through every event by position with small limits; positions are digit strings that never go back', async () => {
    const start = await position();
    const web = h.srv.control.as('1');
    const f = web.createFolder('0', 'paged');
    for (let i = 0; i < 5; i++) web.uploadFile(f.id, `p${i}.txt`, String(i));
    const seen: string[] = [];
    let pos = start;
    for (let i = 0; i < 10; i++) {
      const page = await eventsFrom(pos, 'all', 2);
      expect(page.next).toMatch(/^\d+$/);
      expect(Number(page.next)).toBeGreaterThanOrEqual(Number(pos));
      if (page.entries.length === 0) break;
      seen.push(...page.entries.map((e) => String(e.event_id)));
      pos = page.next;
    }
    expect(seen).toHaveLength(6);
    expect(new Set(seen).size).toBe(6);
    expect((await eventsFrom(start)).entries.map((e) => e.event_id)).toEqual(seen);
  });

  it('carries the fields Box uses, with the full item as source', async () => {
    const start = await position();
    const file = h.srv.control.as('1').uploadFile('0', 'fields.txt', 'x');
    const [ev] = (await eventsFrom(start)).entries;
    expect(ev).toMatchObject({ type: 'event', event_type: 'ITEM_UPLOAD', created_by: { type: 'user', id: '1' } });
    expect(typeof ev!.event_id).toBe('string');
    expect(typeof ev!.session_id).toBe('string');
    expect(Date.parse(String(ev!.created_at))).not.toBeNaN();
    expect(obj(ev!.source)).toMatchObject({ type: 'file', id: file.id, name: 'fields.txt', sha1: file.sha1, item_status: 'active', parent: { id: '0' } });
  });

  it('changes leaves out downloads; all keeps them', async () => {
    const start = await position();
    const file = h.srv.control.as('1').uploadFile('0', 'dl.txt', 'x');
    expect((await boxHttp(h.srv).get(`/files/${file.id}/content`)).status).toBe(302);
    expect((await eventsFrom(start, 'all')).types).toEqual(['ITEM_UPLOAD', 'ITEM_DOWNLOAD']);
    expect((await eventsFrom(start, 'changes')).types).toEqual(['ITEM_UPLOAD']);
  });

  it('sync carries only items under synced folders, plus ITEM_SYNC and ITEM_UNSYNC', async () => {
    const start = await position();
    const web = h.srv.control.as('1');
    const synced = web.createFolder('0', 'synced-root');
    const plain = web.createFolder('0', 'plain-root');
    web.setSyncState(synced.id, 'synced');
    const inner = web.createFolder(synced.id, 'inner');
    web.uploadFile(inner.id, 'deep.txt', 'deep');
    web.uploadFile(plain.id, 'outside.txt', 'no');
    web.setSyncState(synced.id, 'not_synced');
    web.uploadFile(synced.id, 'after.txt', 'late');
    const sync = await eventsFrom(start, 'sync');
    expect(sync.types).toEqual(['ITEM_SYNC', 'ITEM_CREATE', 'ITEM_UPLOAD', 'ITEM_UNSYNC']);
    expect(sync.entries.map((e) => obj(e.source).name)).toEqual(['synced-root', 'inner', 'deep.txt', 'synced-root']);
    expect((await eventsFrom(start, 'changes')).types).toHaveLength(8);
  });

  it('caps limit at 500 and refuses unknown stream types and positions', async () => {
    const api = boxHttp(h.srv);
    expect((await api.get('/events?stream_position=0&limit=100000')).status).toBe(200);
    expect(obj((await api.get('/events?stream_type=everything')).json).status).toBe(400);
    expect(obj((await api.get('/events?stream_position=abc')).json).status).toBe(400);
  });
});

describe('long poll', () => {
  async function realtimeUrl(streamType = 'all'): Promise<string> {
    const r = await boxHttp(h.srv).options(`/events?stream_type=${streamType}`);
    expect(r.status).toBe(200);
    const entry = obj(arr(obj(r.json).entries)[0]);
    expect(entry).toMatchObject({ type: 'realtime_server', ttl: expect.any(String), max_retries: expect.any(String), retry_timeout: expect.any(Number) });
    expect(String(entry.url).startsWith(`${h.srv.baseUrl}/`)).toBe(true);
    return String(entry.url);
  }

  it('answers new_change at once when an event already follows the position', async () => {
    const url = await realtimeUrl();
    const start = await position();
    h.srv.control.as('1').createFolder('0', 'lp-now');
    const r = await fetch(`${url}&stream_position=${start}`);
    // A server that waited would answer 'reconnect' at its 400 ms timeout: the answer itself says "at once",
    // with no wall-clock bound a busy machine could break.
    expect(await r.json()).toEqual({ message: 'new_change' });
  });

  it('waits, then answers new_change as soon as something changes', async () => {
    const url = await realtimeUrl('changes');
    const start = await position();
    const pending = fetch(`${url}&stream_position=${start}`).then((r) => r.json() as Promise<unknown>);
    let settled = false;
    void pending.then(() => (settled = true));
    await new Promise((r) => setImmediate(r));
    expect(settled).toBe(false);
    h.srv.control.as('1').createFolder('0', 'lp-later');
    expect(await pending).toEqual({ message: 'new_change' });
  });

  it('answers reconnect after the timeout when nothing happens', async () => {
    const url = await realtimeUrl();
    const start = await position();
    const t0 = Date.now();
    const r = await fetch(`${url}&stream_position=${start}`);
    expect(await r.json()).toEqual({ version: 1, message: 'reconnect' });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(350);
  });

  it('is refused for the enterprise stream, which an admin can read but not from now', async () => {
    const admin = h.srv.control.addUser({ enterpriseAdmin: true });
    const api = boxHttp(h.srv, admin.token);
    expect((await api.options('/events?stream_type=admin_logs')).status).toBe(400);
    expect((await api.get('/events?stream_type=admin_logs&stream_position=now')).status).toBe(400);
    const page = obj((await api.get('/events?stream_type=admin_logs&stream_position=0&limit=5')).json);
    const first = obj(arr(page.entries)[0]);
    expect(obj(first.source)).toHaveProperty('item_id');
    expect((await boxHttp(h.srv).get('/events?stream_type=admin_logs')).status).toBe(403);
  });

  it('filters the enterprise stream by created_after/created_before at the whole second its created_at shows', async () => {
    // box-node-sdk's testGetEventsWithDateFilters asks for created_before = now in whole seconds; an event from
    // earlier in that same second must be in the answer, as its created_at (whole seconds) says it is.
    const admin = h.srv.control.addUser({ enterpriseAdmin: true });
    const api = boxHttp(h.srv, admin.token);
    const created = await boxHttp(h.srv).post('/folders', { body: { name: `dated-${Date.now()}`, parent: { id: '0' } } });
    expect(created.status).toBe(201);
    const folderId = String(obj(created.json).id);
    const all = arr(obj((await api.get('/events?stream_type=admin_logs&stream_position=0&limit=500')).json).entries).map(obj);
    const ev = all.find((e) => obj(e.source).item_id === folderId);
    expect(ev, 'the folder creation is in the admin stream').toBeDefined();
    const at = String(ev!.created_at);
    expect(at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\+00:00|Z)$/);
    const q = `created_after=${encodeURIComponent(at)}&created_before=${encodeURIComponent(at)}`;
    const page = obj((await api.get(`/events?stream_type=admin_logs&stream_position=0&limit=500&${q}`)).json);
    const ids = arr(page.entries).map((e) => obj(obj(e).source).item_id);
    expect(ids).toContain(folderId);
    const later = new Date(Date.parse(at) + 1000).toISOString().replace('.000Z', '+00:00');
    const after = obj((await api.get(`/events?stream_type=admin_logs&stream_position=0&limit=500&created_after=${encodeURIComponent(later)}`)).json);
    expect(arr(after.entries).map((e) => obj(obj(e).source).item_id)).not.toContain(folderId);
  });
});
