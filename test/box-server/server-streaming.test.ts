/**
 * Content streams to and from disk: a ~50 MB multipart upload generated on the fly (never built in memory on
 * either side), a ~50 MB upload session with parts sent in parallel, and streamed downloads, all checked by
 * SHA-1. (Memory staying bounded for 10 GB is measured in benchmarks, not asserted here.)
 */
import { createHash, randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import { startBoxServer } from '../../src/box-server/index.js';
import { arr, boxHttp, DEFAULT_TOKEN, obj, useBoxServer } from '../support/box-server.js';
import { waitFor } from '../support/wait.js';

const h = useBoxServer({});
const chunkBytes = 1024 * 1024;
const chunks = 50;
const pattern = randomBytes(chunkBytes);

/** Chunk i of the generated content: the pattern with i stamped at the front. */
function chunk(i: number): Buffer {
  const c = Buffer.from(pattern);
  c.writeUInt32BE(i, 0);
  return c;
}

function generatedSha1(): string {
  const hash = createHash('sha1');
  for (let i = 0; i < chunks; i++) hash.update(chunk(i));
  return hash.digest('hex');
}

async function downloadSha1(fileId: string, range?: string): Promise<{ sha1: string; bytes: number; status: number }> {
  const api = boxHttp(h.srv);
  const redirect = await api.get(`/files/${fileId}/content`);
  expect(redirect.status).toBe(302);
  const res = await fetch(redirect.headers['location']!, range ? { headers: { Range: range } } : {});
  const hash = createHash('sha1');
  let bytes = 0;
  for await (const c of res.body as unknown as AsyncIterable<Uint8Array>) {
    hash.update(c);
    bytes += c.length;
  }
  return { sha1: hash.digest('hex'), bytes, status: res.status };
}

describe('streaming content', () => {
  it('takes a ~50 MB multipart upload generated on the fly, checks Content-MD5, and streams it back', async () => {
    const sha1 = generatedSha1();
    const boundary = `----box-server-test-${randomBytes(6).toString('hex')}`;
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="attributes"\r\n\r\n${JSON.stringify({ name: 'big-stream.bin', parent: { id: '0' } })}\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big-stream.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    );
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const reply = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(`${h.srv.uploadUrl}/files/content`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${DEFAULT_TOKEN}`,
          'Content-Type': `multipart/form-data; boundary=${boundary}`,
          'Content-Length': String(head.length + chunks * chunkBytes + tail.length),
          'Content-MD5': sha1,
        },
      });
      req.on('error', reject);
      req.on('response', (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      let i = 0;
      const pump = (): void => {
        while (i < chunks) {
          const ok = req.write(chunk(i++));
          if (!ok) {
            req.once('drain', pump);
            return;
          }
        }
        req.end(tail);
      };
      req.write(head);
      pump();
    });
    expect(reply.status).toBe(201);
    const file = obj(arr(obj(JSON.parse(reply.body)).entries)[0]);
    expect(file.sha1).toBe(sha1);
    expect(file.size).toBe(chunks * chunkBytes);
    const back = await downloadSha1(String(file.id));
    expect(back).toEqual({ sha1, bytes: chunks * chunkBytes, status: 200 });
    const ranged = await downloadSha1(String(file.id), `bytes=${chunkBytes}-${2 * chunkBytes - 1}`);
    expect(ranged).toEqual({ sha1: createHash('sha1').update(chunk(1)).digest('hex'), bytes: chunkBytes, status: 206 });
  });

  it('refuses a multipart upload whose Content-MD5 does not match, and keeps nothing', async () => {
    const r = await boxHttp(h.srv).upload('/files/content', { name: 'bad-md5.bin', parent: { id: '0' } }, 'abc', {
      headers: { 'Content-MD5': '0'.repeat(40) },
    });
    expect(r.status).toBe(400);
    expect(obj(r.json).code).toBe('bad_digest');
    expect(h.srv.control.as('1').findByPath('/bad-md5.bin')).toBeNull();
  });

  it('assembles a ~50 MB upload session from parts sent in parallel and out of order', async () => {
    const api = boxHttp(h.srv);
    const size = chunks * chunkBytes + 12_345;
    const content = (offset: number, length: number): Buffer => {
      const out = Buffer.alloc(length);
      for (let p = 0; p < length; p += chunkBytes) chunk(Math.floor((offset + p) / chunkBytes)).copy(out, p, 0, Math.min(chunkBytes, length - p));
      return out;
    };
    const session = obj((await api.post(`${h.srv.uploadUrl}/files/upload_sessions`, { body: { folder_id: '0', file_size: size, file_name: 'session.bin' } })).json);
    const partSize = Number(session.part_size);
    expect(partSize % chunkBytes).toBe(0);
    const endpoints = obj(session.session_endpoints);
    const whole = createHash('sha1');
    const offsets: number[] = [];
    for (let off = 0; off < size; off += partSize) {
      offsets.push(off);
      whole.update(content(off, Math.min(partSize, size - off)));
    }
    const upload = async (off: number): Promise<unknown> => {
      const body = content(off, Math.min(partSize, size - off));
      const r = await api.put(String(endpoints.upload_part), {
        rawBody: body,
        headers: { 'Content-Range': `bytes ${off}-${off + body.length - 1}/${size}`, Digest: `SHA=${createHash('sha1').update(body).digest('base64')}` },
      });
      expect(r.status).toBe(200);
      return obj(r.json).part;
    };
    const reversed = [...offsets].reverse();
    await Promise.all(reversed.slice(0, 3).map(upload));
    await Promise.all(reversed.slice(3).map(upload));
    const listed = obj((await api.get(String(endpoints.list_parts))).json);
    const parts = arr(listed.entries);
    expect(parts.map((p) => obj(p).offset)).toEqual(offsets);
    const sha1 = whole.digest('hex');
    const commit = await api.post(String(endpoints.commit), { body: { parts }, headers: { Digest: `sha=${Buffer.from(sha1, 'hex').toString('base64')}` } });
    expect(commit.status).toBe(201);
    const file = obj(arr(obj(commit.json).entries)[0]);
    expect(file).toMatchObject({ name: 'session.bin', sha1, size });
    expect(await downloadSha1(String(file.id))).toEqual({ sha1, bytes: size, status: 200 });
  });
});

describe('slow commits', () => {
  it('answers 202 with Retry-After while the whole-file hash is still running, then 201', async () => {
    const srv = await startBoxServer({ tokens: ['S'], sessionCommitWaitMs: 0 });
    try {
      const api = boxHttp(srv, 'S');
      const size = 20_000_000;
      const data = Buffer.alloc(size, 9);
      const session = obj((await api.post(`${srv.uploadUrl}/files/upload_sessions`, { body: { folder_id: '0', file_size: size, file_name: 'slow.bin' } })).json);
      const partSize = Number(session.part_size);
      const parts: unknown[] = [];
      for (let off = 0; off < size; off += partSize) {
        const c = data.subarray(off, Math.min(off + partSize, size));
        const r = await api.put(String(obj(session.session_endpoints).upload_part), {
          rawBody: c,
          headers: { 'Content-Range': `bytes ${off}-${off + c.length - 1}/${size}`, Digest: `sha=${createHash('sha1').update(c).digest('base64')}` },
        });
        parts.push(obj(r.json).part);
      }
      const digest = `sha=${createHash('sha1').update(data).digest('base64')}`;
      const commit = (): ReturnType<typeof api.post> => api.post(String(obj(session.session_endpoints).commit), { body: { parts }, headers: { Digest: digest } });
      const first = await commit();
      expect(first.status).toBe(202);
      expect(first.headers['retry-after']).toBe('1');
      const done = await waitFor(async () => {
        const r = await commit();
        return r.status === 201 ? r : null;
      }, { timeoutMs: 20_000, intervalMs: 50, what: 'the commit to finish' });
      expect(obj(arr(obj(done.json).entries)[0]).sha1).toBe(createHash('sha1').update(data).digest('hex'));
      expect((await commit()).status).toBe(201);
    } finally {
      await srv.close();
    }
  });
});
