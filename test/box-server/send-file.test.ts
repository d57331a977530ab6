/**
 * The download URL's body sent from reused buffers (src/box-server/send-file.ts): bytes stay right when buffers go
 * back to the pool while other downloads and a stalled reader share it, Range bodies crossing the 256 KiB chunk
 * edges are the right slices, and a blob file shorter than its size cuts the body instead of padding or hanging.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, truncateSync } from 'node:fs';
import { get, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SEND_CHUNK_BYTES } from '../../src/box-server/send-file.js';
import { boxHttp, withBoxServer } from '../support/box-server.js';
import { makeTempDir } from '../support/tmp.js';
import type { BoxServer } from '../../src/box-server/index.js';

const sha1 = (b: Buffer): string => createHash('sha1').update(b).digest('hex');

async function downloadUrl(srv: BoxServer, fileId: string): Promise<string> {
  const redirect = await boxHttp(srv).get(`/files/${fileId}/content`);
  expect(redirect.status).toBe(302);
  return redirect.headers['location']!;
}

async function fetchBytes(url: string, range?: string): Promise<{ status: number; body: Buffer }> {
  const res = await fetch(url, range ? { headers: { Range: range } } : {});
  return { status: res.status, body: Buffer.from(await res.arrayBuffer()) };
}

function open(url: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => get(url, resolve).on('error', reject));
}

function readRest(res: IncomingMessage, first: Buffer[]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts = [...first];
    res.on('data', (c: Buffer) => parts.push(c));
    res.on('end', () => resolve(Buffer.concat(parts)));
    res.on('error', reject);
    res.resume();
  });
}

describe('download bodies from reused buffers', () => {
  it('sends every byte right while a stalled reader holds a buffer and other downloads reuse the pool', async () => {
    const tmp = await makeTempDir('send-file-');
    try {
      // dataDir: every blob is a file on disk (the path the pool serves), whatever its size.
      await withBoxServer({ dataDir: tmp.dir }, async (srv) => {
        const web = srv.control.as('1');
        const contents = [80 * SEND_CHUNK_BYTES + 123, 3 * SEND_CHUNK_BYTES, 2 * SEND_CHUNK_BYTES - 1, 7000].map((n) => randomBytes(n));
        const ids = contents.map((c, i) => web.uploadFile('0', `f${i}.bin`, c).id);
        const urls = await Promise.all(ids.map((id) => downloadUrl(srv, id)));

        // A reader that takes one chunk and stops reading (20 MiB: more than the socket buffers hold, so a write waits) while the others download (twice each) and finish.
        const stalled = await open(urls[0]!);
        const firstChunk = await new Promise<Buffer>((resolve) => stalled.once('data', resolve));
        stalled.pause();
        for (let round = 0; round < 2; round++) {
          const got = await Promise.all(urls.slice(1).map((u) => fetchBytes(u)));
          expect(got.map((g) => g.status)).toEqual([200, 200, 200]);
          expect(got.map((g) => sha1(g.body))).toEqual(contents.slice(1).map(sha1));
        }
        expect(sha1(await readRest(stalled, [firstChunk]))).toBe(sha1(contents[0]!));

        // Ranges across the chunk edges, and a suffix range.
        const big = contents[0]!;
        for (const [range, start, end] of [
          [`bytes=${SEND_CHUNK_BYTES - 10}-${2 * SEND_CHUNK_BYTES + 10}`, SEND_CHUNK_BYTES - 10, 2 * SEND_CHUNK_BYTES + 10],
          [`bytes=${SEND_CHUNK_BYTES}-`, SEND_CHUNK_BYTES, big.length - 1],
          ['bytes=-300000', big.length - 300000, big.length - 1],
        ] as const) {
          const r = await fetchBytes(urls[0]!, range);
          expect(r.status).toBe(206);
          expect(sha1(r.body)).toBe(sha1(big.subarray(start, end + 1)));
        }
      });
    } finally {
      await tmp.cleanup();
    }
  });

  it('cuts the body when the blob file is shorter than its size (never pads, never hangs)', async () => {
    const tmp = await makeTempDir('send-file-');
    try {
      await withBoxServer({ dataDir: tmp.dir }, async (srv) => {
        const content = randomBytes(3 * SEND_CHUNK_BYTES);
        const id = srv.control.as('1').uploadFile('0', 'short.bin', content).id;
        const blobs = readdirSync(join(tmp.dir, 'blobs'));
        expect(blobs).toHaveLength(1);
        truncateSync(join(tmp.dir, 'blobs', blobs[0]!), SEND_CHUNK_BYTES + 5);
        const res = await fetch(await downloadUrl(srv, id), { signal: AbortSignal.timeout(30_000) });
        expect(res.status).toBe(200);
        expect(res.headers.get('content-length')).toBe(String(content.length));
        const err = await res.arrayBuffer().then(
          () => null,
          (e: unknown) => e as Error,
        );
        expect(err).toBeInstanceOf(Error);
        expect(err!.name).not.toBe('TimeoutError');
        // The server goes on serving.
        expect((await boxHttp(srv).get('/users/me')).status).toBe(200);
      });
    } finally {
      await tmp.cleanup();
    }
  });
});
