/**
 * `dataDir` persistence: everything survives a clean restart (items, content, versions, trash, tokens, OAuth
 * clients, events and positions, open upload sessions), and a kill -9 right after a write was answered loses
 * nothing that was answered.
 */
import { once } from 'node:events';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startBoxServer } from '../../src/box-server/index.js';
import { arr, boxHttp, obj } from '../support/box-server.js';
import { spawnCli } from '../support/cli.js';
import { makeTempDir } from '../support/tmp.js';
import { waitFor } from '../support/wait.js';

let tmp: { dir: string; cleanup: () => Promise<void> };
beforeEach(async () => {
  tmp = await makeTempDir('box-server-data-');
});
afterEach(async () => {
  await tmp.cleanup();
});

describe('persistence with dataDir', () => {
  it('keeps items, content, versions, trash, tokens, clients, events and sessions across a restart', async () => {
    const first = await startBoxServer({ dataDir: tmp.dir, tokens: ['P'] });
    const api1 = boxHttp(first, 'P');
    const folder = obj((await api1.post('/folders', { body: { name: 'Kept', parent: { id: '0' } } })).json);
    const up = obj(arr(obj((await api1.upload('/files/content', { name: 'a.txt', parent: { id: folder.id } }, 'one')).json).entries)[0]);
    await api1.upload(`/files/${String(up.id)}/content`, { name: 'a.txt' }, 'two');
    const gone = obj((await api1.post('/folders', { body: { name: 'Binned', parent: { id: '0' } } })).json);
    expect((await api1.delete(`/folders/${String(gone.id)}`)).status).toBe(204);
    const bob = first.control.addUser({ name: 'Bob' });
    first.control.registerOAuthClient({ clientId: 'cid', clientSecret: 'sec' });
    const code = first.control.issueAuthCode('cid');
    const session = obj((await api1.post(`${first.uploadUrl}/files/upload_sessions`, { body: { folder_id: '0', file_size: 20_000_000, file_name: 'later.bin' } })).json);
    const events1 = obj((await api1.get('/events?stream_position=0')).json);
    const fileBefore = obj((await api1.get(`/files/${String(up.id)}`)).json);
    await first.close();

    const second = await startBoxServer({ dataDir: tmp.dir });
    try {
      const api2 = boxHttp(second, 'P');
      const fileAfter = obj((await api2.get(`/files/${String(up.id)}`)).json);
      expect(fileAfter).toEqual(fileBefore);
      expect(second.control.as('1').readFile(String(up.id)).toString()).toBe('two');
      expect(arr(obj((await api2.get(`/files/${String(up.id)}/versions`)).json).entries)).toHaveLength(1);
      expect(arr(obj((await api2.get('/folders/trash/items')).json).entries).map((e) => obj(e).name)).toEqual(['Binned']);
      expect((await boxHttp(second, bob.token).get('/users/me')).status).toBe(200);
      const tokenReply = await fetch(second.tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'authorization_code', code, client_id: 'cid', client_secret: 'sec' }),
      });
      expect(tokenReply.status).toBe(200);
      const events2 = obj((await api2.get('/events?stream_position=0')).json);
      expect(events2.next_stream_position).toBe(events1.next_stream_position);
      expect(arr(events2.entries).map((e) => obj(e).event_id)).toEqual(arr(events1.entries).map((e) => obj(e).event_id));
      const newFolder = obj((await api2.post('/folders', { body: { name: 'After', parent: { id: '0' } } })).json);
      expect(Number(newFolder.id)).toBeGreaterThan(Number(gone.id));
      // The restarted server listens on another port: same session, new origin.
      const statusUrl = new URL(String(obj(session.session_endpoints).status));
      const status = await api2.get(`${second.baseUrl}${statusUrl.pathname}`);
      expect(status.status).toBe(200);
      expect(obj(status.json).total_parts).toBe(session.total_parts);
    } finally {
      await second.close();
    }
    expect(readdirSync(tmp.dir).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  it('loses nothing that was answered when the process is killed with SIGKILL', async () => {
    const child = spawnCli(['server', '--data', tmp.dir, '--token', 'K']);
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    const baseUrl = await waitFor(() => (out.includes('\n') ? out.split('\n')[0] : null), { timeoutMs: 30_000, what: 'base URL' });
    const H = { Authorization: 'Bearer K' };
    const form = new FormData();
    form.append('attributes', JSON.stringify({ name: 'survivor.txt', parent: { id: '0' } }));
    form.append('file', new Blob(['still here']), 'survivor.txt');
    const up = await fetch(`${baseUrl}/api/2.0/files/content`, { method: 'POST', headers: H, body: form });
    expect(up.status).toBe(201);
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;

    const again = await startBoxServer({ dataDir: tmp.dir });
    try {
      const found = again.control.as('1').findByPath('/survivor.txt');
      expect(found?.type).toBe('file');
      expect(again.control.as('1').readFile(found!.id).toString()).toBe('still here');
      expect((await boxHttp(again, 'K').get('/users/me')).status).toBe(200);
    } finally {
      await again.close();
    }
    expect(existsSync(join(tmp.dir, 'state.json'))).toBe(true);
  });

  it('replays the journal after SIGKILL: every answered change of every kind is there, exactly', async () => {
    const child = spawnCli(['server', '--data', tmp.dir, '--token', 'J']);
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    const baseUrl = await waitFor(() => (out.includes('\n') ? out.split('\n')[0] : null), { timeoutMs: 30_000, what: 'base URL' });
    const srv = { apiUrl: `${baseUrl}/2.0`, uploadUrl: `${baseUrl}/api/2.0` } as Parameters<typeof boxHttp>[0];
    const api = boxHttp(srv, 'J');
    const id = (r: { json: unknown }): string => String(obj(r.json).id);
    const fileId = (r: { json: unknown }): string => String(obj(arr(obj(r.json).entries)[0]).id);
    const top = id(await api.post('/folders', { body: { name: 'top', parent: { id: '0' } } }));
    const sub = id(await api.post('/folders', { body: { name: 'sub', parent: { id: top } } }));
    const f1 = fileId(await api.upload('/files/content', { name: 'f1.txt', parent: { id: sub } }, 'one'));
    await api.upload(`/files/${f1}/content`, { name: 'f1.txt' }, 'two');
    await api.upload(`/files/${f1}/content`, { name: 'f1.txt' }, 'three');
    const oldVersion = String(obj(arr(obj((await api.get(`/files/${f1}/versions`)).json).entries)[0]).id);
    expect((await api.delete(`/files/${f1}/versions/${oldVersion}`)).status).toBe(204);
    const f2 = fileId(await api.upload('/files/content', { name: 'f2.txt', parent: { id: top } }, 'other'));
    await api.put(`/files/${f2}`, { body: { lock: { access: 'lock' }, shared_link: { access: 'open' } } });
    await api.put(`/folders/${sub}`, { body: { sync_state: 'synced', name: 'sub-renamed' } });
    expect((await api.delete(`/folders/${top}?recursive=true`)).status).toBe(204);
    expect((await api.post(`/folders/${top}`, { body: {} })).status).toBe(201);
    const gone = id(await api.post('/folders', { body: { name: 'gone', parent: { id: '0' } } }));
    await api.delete(`/folders/${gone}`);
    expect((await api.delete(`/folders/${gone}/trash`)).status).toBe(204);
    const binned = fileId(await api.upload('/files/content', { name: 'binned.txt', parent: { id: '0' } }, 'bin'));
    await api.delete(`/files/${binned}`);
    const probes = [
      `/folders/0/items?fields=name,size,sha1,item_status,sequence_id`,
      `/folders/${top}?fields=name,item_collection,path_collection,sync_state`,
      `/folders/${sub}?fields=name,sync_state,item_status,etag`,
      `/files/${f1}?fields=name,sha1,size,file_version,version_number,etag,lock`,
      `/files/${f1}/versions`,
      `/files/${f2}?fields=lock,shared_link,etag`,
      `/folders/trash/items`,
      `/events?stream_position=0&limit=500`,
      `/users/me`,
    ];
    const before = await Promise.all(probes.map(async (p) => (await api.get(p)).text));
    expect((await api.get(`/folders/${gone}`)).status).toBe(404);
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;

    const again = await startBoxServer({ dataDir: tmp.dir });
    try {
      const api2 = boxHttp(again, 'J');
      const after = await Promise.all(probes.map(async (p) => (await api2.get(p)).text));
      // avatar_url carries the server's origin, which changed with the restart.
      const comparable = (text: string): unknown => JSON.parse(text.replace(/http:\/\/127\.0\.0\.1:\d+/g, 'ORIGIN'));
      for (let i = 0; i < probes.length; i++) expect(comparable(after[i]!), probes[i]).toEqual(comparable(before[i]!));
      expect(again.control.as('1').readFile(f1).toString()).toBe('three');
      expect((await api2.get(`/folders/${gone}`)).status).toBe(404);
    } finally {
      await again.close();
    }
  });

  it('refuses a corrupt state file with a message that names it, and leaves it untouched', async () => {
    const { writeFileSync, readFileSync } = await import('node:fs');
    writeFileSync(join(tmp.dir, 'state.json'), '{ not json');
    await expect(startBoxServer({ dataDir: tmp.dir })).rejects.toThrow(/state\.json is not valid JSON/);
    expect(readFileSync(join(tmp.dir, 'state.json'), 'utf8')).toBe('{ not json');
  });
});
