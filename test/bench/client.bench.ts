/**
 * Box client throughput against box-server on loopback, as a ratio of the raw loopback throughput of the same
 * server measured in the same run with plain streaming node:http requests (no hashing, no retries, no queue;
 * the raw download discards the bytes, the client writes them to disk and checks the SHA-1). Figures: download, simple (multipart) upload, chunked (session) upload of one file of
 * BOXSYNC_BENCH_CLIENT_MB MiB (default 1024 = 1 GiB), generated as a temp file and streamed, never held in memory.
 * Each figure is the best of BOXSYNC_BENCH_RUNS runs (default 2). The chunked figure includes box-server's own
 * commit work (it re-reads the parts to check the whole-file SHA-1), which the raw multipart upload does not do.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { request, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { startBoxServer } from '../../src/box-server/index.js';
import { asRemoteId } from '../../src/core/model.js';
import { createBoxAdapter } from '../../src/remote/box/create-box-adapter.js';
import { tempFileAt } from '../support/temp-file.js';
import { openUploadSource } from '../support/open-upload-source.js';

const MIB = 1024 * 1024;
const TOKEN = 'T';
const RUNS = Number(process.env.BOXSYNC_BENCH_RUNS ?? 2);

async function makeFile(path: string, sizeBytes: number): Promise<string> {
  const block = randomBytes(MIB);
  const hash = createHash('sha1');
  const out = createWriteStream(path);
  for (let done = 0; done < sizeBytes; ) {
    const n = Math.min(MIB, sizeBytes - done);
    block.writeUInt32LE(done / MIB, 0);
    const chunk = block.subarray(0, n);
    hash.update(chunk);
    if (!out.write(chunk)) await new Promise<void>((r) => out.once('drain', () => r()));
    done += n;
  }
  await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())));
  return hash.digest('hex');
}

function send(url: string, opts: { method: string; headers: Record<string, string | number>; body?: () => NodeJS.ReadableStream }): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: opts.method, headers: opts.headers }, resolve);
    req.on('error', reject);
    if (opts.body) opts.body().pipe(req);
    else req.end();
  });
}

async function readAll(res: IncomingMessage): Promise<string> {
  let s = '';
  for await (const c of res) s += (c as Buffer).toString();
  return s;
}

const mbps = (bytes: number, ms: number): number => bytes / MIB / (ms / 1000);

export async function run(): Promise<void> {
  const sizeMiB = Number(process.env.BOXSYNC_BENCH_CLIENT_MB ?? 1024);
  const size = sizeMiB * MIB;
  const dir = await mkdtemp(join(tmpdir(), 'boxsync-bench-client-'));
  const server = await startBoxServer({ port: 0, tokens: [TOKEN], dataDir: join(dir, 'server') });
  try {
    const src = join(dir, 'src.bin');
    const sha1 = await makeFile(src, size);
    const auth = { authorization: `Bearer ${TOKEN}` };

    const boundary = 'benchboundary';
    const head = (name: string): Buffer =>
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="attributes"\r\n\r\n${JSON.stringify({ name, parent: { id: '0' } })}\r\n` +
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      );
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    // Raw upload: one plain multipart POST streaming the file.
    const rawUpload = async (i: number): Promise<string> => {
      const h = head(`raw-${i}.bin`);
      const res = await send(`${server.uploadUrl}/files/content`, {
        method: 'POST',
        headers: { ...auth, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': h.length + size + tail.length },
        body: () => {
          const pt = new PassThrough();
          pt.write(h);
          const rs = createReadStream(src, { highWaterMark: MIB });
          rs.pipe(pt, { end: false });
          rs.on('end', () => pt.end(tail));
          return pt;
        },
      });
      const text = await readAll(res);
      if (res.statusCode !== 201) throw new Error(`raw upload answered ${res.statusCode}: ${text}`);
      return (JSON.parse(text) as { entries: { id: string }[] }).entries[0]!.id;
    };
    // Raw download: plain GET, follow the 302 by hand, bytes discarded (the server's loopback ceiling).
    const rawDownload = async (fileId: string): Promise<void> => {
      const r1 = await send(`${server.apiUrl}/files/${fileId}/content`, { method: 'GET', headers: auth });
      r1.resume();
      const r2 = await send(new URL(r1.headers.location!, server.apiUrl).toString(), { method: 'GET', headers: {} });
      let got = 0;
      for await (const c of r2) got += (c as Buffer).length;
      if (got !== size) throw new Error(`raw download got ${got} bytes`);
    };
    const adapter = (threshold: number) =>
      createBoxAdapter({ apiUrl: server.apiUrl, uploadUrl: server.uploadUrl, tokenUrl: server.tokenUrl, auth: { developerToken: TOKEN }, sessionThresholdBytes: threshold });
    const clientDownload = async (fileId: string): Promise<void> => {
      const dest = join(dir, 'client-down.bin');
      const r = await adapter(20_000_000).store.download({ id: asRemoteId(fileId), destFile: await tempFileAt(dest), expectSha1: sha1 });
      if (r.sizeBytes !== size || (await stat(dest)).size !== size) throw new Error('client download has the wrong size');
      await rm(dest);
    };
    const clientUpload = async (threshold: number, name: string, knownSha1?: string): Promise<void> => {
      const source = await openUploadSource(src);
      const e = await adapter(threshold)
        .store.uploadNew({
          parentId: asRemoteId('0'),
          name,
          source,
          modifiedAtMs: Date.now(),
          ...(knownSha1 === undefined ? {} : { sha1: knownSha1 }),
        })
        .finally(() => source.close());
      if (e.sha1 !== sha1) throw new Error('uploaded SHA-1 differs');
    };
    /** Where the chunked upload's time went, from box-server's request log: parts vs commit (server-side work). */
    const chunkedSplit = (): { partsMs: number; commitMs: number } => {
      const reqs = server.control.requests();
      const created = reqs.filter((r) => r.method === 'POST' && r.path.endsWith('/upload_sessions')).at(-1)!;
      const commit = reqs.filter((r) => r.method === 'POST' && r.path.endsWith('/commit')).at(-1)!;
      return { partsMs: commit.atMs - created.atMs, commitMs: Date.now() - commit.atMs };
    };

    // Interleave raw and client runs so that a noisy neighbour hurts both alike; keep the best of each.
    const best = { rawUp: Infinity, rawDown: Infinity, down: Infinity, simple: Infinity, simpleKnown: Infinity, chunked: Infinity };
    let split = { partsMs: 0, commitMs: 0 };
    const clock = async (key: keyof typeof best, fn: () => Promise<unknown>): Promise<void> => {
      const t0 = performance.now();
      await fn();
      best[key] = Math.min(best[key], performance.now() - t0);
    };
    let fileId = '';
    for (let i = 0; i < RUNS; i++) {
      await clock('rawUp', async () => (fileId = await rawUpload(i)));
      await clock('simple', () => clientUpload(Number.MAX_SAFE_INTEGER, `simple-${i}.bin`));
      await clock('simpleKnown', () => clientUpload(Number.MAX_SAFE_INTEGER, `simple-known-${i}.bin`, sha1));
      const before = best.chunked;
      await clock('chunked', () => clientUpload(20_000_000, `chunked-${i}.bin`));
      if (best.chunked < before) split = chunkedSplit();
      await clock('rawDown', () => rawDownload(fileId));
      await clock('down', () => clientDownload(fileId));
    }
    const rows: [string, number, number][] = [
      ['download', mbps(size, best.down), mbps(size, best.rawDown)],
      ['simple upload', mbps(size, best.simple), mbps(size, best.rawUp)],
      ['simple, sha1 known', mbps(size, best.simpleKnown), mbps(size, best.rawUp)],
      ['chunked upload', mbps(size, best.chunked), mbps(size, best.rawUp)],
    ];
    console.log(`client vs raw loopback, ${sizeMiB} MiB file, best of ${RUNS} (MiB/s; ratio = client / raw)`);
    for (const [name, client, raw] of rows) {
      console.log(`  ${name.padEnd(19)} client ${client.toFixed(1).padStart(7)}  raw ${raw.toFixed(1).padStart(7)}  ratio ${(client / raw).toFixed(2)}`);
    }
    console.log(
      `  chunked split: parts ${(split.partsMs / 1000).toFixed(1)} s, commit ${(split.commitMs / 1000).toFixed(1)} s ` +
        '(the commit is box-server re-reading the parts to check the whole-file SHA-1)',
    );
    console.log('  simple upload without a known sha1 reads the file twice: once for Content-MD5, once to send it');
  } finally {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
}
