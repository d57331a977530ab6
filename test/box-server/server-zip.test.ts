/**
 * Zip downloads on box-server, as Box serves them: create (202 with the two URLs, name conflicts renamed), the
 * archive (read back with yauzl: paths, bytes, mtimes, empty folders), the once-only content URL, the status URL
 * (404 before the download starts, then counts and state), a file trashed after the request (skipped), and the
 * refusals (root folder, no items, over 10,000 files, more than 5 archives streaming at once per user); the test
 * faults (drop, corrupt, rename; a refused name cuts the archive).
 */
import { randomBytes } from 'node:crypto';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import yauzl from 'yauzl';
import { arr, boxHttp, expectBoxError, obj, useBoxServer } from '../support/box-server.js';
import { waitFor } from '../support/wait.js';

const h = useBoxServer({});

interface ZipFileEntry {
  readonly name: string;
  readonly data: Buffer;
  readonly mtime: Date;
  /** 0 stored, 8 deflated (folders: 0). */
  readonly method: number;
}

/** Every entry of a zip archive held in memory, with its bytes. */
function readZip(buf: Buffer): Promise<ZipFileEntry[]> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(buf, { lazyEntries: true }, (err, zip) => {
      if (err || !zip) return reject(err ?? new Error('no zip'));
      const out: ZipFileEntry[] = [];
      zip.on('error', reject);
      zip.on('end', () => resolve(out));
      zip.on('entry', (entry: yauzl.Entry) => {
        if (entry.fileName.endsWith('/')) {
          out.push({ name: entry.fileName, data: Buffer.alloc(0), mtime: entry.getLastModDate(), method: entry.compressionMethod });
          zip.readEntry();
          return;
        }
        zip.openReadStream(entry, (e2, stream) => {
          if (e2 || !stream) return reject(e2 ?? new Error('no stream'));
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('error', reject);
          stream.on('end', () => {
            out.push({ name: entry.fileName, data: Buffer.concat(chunks), mtime: entry.getLastModDate(), method: entry.compressionMethod });
            zip.readEntry();
          });
        });
      });
      zip.readEntry();
    });
  });
}

async function fetchBytes(url: string): Promise<{ status: number; body: Buffer; headers: Headers }> {
  const res = await fetch(url);
  return { status: res.status, body: Buffer.from(await res.arrayBuffer()), headers: res.headers };
}

