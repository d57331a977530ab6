// Every operation box-server serves, called over real HTTP, and every JSON response checked against the
// schema openapi.json names for that operation and status. The last test asserts that each operation was
// actually exercised with a success status, so a skipped call cannot pass silently.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { arr, boxHttp, obj, useBoxServer, type BoxReply } from '../support/box-server.js';
import { loadOpenApi } from '../support/openapi.js';

const spec = loadOpenApi();
const handle = useBoxServer({ longPollTimeoutMs: 1500, accessTokenTtlSec: 3600 });
const http = () => boxHttp(handle.srv);

const covered = new Set<string>();

/** Checks a reply against the spec and records `METHOD template status` as covered. */
function conform(reply: BoxReply, method: string, expectedStatus: number, variant?: string): Record<string, unknown> {
  const path = new URL(reply.url).pathname;
  if (reply.status !== expectedStatus) {
    throw new Error(`${method} ${path}: expected ${expectedStatus}, got ${reply.status}: ${reply.text.slice(0, 500)}`);
  }
  const r = spec.expectValid({ method, path, status: reply.status, body: reply.json, variant });
  covered.add(`${method.toUpperCase()} ${r.template} ${reply.status}`);
  if (r.schemaRef === undefined) return {};
  if (reply.headers['content-type'] !== undefined) expect(reply.headers['content-type']).toMatch(/^application\/json/);
  return obj(reply.json);
}

function sha1Hex(b: Buffer | string): string {
  return createHash('sha1').update(b).digest('hex');
}
function sha1B64(b: Buffer | string): string {
  return createHash('sha1').update(b).digest('base64');
}

let seq = 0;
const unique = (p: string): string => `${p}-${Date.now().toString(36)}-${seq++}`;

async function mkFolder(parentId = '0', name = unique('folder')): Promise<Record<string, unknown>> {
  return conform(await http().post('/folders', { body: { name, parent: { id: parentId } } }), 'POST', 201);
}

async function mkFile(parentId: string, content: string, name = unique('file.txt')): Promise<Record<string, unknown>> {
  const files = conform(await http().upload('/files/content', { name, parent: { id: parentId } }, content), 'POST', 201);
  return obj(arr(files.entries)[0]);
}

describe('box-server responses match openapi.json', () => {
  it('GET /users/me', async () => {
    const me = conform(await http().get('/users/me'), 'GET', 200);
    expect(me.id).toBe('1');
    expect(spec.validateSchema('User--Full', me)).toEqual([]);
    for (const f of ['login', 'space_amount', 'space_used', 'max_upload_size']) expect(me).toHaveProperty(f);
    const some = conform(await http().get('/users/me?fields=login,max_upload_size'), 'GET', 200);
    expect(some.login).toBeTypeOf('string');
  });

  it('folders: create, get (+fields, 304), update, copy, list with offset and marker paging', async () => {
    const parent = await mkFolder();
    const pid = String(parent.id);
    expect(parent.type).toBe('folder');
    const got = conform(await http().get(`/folders/${pid}`), 'GET', 200);
    expect(got.name).toBe(parent.name);
    expect(obj(got.path_collection).total_count).toBe(1);
    const withFields = conform(await http().get(`/folders/${pid}?fields=name,sync_state,item_status`), 'GET', 200);
    expect(withFields.item_status).toBe('active');
    const notModified = await http().get(`/folders/${pid}`, { headers: { 'If-None-Match': String(got.etag) } });
    conform(notModified, 'GET', 304);
    expect(notModified.text).toBe('');

    for (let i = 0; i < 5; i++) await mkFile(pid, `content ${i}`, `f${i}.txt`);
    await mkFolder(pid, 'sub');
    const page = conform(await http().get(`/folders/${pid}/items?limit=2&offset=0&fields=name,size,modified_at,parent`), 'GET', 200);
    expect(page.total_count).toBe(6);
    expect(arr(page.entries)).toHaveLength(2);
    expect(obj(arr(page.entries)[0]).type).toBe('folder');
    const names: string[] = [];
    let marker: string | undefined;
    for (let guard = 0; guard < 10; guard++) {
      const q = `usemarker=true&limit=4${marker ? `&marker=${encodeURIComponent(marker)}` : ''}`;
      const body = conform(await http().get(`/folders/${pid}/items?${q}`), 'GET', 200);
      expect(body).not.toHaveProperty('total_count');
      for (const e of arr(body.entries)) names.push(String(obj(e).name));
      marker = typeof body.next_marker === 'string' && body.next_marker !== '' ? body.next_marker : undefined;
      if (!marker) break;
    }
    expect(names.sort()).toEqual(['f0.txt', 'f1.txt', 'f2.txt', 'f3.txt', 'f4.txt', 'sub']);

    const renamed = conform(await http().put(`/folders/${pid}`, { body: { name: unique('renamed'), sync_state: 'synced' } }), 'PUT', 200);
    expect(renamed.etag).not.toBe(got.etag);
    const full = conform(await http().get(`/folders/${pid}?fields=sync_state`), 'GET', 200);
    expect(full.sync_state).toBe('synced');
    const dest = await mkFolder();
    const copy = conform(await http().post(`/folders/${pid}/copy`, { body: { parent: { id: dest.id }, name: 'copied' } }), 'POST', 201);
    expect(copy.id).not.toBe(pid);
    const moved = conform(await http().put(`/folders/${String(copy.id)}`, { body: { parent: { id: '0' } } }), 'PUT', 200);
    expect(obj(moved.parent).id).toBe('0');
  });

  it('files: preflight, upload, get, new version, update, copy, delete', async () => {
    const folder = await mkFolder();
    const fid = String(folder.id);
    const pre = conform(await http().options('/files/content', { body: { name: 'pre.txt', size: 5, parent: { id: fid } } }), 'OPTIONS', 200);
    expect(String(pre.upload_url)).toMatch(/^http:\/\//);
    const content = 'hello box';
    const file = await mkFile(fid, content, 'hello.txt');
    expect(file.sha1).toBe(sha1Hex(content));
    expect(spec.validateSchema('File', file)).toEqual([]);
    const id = String(file.id);
    const got = conform(await http().get(`/files/${id}?fields=name,size,sha1,file_version,path_collection,content_modified_at,lock,permissions`), 'GET', 200);
    expect(got.size).toBe(content.length);
    // With `fields`, Box returns only those plus the base fields (WIRE.md section 1).
    const only = conform(await http().get(`/files/${id}?fields=name`), 'GET', 200);
    expect(Object.keys(only).sort()).toEqual(['etag', 'id', 'name', 'type']);
    const listed = conform(await http().get(`/folders/${fid}/items`), 'GET', 200);
    const mini = obj(arr(listed.entries).find((e) => obj(e).id === id));
    // Default listing entries are the mini form.
    expect(Object.keys(mini).sort()).toEqual(['etag', 'file_version', 'id', 'name', 'sequence_id', 'sha1', 'type']);
    conform(await http().get(`/files/${id}`, { headers: { 'If-None-Match': String(got.etag) } }), 'GET', 304);
    const v2 = conform(await http().upload(`/files/${id}/content`, { name: 'hello.txt' }, 'second', { headers: { 'If-Match': String(got.etag) } }), 'POST', 200);
    expect(obj(arr(v2.entries)[0]).sha1).toBe(sha1Hex('second'));
    const upd = conform(await http().put(`/files/${id}`, { body: { name: 'hello-renamed.txt', description: 'd' } }), 'PUT', 200);
    expect(upd.name).toBe('hello-renamed.txt');
    const copy = conform(await http().post(`/files/${id}/copy`, { body: { parent: { id: '0' }, name: unique('copy.txt') } }), 'POST', 201);
    expect(copy.sha1).toBe(sha1Hex('second'));
    conform(await http().delete(`/files/${String(copy.id)}`), 'DELETE', 204);
  });

  it('download: 302 to a URL that needs no token, 200 body, 206 range, version query', async () => {
    const folder = await mkFolder();
    const file = await mkFile(String(folder.id), 'abcdefghij', 'dl.txt');
    const id = String(file.id);
    const firstVersion = String(obj(file.file_version).id);
    await http().upload(`/files/${id}/content`, { name: 'dl.txt' }, '0123456789');
    const redirect = await http().get(`/files/${id}/content`);
    conform(redirect, 'GET', 302);
    const location = redirect.headers.location;
    expect(location).toMatch(/^http:\/\//);
    const body = await fetch(String(location));
    expect(body.status).toBe(200);
    expect(await body.text()).toBe('0123456789');
    const ranged = await fetch(String(location), { headers: { Range: 'bytes=2-5' } });
    expect(ranged.status).toBe(206);
    expect(ranged.headers.get('content-range')).toBe('bytes 2-5/10');
    expect(await ranged.text()).toBe('2345');
    const old = await http().get(`/files/${id}/content?version=${firstVersion}`);
    conform(old, 'GET', 302);
    expect(await (await fetch(String(old.headers.location))).text()).toBe('abcdefghij');
  });

  it('versions: list, get one, promote, delete', async () => {
    const folder = await mkFolder();
    const file = await mkFile(String(folder.id), 'v1', 'ver.txt');
    const id = String(file.id);
    await http().upload(`/files/${id}/content`, { name: 'ver.txt' }, 'v2');
    await http().upload(`/files/${id}/content`, { name: 'ver.txt' }, 'v3');
    const list = conform(await http().get(`/files/${id}/versions`), 'GET', 200);
    const entries = arr(list.entries).map(obj);
    expect(entries.length).toBe(2);
    const v1 = entries.find((e) => e.sha1 === sha1Hex('v1'));
    expect(v1).toBeDefined();
    const one = conform(await http().get(`/files/${id}/versions/${String(v1?.id)}`), 'GET', 200);
    expect(one.sha1).toBe(sha1Hex('v1'));
    const promoted = conform(await http().post(`/files/${id}/versions/current`, { body: { type: 'file_version', id: v1?.id } }), 'POST', 201);
    expect(promoted.sha1).toBe(sha1Hex('v1'));
    const after = conform(await http().get(`/files/${id}/versions`), 'GET', 200);
    const victim = obj(arr(after.entries)[0]);
    conform(await http().delete(`/files/${id}/versions/${String(victim.id)}`), 'DELETE', 204);
    const back = conform(await http().put(`/files/${id}/versions/${String(victim.id)}`, { body: { trashed_at: null } }), 'PUT', 200);
    expect(back.trashed_at).toBeNull();
  });

  it('trash: delete, list trash, get trashed item, restore, purge (files and folders)', async () => {
    const folder = await mkFolder();
    const file = await mkFile(String(folder.id), 'trash me', 'trash.txt');
    const id = String(file.id);
    conform(await http().delete(`/files/${id}`), 'DELETE', 204);
    const trashed = conform(await http().get(`/files/${id}/trash`), 'GET', 200);
    expect(trashed.item_status).toBe('trashed');
    const list = conform(await http().get('/folders/trash/items?limit=100'), 'GET', 200);
    expect(arr(list.entries).some((e) => obj(e).id === id)).toBe(true);
    const restored = conform(await http().post(`/files/${id}`, { body: {} }), 'POST', 201);
    expect(restored.item_status).toBe('active');
    conform(await http().delete(`/files/${id}`), 'DELETE', 204);
    conform(await http().delete(`/files/${id}/trash`), 'DELETE', 204);

    const sub = await mkFolder(String(folder.id));
    const subId = String(sub.id);
    conform(await http().delete(`/folders/${subId}?recursive=true`), 'DELETE', 204);
    const tf = conform(await http().get(`/folders/${subId}/trash`), 'GET', 200);
    expect(tf.item_status).toBe('trashed');
    const rf = conform(await http().post(`/folders/${subId}`, { body: { name: unique('back') } }), 'POST', 201);
    expect(rf.item_status).toBe('active');
    conform(await http().delete(`/folders/${subId}`), 'DELETE', 204);
    conform(await http().delete(`/folders/${subId}/trash`), 'DELETE', 204);
    const markerTrash = conform(await http().get('/folders/trash/items?usemarker=true&limit=1'), 'GET', 200);
    expect(Array.isArray(markerTrash.entries)).toBe(true);
  });

  it('locks and shared links on files and folders', async () => {
    const folder = await mkFolder();
    const file = await mkFile(String(folder.id), 'locked', 'lock.txt');
    const id = String(file.id);
    const locked = conform(await http().put(`/files/${id}?fields=lock`, { body: { lock: { access: 'lock', is_download_prevented: false } } }), 'PUT', 200);
    expect(obj(locked.lock).type).toBe('lock');
    const unlocked = conform(await http().put(`/files/${id}?fields=lock`, { body: { lock: null } }), 'PUT', 200);
    expect(unlocked.lock ?? null).toBeNull();

    const shared = conform(
      await http().put(`/files/${id}?fields=shared_link`, { body: { shared_link: { access: 'open', password: 'pw-123456', permissions: { can_download: true } } } }),
      'PUT',
      200,
      'add_shared_link',
    );
    const link = obj(shared.shared_link);
    expect(String(link.url)).toMatch(/^http/);
    expect(link.is_password_enabled).toBe(true);
    const read = conform(await http().get(`/files/${id}?fields=shared_link`), 'GET', 200, 'get_shared_link');
    expect(obj(read.shared_link).url).toBe(link.url);
    const removed = conform(await http().put(`/files/${id}?fields=shared_link`, { body: { shared_link: null } }), 'PUT', 200, 'remove_shared_link');
    expect(removed.shared_link ?? null).toBeNull();

    const fshared = conform(
      await http().put(`/folders/${String(folder.id)}?fields=shared_link`, { body: { shared_link: { access: 'open' } } }),
      'PUT',
      200,
      'add_shared_link',
    );
    expect(obj(fshared.shared_link).access).toBe('open');
  });

  it('upload sessions: create, part, list parts, status, commit; new-version session; abort', async () => {
    const folder = await mkFolder();
    const size = 20_000_000 + 123;
    const data = Buffer.alloc(size);
    for (let i = 0; i < size; i += 4096) data[i] = (i / 4096) % 251;
    const session = conform(
      await http().post(`${handle.srv.uploadUrl}/files/upload_sessions`, { body: { folder_id: String(folder.id), file_size: size, file_name: 'big.bin' } }),
      'POST',
      201,
    );
    const ends = obj(session.session_endpoints);
    const partSize = Number(session.part_size);
    expect(session.total_parts).toBe(Math.ceil(size / partSize));
    const parts: Record<string, unknown>[] = [];
    for (let off = 0; off < size; off += partSize) {
      const chunk = data.subarray(off, Math.min(off + partSize, size));
      const r = await http().put(String(ends.upload_part), {
        rawBody: chunk,
        headers: { 'Content-Type': 'application/octet-stream', 'Content-Range': `bytes ${off}-${off + chunk.length - 1}/${size}`, Digest: `sha=${sha1B64(chunk)}` },
      });
      const part = obj(conform(r, 'PUT', 200).part);
      expect(part.sha1).toBe(sha1Hex(chunk));
      parts.push(part);
    }
    const listed = conform(await http().get(String(ends.list_parts)), 'GET', 200);
    expect(listed.total_count).toBe(parts.length);
    const status = conform(await http().get(String(ends.status)), 'GET', 200);
    expect(status.num_parts_processed).toBe(parts.length);
    handle.srv.control.commitAccepted(1, 1);
    const commitOpts = { body: { parts }, headers: { Digest: `sha=${sha1B64(data)}` } };
    const accepted = await http().post(String(ends.commit), commitOpts);
    conform(accepted, 'POST', 202);
    expect(accepted.headers['retry-after']).toBe('1');
    const committed = conform(await http().post(String(ends.commit), commitOpts), 'POST', 201);
    const big = obj(arr(committed.entries)[0]);
    expect(big.size).toBe(size);
    expect(big.sha1).toBe(sha1Hex(data));

    const vs = conform(await http().post(`${handle.srv.uploadUrl}/files/${String(big.id)}/upload_sessions`, { body: { file_size: size, file_name: 'big.bin' } }), 'POST', 201);
    conform(await http().delete(String(obj(vs.session_endpoints).abort)), 'DELETE', 204);
  });

  it('events: stream positions, OPTIONS realtime server, long poll answers new_change and reconnect', async () => {
    const now = conform(await http().get('/events?stream_position=now'), 'GET', 200);
    expect(arr(now.entries)).toHaveLength(0);
    const pos = String(now.next_stream_position);
    const folder = await mkFolder();
    const ev = conform(await http().get(`/events?stream_position=${pos}&stream_type=changes&limit=500`), 'GET', 200);
    const entries = arr(ev.entries).map(obj);
    const create = entries.find((e) => e.event_type === 'ITEM_CREATE' && obj(e.source).id === folder.id);
    expect(create).toBeDefined();
    // oneOf is read as a union (GenericSource overlaps everything), so check the exact alternative here.
    expect(spec.validateSchema('Folder', create?.source)).toEqual([]);
    expect(ev.chunk_size).toBe(entries.length);

    const rt = conform(await http().options('/events'), 'OPTIONS', 200);
    const server = obj(arr(rt.entries).find((e) => obj(e).type === 'realtime_server'));
    expect(server.ttl).toBeTypeOf('string');
    expect(server.max_retries).toBeTypeOf('string');
    expect(server.retry_timeout).toBeTypeOf('number');
    const head = String(conform(await http().get('/events?stream_position=now'), 'GET', 200).next_stream_position);
    const pollUrl = `${String(server.url)}&stream_position=${head}`;
    const idle = await http().get(pollUrl);
    expect(idle.status).toBe(200);
    expect(obj(idle.json).message).toBe('reconnect');
    const woken = http().get(pollUrl);
    await mkFolder();
    const change = await woken;
    expect(obj(change.json).message).toBe('new_change');
  });

  it('events: the sync stream carries ITEM_SYNC and only items under synced folders', async () => {
    const head = String(conform(await http().get('/events?stream_type=sync&stream_position=now'), 'GET', 200).next_stream_position);
    const synced = await mkFolder();
    const plain = await mkFolder();
    conform(await http().put(`/folders/${String(synced.id)}`, { body: { sync_state: 'synced' } }), 'PUT', 200);
    const inSynced = await mkFile(String(synced.id), 'in synced');
    const inPlain = await mkFile(String(plain.id), 'in plain');
    const ev = conform(await http().get(`/events?stream_type=sync&stream_position=${head}&limit=500`), 'GET', 200);
    const entries = arr(ev.entries).map(obj);
    const sourceIds = entries.map((e) => obj(e.source ?? {}).id);
    expect(entries.some((e) => e.event_type === 'ITEM_SYNC' && obj(e.source).id === synced.id)).toBe(true);
    expect(sourceIds).toContain(inSynced.id);
    expect(sourceIds).not.toContain(inPlain.id);
    expect(sourceIds).not.toContain(plain.id);
  });

  it('web links: create, get, update, trash, restore, purge; listed beside files and folders', async () => {
    const folder = await mkFolder();
    const fid = String(folder.id);
    const created = conform(await http().post('/web_links', { body: { url: 'https://example.com/a', parent: { id: fid }, name: 'Example' } }), 'POST', 200);
    const id = String(created.id);
    expect(created.type).toBe('web_link');
    const got = conform(await http().get(`/web_links/${id}`), 'GET', 200);
    expect(got.url).toBe('https://example.com/a');
    const upd = conform(await http().put(`/web_links/${id}`, { body: { url: 'https://example.com/b', name: 'Example B' } }), 'PUT', 200);
    expect(upd.url).toBe('https://example.com/b');
    const listing = conform(await http().get(`/folders/${fid}/items?fields=name,url`), 'GET', 200);
    expect(arr(listing.entries).map((e) => obj(e).type)).toContain('web_link');
    conform(await http().delete(`/web_links/${id}`), 'DELETE', 204);
    const trashed = conform(await http().get(`/web_links/${id}/trash`), 'GET', 200);
    expect(trashed.item_status).toBe('trashed');
    const restored = conform(await http().post(`/web_links/${id}`, { body: {} }), 'POST', 201);
    expect(restored.item_status).toBe('active');
    conform(await http().delete(`/web_links/${id}`), 'DELETE', 204);
    conform(await http().delete(`/web_links/${id}/trash`), 'DELETE', 204);
  });

  it('users: GET /users/{id} for another user', async () => {
    const other = handle.srv.control.addUser({ name: 'Someone Else', login: 'else@example.com' });
    const u = conform(await http().get(`/users/${other.userId}`), 'GET', 200);
    expect(u.login).toBe('else@example.com');
  });

  it('folder shared links: add, get, remove', async () => {
    const folder = await mkFolder();
    const id = String(folder.id);
    conform(await http().put(`/folders/${id}?fields=shared_link`, { body: { shared_link: { access: 'collaborators' } } }), 'PUT', 200, 'add_shared_link');
    const read = conform(await http().get(`/folders/${id}?fields=shared_link`), 'GET', 200, 'get_shared_link');
    expect(obj(read.shared_link).access).toBe('collaborators');
    const removed = conform(await http().put(`/folders/${id}?fields=shared_link`, { body: { shared_link: null } }), 'PUT', 200, 'remove_shared_link');
    expect(removed.shared_link ?? null).toBeNull();
  });

  it('oauth2 authorize page: HTML consent, then a redirect carrying code and state', async () => {
    const { control, authorizeUrl } = handle.srv;
    control.registerOAuthClient({ clientId: 'browser', clientSecret: 's3', redirectUris: ['http://localhost:9/cb'] });
    const q = new URLSearchParams({ response_type: 'code', client_id: 'browser', redirect_uri: 'http://localhost:9/cb', state: 'xyz' });
    const page = await http().get(`${authorizeUrl}?${q}`, { token: null });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    covered.add(`GET /authorize ${page.status}`);
    const approve = await http().post(authorizeUrl, { rawBody: q, token: null });
    expect(approve.status).toBe(302);
    const back = new URL(String(approve.headers.location));
    expect(back.origin + back.pathname).toBe('http://localhost:9/cb');
    expect(back.searchParams.get('state')).toBe('xyz');
    const code = String(back.searchParams.get('code'));
    const tok = await http().post(handle.srv.tokenUrl, { rawBody: new URLSearchParams({ grant_type: 'authorization_code', code, client_id: 'browser', client_secret: 's3' }), token: null });
    expect(conform(tok, 'POST', 200).access_token).toBeTypeOf('string');
  });

  it('oauth2: authorization_code, refresh_token, revoke', async () => {
    const { control, tokenUrl } = handle.srv;
    control.registerOAuthClient({ clientId: 'cid', clientSecret: 'secret', redirectUris: ['http://localhost/cb'] });
    const code = control.issueAuthCode('cid', '1', 'http://localhost/cb');
    const form = (f: Record<string, string>) => ({ rawBody: new URLSearchParams(f), token: null });
    const first = await http().post(tokenUrl, form({ grant_type: 'authorization_code', code, client_id: 'cid', client_secret: 'secret' }));
    const tok = conform(first, 'POST', 200);
    expect(tok.token_type).toBe('bearer');
    const refreshed = await http().post(tokenUrl, form({ grant_type: 'refresh_token', refresh_token: String(tok.refresh_token), client_id: 'cid', client_secret: 'secret' }));
    const tok2 = conform(refreshed, 'POST', 200, 'refresh');
    expect(tok2.refresh_token).not.toBe(tok.refresh_token);
    const me = await boxHttp(handle.srv, String(tok2.access_token)).get('/users/me');
    expect(me.status).toBe(200);
    conform(await http().post(`${handle.srv.baseUrl}/oauth2/revoke`, form({ client_id: 'cid', client_secret: 'secret', token: String(tok2.access_token) })), 'POST', 200);
    expect((await boxHttp(handle.srv, String(tok2.access_token)).get('/users/me')).status).toBe(401);
    const bad = await http().post(tokenUrl, form({ grant_type: 'refresh_token', refresh_token: String(tok.refresh_token), client_id: 'cid', client_secret: 'secret' }));
    const err = conform(bad, 'POST', 400);
    expect(err.error).toBe('invalid_grant');
  });

  it('error bodies match ClientError for the operations that produced them', async () => {
    const missing = await http().get('/files/999999999');
    const e = conform(missing, 'GET', 404);
    expect(e.type).toBe('error');
    expect(e.code).toBe('not_found');
    const folder = await mkFolder();
    const dup = await http().post('/folders', { body: { name: String(folder.name).toUpperCase(), parent: { id: '0' } } });
    const c = conform(dup, 'POST', 409);
    expect(c.code).toBe('item_name_in_use');
  });
});

describe('operation coverage', () => {
  it('exercised every box-server operation with its success status', () => {
    const expected = [
      'GET /users/me 200',
      'POST /folders 201',
      'GET /folders/{folder_id} 200',
      'GET /folders/{folder_id} 304',
      'PUT /folders/{folder_id} 200',
      'POST /folders/{folder_id}/copy 201',
      'DELETE /folders/{folder_id} 204',
      'GET /folders/{folder_id}/items 200',
      'GET /folders/{folder_id}/trash 200',
      'POST /folders/{folder_id} 201',
      'DELETE /folders/{folder_id}/trash 204',
      'GET /folders/trash/items 200',
      'OPTIONS /files/content 200',
      'POST /files/content 201',
      'GET /files/{file_id} 200',
      'GET /files/{file_id} 304',
      'POST /files/{file_id}/content 200',
      'PUT /files/{file_id} 200',
      'POST /files/{file_id}/copy 201',
      'DELETE /files/{file_id} 204',
      'GET /files/{file_id}/content 302',
      'GET /files/{file_id}/versions 200',
      'GET /files/{file_id}/versions/{file_version_id} 200',
      'POST /files/{file_id}/versions/current 201',
      'DELETE /files/{file_id}/versions/{file_version_id} 204',
      'PUT /files/{file_id}/versions/{file_version_id} 200',
      'GET /files/{file_id}/trash 200',
      'POST /files/{file_id} 201',
      'DELETE /files/{file_id}/trash 204',
      'PUT /files/{file_id}#add_shared_link 200',
      'GET /files/{file_id}#get_shared_link 200',
      'PUT /files/{file_id}#remove_shared_link 200',
      'PUT /folders/{folder_id}#add_shared_link 200',
      'POST /files/upload_sessions 201',
      'POST /files/{file_id}/upload_sessions 201',
      'PUT /files/upload_sessions/{upload_session_id} 200',
      'GET /files/upload_sessions/{upload_session_id}/parts 200',
      'GET /files/upload_sessions/{upload_session_id} 200',
      'POST /files/upload_sessions/{upload_session_id}/commit 202',
      'POST /files/upload_sessions/{upload_session_id}/commit 201',
      'DELETE /files/upload_sessions/{upload_session_id} 204',
      'GET /events 200',
      'OPTIONS /events 200',
      'POST /oauth2/token 200',
      'POST /oauth2/token#refresh 200',
      'POST /oauth2/revoke 200',
      'GET /authorize 200',
      'GET /users/{user_id} 200',
      'POST /web_links 200',
      'GET /web_links/{web_link_id} 200',
      'PUT /web_links/{web_link_id} 200',
      'DELETE /web_links/{web_link_id} 204',
      'GET /web_links/{web_link_id}/trash 200',
      'POST /web_links/{web_link_id} 201',
      'DELETE /web_links/{web_link_id}/trash 204',
      'GET /folders/{folder_id}#get_shared_link 200',
      'PUT /folders/{folder_id}#remove_shared_link 200',
    ];
    const missing = expected.filter((k) => !covered.has(k));
    expect(missing).toEqual([]);
  });
});