describe('box-server zip downloads', () => {
  it('creates an archive of files and folders, streams it once, and reports its status', async () => {
    const web = h.srv.control.as('1');
    const top = web.createFolder('0', 'zip-top');
    const a = web.uploadFile(top.id, 'a.txt', 'alpha\n', { contentModifiedAt: '2021-03-04T05:06:08Z' });
    const folder = web.createFolder(top.id, 'Reports');
    web.uploadFile(folder.id, 'q1.csv', 'q,1\n');
    const deep = web.createFolder(folder.id, 'deep');
    web.uploadFile(deep.id, 'zero.bin', '');
    web.createFolder(folder.id, 'empty');
    const api = boxHttp(h.srv);

    const created = await api.post('/zip_downloads', {
      body: { items: [{ type: 'file', id: a.id }, { type: 'folder', id: folder.id }], download_file_name: 'January' },
    });
    expect(created.status).toBe(202);
    const z = obj(created.json);
    expect(String(z['download_url'])).toMatch(/\/2\.0\/zip_downloads\/[A-Za-z0-9_=-]+\/content$/);
    expect(String(z['status_url'])).toMatch(/\/2\.0\/zip_downloads\/[A-Za-z0-9_=-]+\/status$/);
    expect(Date.parse(String(z['expires_at']))).toBeGreaterThan(Date.now() - 1000);
    expect(z['name_conflicts']).toEqual([]);

    // Before the download starts, Box answers the status URL with 404.
    expectBoxError(await api.get(String(z['status_url'])), 'GET', 404, 'not_found');

    // The content URL needs no token.
    const got = await fetchBytes(String(z['download_url']));
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('application/zip');
    expect(got.headers.get('content-disposition')).toContain('January.zip');
    const entries = await readZip(got.body);
    expect(entries.map((e) => e.name).sort()).toEqual(['Reports/', 'Reports/deep/', 'Reports/deep/zero.bin', 'Reports/empty/', 'Reports/q1.csv', 'a.txt']);
    const byName = new Map(entries.map((e) => [e.name, e]));
    expect(byName.get('a.txt')!.data.toString()).toBe('alpha\n');
    expect(byName.get('Reports/q1.csv')!.data.toString()).toBe('q,1\n');
    expect(byName.get('Reports/deep/zero.bin')!.data.length).toBe(0);
    // DOS time has a 2-second resolution, and yauzl reads it as local time.
    expect(Math.abs(byName.get('a.txt')!.mtime.getTime() - Date.parse('2021-03-04T05:06:08Z'))).toBeLessThanOrEqual(2000 + Math.abs(new Date().getTimezoneOffset()) * 60_000);

    const status = await api.get(String(z['status_url']));
    expect(status.status).toBe(200);
    expect(status.json).toEqual({ total_file_count: 3, downloaded_file_count: 3, skipped_file_count: 0, skipped_folder_count: 0, state: 'succeeded' });

    // The content URL works once.
    expect((await fetchBytes(String(z['download_url']))).status).toBe(404);
  });

  it('stores a file under 512 bytes or whose bytes do not compress and deflates the others, small or big; every byte reads back', async () => {
    const web = h.srv.control.as('1');
    const top = web.createFolder('0', 'zip-methods');
    const random = randomBytes(300 * 1024);
    const text = Buffer.from('a line of text, again and again\n'.repeat(10_000)); // about 320 KB
    const bigRandom = randomBytes(1024 * 1024 + 1); // above the size looked at: streamed through deflate
    web.uploadFile(top.id, 'photo.jpg', random);
    web.uploadFile(top.id, 'notes.txt', text);
    web.uploadFile(top.id, 'small.txt', 'small\n'); // under 512 bytes: stored
    web.uploadFile(top.id, 'short.txt', 'short text '.repeat(60)); // 660 bytes of text: deflated
    web.uploadFile(top.id, 'video.mp4', bigRandom);
    const smallRandom = randomBytes(20 * 1024); // read whole, looked at, stored
    const tinyRandom = randomBytes(300); // under 512 bytes: stored as every tiny file
    web.uploadFile(top.id, 'key.bin', smallRandom);
    web.uploadFile(top.id, 'tiny.bin', tinyRandom);
    const api = boxHttp(h.srv);
    const created = obj((await api.post('/zip_downloads', { body: { items: [{ type: 'folder', id: top.id }] } })).json);
    const entries = new Map((await readZip((await fetchBytes(String(created['download_url']))).body)).map((e) => [e.name, e]));
    expect(entries.get('zip-methods/photo.jpg')).toMatchObject({ method: 0 });
    expect(entries.get('zip-methods/notes.txt')).toMatchObject({ method: 8 });
    expect(entries.get('zip-methods/small.txt')).toMatchObject({ method: 0 });
    expect(entries.get('zip-methods/short.txt')).toMatchObject({ method: 8 });
    expect(entries.get('zip-methods/video.mp4')).toMatchObject({ method: 8 });
    expect(entries.get('zip-methods/key.bin')).toMatchObject({ method: 0 });
    expect(entries.get('zip-methods/tiny.bin')).toMatchObject({ method: 0 });
    expect(entries.get('zip-methods/key.bin')!.data.equals(smallRandom)).toBe(true);
    expect(entries.get('zip-methods/tiny.bin')!.data.equals(tinyRandom)).toBe(true);
    expect(entries.get('zip-methods/photo.jpg')!.data.equals(random)).toBe(true);
    expect(entries.get('zip-methods/notes.txt')!.data.equals(text)).toBe(true);
    expect(entries.get('zip-methods/video.mp4')!.data.equals(bigRandom)).toBe(true);
    expect(obj((await api.get(String(created['status_url']))).json)).toMatchObject({ total_file_count: 7, downloaded_file_count: 7, state: 'succeeded' });
  });

  it('renames top-level items whose names clash, and lists both in name_conflicts', async () => {
    const web = h.srv.control.as('1');
    const f1 = web.createFolder('0', 'clash-1');
    const f2 = web.createFolder('0', 'clash-2');
    const x1 = web.uploadFile(f1.id, 'Report.pdf', 'one');
    const x2 = web.uploadFile(f2.id, 'report.PDF', 'two');
    const api = boxHttp(h.srv);
    const created = await api.post('/zip_downloads', { body: { items: [{ type: 'file', id: x1.id }, { type: 'file', id: x2.id }] } });
    expect(created.status).toBe(202);
    const conflicts = arr(obj(created.json)['name_conflicts']);
    expect(conflicts).toHaveLength(1);
    const pair = arr(conflicts[0]).map(obj);
    expect(pair.map((p) => p['id']).sort()).toEqual([x1.id, x2.id].sort());
    for (const p of pair) expect(String(p['download_name'])).toMatch(/^[0-9a-f]{6}\.(pdf|PDF)$/);
    const entries = await readZip((await fetchBytes(String(obj(created.json)['download_url']))).body);
    const names = new Map(pair.map((p) => [String(p['download_name']), p['id'] === x1.id ? 'one' : 'two']));
    expect(entries.map((e) => [e.name, e.data.toString()]).sort()).toEqual([...names.entries()].sort());
  });

  it('skips a file trashed after the request and counts it', async () => {
    const web = h.srv.control.as('1');
    const top = web.createFolder('0', 'zip-skip');
    const keep = web.uploadFile(top.id, 'keep.txt', 'kept');
    const gone = web.uploadFile(top.id, 'gone.txt', 'gone');
    const api = boxHttp(h.srv);
    const created = obj((await api.post('/zip_downloads', { body: { items: [{ type: 'folder', id: top.id }] } })).json);
    web.trash('file', gone.id);
    const entries = await readZip((await fetchBytes(String(created['download_url']))).body);
    expect(entries.map((e) => e.name).sort()).toEqual(['zip-skip/', 'zip-skip/keep.txt']);
    expect(keep.id).not.toBe(gone.id);
    expect(obj((await api.get(String(created['status_url']))).json)).toMatchObject({ total_file_count: 2, downloaded_file_count: 1, skipped_file_count: 1, state: 'succeeded' });
  });

  it('serves the test faults: a dropped, a corrupted and a renamed entry; a name the writer refuses cuts the archive', async () => {
    const web = h.srv.control.as('1');
    const top = web.createFolder('0', 'zip-faults');
    for (const n of ['a', 'b', 'c', 'd']) web.uploadFile(top.id, `${n}.txt`, `content of ${n}\n`);
    const api = boxHttp(h.srv);
    const ask = async (): Promise<Record<string, unknown>> => obj((await api.post('/zip_downloads', { body: { items: [{ type: 'folder', id: top.id }] } })).json);
    try {
      h.srv.control.zipFaults({ drop: ['zip-faults/a.txt'], corrupt: ['zip-faults/b.txt'], rename: { 'zip-faults/c.txt': 'elsewhere/c.txt' } });
      const z = await ask();
      const entries = await readZip((await fetchBytes(String(z['download_url']))).body);
      expect(entries.map((e) => [e.name, e.data.toString('latin1')])).toEqual([
        ['zip-faults/', ''],
        ['zip-faults/b.txt', `${String.fromCharCode('c'.charCodeAt(0) ^ 0xff)}ontent of b\n`],
        ['elsewhere/c.txt', 'content of c\n'],
        ['zip-faults/d.txt', 'content of d\n'],
      ]);
      expect(obj((await api.get(String(z['status_url']))).json)).toMatchObject({ total_file_count: 4, downloaded_file_count: 3, state: 'succeeded' });

      // A name the writer refuses: the archive is cut (no end record a reader could take) and the status says failed.
      h.srv.control.zipFaults({ rename: { 'zip-faults/c.txt': '../c.txt' } });
      const cut = await ask();
      const got = await fetch(String(cut['download_url'])).then(
        async (r) => Buffer.from(await r.arrayBuffer()),
        () => null,
      );
      if (got !== null) await expect(readZip(got)).rejects.toThrow();
      const failed = await waitFor(
        async () => {
          const st = obj((await api.get(String(cut['status_url']))).json);
          return st['state'] === 'in_progress' ? null : st;
        },
        { timeoutMs: 10_000, intervalMs: 20, what: 'the cut archive to end' },
      );
      expect(failed).toMatchObject({ downloaded_file_count: 2, state: 'failed' });
    } finally {
      h.srv.control.zipFaults(null);
    }
  });

  it('refuses the root folder, an empty list, a missing item and more than 10,000 files', async () => {
    const api = boxHttp(h.srv);
    expectBoxError(await api.post('/zip_downloads', { body: { items: [{ type: 'folder', id: '0' }] } }), 'POST', 400, 'bad_request');
    expectBoxError(await api.post('/zip_downloads', { body: { items: [] } }), 'POST', 400, 'bad_request');
    expectBoxError(await api.post('/zip_downloads', { body: { items: [{ type: 'file', id: '987654321' }] } }), 'POST', 404, 'not_found');
    const web = h.srv.control.as('1');
    const big = web.createFolder('0', 'zip-big');
    for (let i = 0; i <= 10_000; i++) web.uploadFile(big.id, `f${i}.txt`, '');
    expectBoxError(await api.post('/zip_downloads', { body: { items: [{ type: 'folder', id: big.id }] } }), 'POST', 400, 'zip_download_file_count_exceeded_limit');
    expectBoxError(await api.post('/zip_downloads', { body: { items: [{ type: 'file', id: '1' }] }, token: null }), 'POST', 401, 'unauthorized');
  });

  it('streams at most 5 archives at once per user: the sixth is 429 until one ends', async () => {
    const web = h.srv.control.as('1');
    const top = web.createFolder('0', 'zip-many');
    // Big enough (incompressible) that an archive cannot finish while its reader does not read.
    const big = web.uploadFile(top.id, 'big.bin', Buffer.from(Array.from({ length: 8 * 1024 * 1024 }, (_, i) => (i * 2654435761) >>> 24)));
    const api = boxHttp(h.srv);
    const urls: string[] = [];
    for (let i = 0; i < 6; i++) urls.push(String(obj((await api.post('/zip_downloads', { body: { items: [{ type: 'file', id: big.id }] } })).json)['download_url']));
    const held: IncomingMessage[] = [];
    const open = (url: string): Promise<IncomingMessage> =>
      new Promise((resolve, reject) => {
        const req = httpRequest(url, (res) => resolve(res));
        req.on('error', reject);
        req.end();
      });
    try {
      for (let i = 0; i < 5; i++) {
        const res = await open(urls[i]!);
        expect(res.statusCode).toBe(200);
        res.pause();
        held.push(res);
      }
      const sixth = await fetchBytes(urls[5]!);
      expect(sixth.status).toBe(429);
      expect(JSON.parse(sixth.body.toString())['code']).toBe('user_too_many_concurrent_downloads');
      // A reader that goes away ends its archive (state failed), and frees a place for the sixth.
      held.shift()!.destroy();
      const freed = await waitFor(
        async () => {
          const r = await fetch(urls[5]!);
          if (r.status === 429) {
            await r.arrayBuffer();
            return null;
          }
          return r;
        },
        { timeoutMs: 10_000, intervalMs: 20, what: 'the sixth archive to be served once a reader went away' },
      );
      expect(freed.status).toBe(200);
      expect((await readZip(Buffer.from(await freed.arrayBuffer()))).map((e) => e.name)).toEqual(['big.bin']);
    } finally {
      for (const r of held) r.destroy();
    }
  });
});
