/**
 * box-server loopback figures: 1 GiB through an upload session, 1 GiB through a simple multipart upload,
 * 1 GiB download, and the latency of a full marker-paged listing of a 10,000-item folder (p50/p99).
 * box-server runs as its own process (`boxsync server --port 0`), so client and server each get a core, as
 * in real use. Data is generated part by part and streamed; nothing holds 1 GiB in memory. Sizes can be
 * shrunk for a quick look with BOX_BENCH_MIB (at least 20: upload sessions need 20 MB) and BOX_BENCH_ITEMS.
 */
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { createInterface } from 'node:readline';
import { spawnCli } from '../support/cli.js';

const TOKEN = 'BENCH';
const TOTAL_BYTES = Number(process.env.BOX_BENCH_MIB ?? 1024) * 1024 * 1024;
const ITEMS = Number(process.env.BOX_BENCH_ITEMS ?? 10_000);
const LIST_RUNS = 30;
const PAGE_LIMIT = 1000;
const BLOCK_BYTES = 8 * 1024 * 1024;

/** One 8 MiB block, repeated to make the payload; cheap to generate, not all zeros. */
function makeBlock(): Buffer {
  const b = Buffer.alloc(BLOCK_BYTES);
  let x = 0x9e3779b9;
  for (let i = 0; i < b.length; i += 4) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    b.writeUInt32LE(x >>> 0, i);
  }
  return b;
}

function mibPerSec(bytes: number, ms: number): string {
  return ((bytes / (1024 * 1024)) / (ms / 1000)).toFixed(1);
}

function percentile(sortedMs: readonly number[], p: number): number {
  const i = Math.min(sortedMs.length - 1, Math.ceil((p / 100) * sortedMs.length) - 1);
  return sortedMs[Math.max(0, i)] ?? NaN;
}

interface ServerProcess {
  readonly baseUrl: string;
  readonly apiUrl: string;
  readonly uploadUrl: string;
  readonly child: ChildProcess;
}

async function startServerProcess(): Promise<ServerProcess> {
  const child = spawnCli(['server', '--port', '0', '--token', TOKEN]);
  const lines = createInterface({ input: child.stdout! });
  const first = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('boxsync server printed no base URL within 30 s')), 30_000);
    lines.once('line', (l) => {
      clearTimeout(timer);
      resolve(l.trim());
    });
    child.once('exit', (code) => reject(new Error(`boxsync server exited with ${String(code)} before printing its URL`)));
  });
  if (!/^http:\/\//.test(first)) throw new Error(`boxsync server printed ${first}, not a URL`);
  return { baseUrl: first, apiUrl: `${first}/2.0`, uploadUrl: `${first}/api/2.0`, child };
}

async function stopServerProcess(srv: ServerProcess): Promise<void> {
  if (srv.child.exitCode !== null) return;
  const exited = new Promise<void>((resolve) => srv.child.once('exit', () => resolve()));
  srv.child.kill('SIGTERM');
  await exited;
}

/** The control surface over HTTP: POST /_control/as/<user>/<action> {"args": [...]}. */
async function actAs(srv: ServerProcess, action: string, args: readonly unknown[]): Promise<Record<string, unknown>> {
  const res = await fetch(`${srv.baseUrl}/_control/as/1/${action}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ args }) });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`control ${action} -> ${res.status}: ${text.slice(0, 300)}`);
  return (JSON.parse(text) as { result: Record<string, unknown> }).result;
}

async function api(srv: ServerProcess, method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const res = await fetch(url.startsWith('http') ? url : `${srv.apiUrl}${url}`, {
    method,
    headers: { Authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${url} -> ${res.status}: ${text.slice(0, 300)}`);
  return text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
}

/** Sends `chunks` as a request body over node:http with a known length, resolving the reply. */
function streamRequest(
  url: string,
  method: string,
  headers: Record<string, string | number>,
  write: (put: (b: Buffer) => Promise<void>) => Promise<void>,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    const put = (b: Buffer): Promise<void> =>
      new Promise((ok) => {
        if (req.write(b)) ok();
        else req.once('drain', ok);
      });
    write(put).then(() => req.end(), reject);
  });
}

async function sessionUpload(srv: ServerProcess, folderId: string, block: Buffer): Promise<{ ms: number; fileId: string }> {
  const whole = createHash('sha1');
  for (let off = 0; off < TOTAL_BYTES; off += BLOCK_BYTES) whole.update(block.subarray(0, Math.min(BLOCK_BYTES, TOTAL_BYTES - off)));
  const wholeB64 = whole.digest('base64');
  const started = performance.now();
  const session = await api(srv, 'POST', `${srv.uploadUrl}/files/upload_sessions`, { folder_id: folderId, file_size: TOTAL_BYTES, file_name: 'session-1g.bin' });
  const partSize = Number(session.part_size);
  const ends = session.session_endpoints as Record<string, string>;
  if (partSize !== BLOCK_BYTES) throw new Error(`bench assumes part_size ${BLOCK_BYTES}, server said ${partSize}`);
  const fullDigest = `sha=${createHash('sha1').update(block).digest('base64')}`;
  const parts: unknown[] = [];
  for (let off = 0; off < TOTAL_BYTES; off += partSize) {
    const len = Math.min(partSize, TOTAL_BYTES - off);
    const chunk = block.subarray(0, len);
    const digest = len === BLOCK_BYTES ? fullDigest : `sha=${createHash('sha1').update(chunk).digest('base64')}`;
    const r = await streamRequest(
      ends.upload_part ?? '',
      'PUT',
      { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/octet-stream', 'Content-Length': len, 'Content-Range': `bytes ${off}-${off + len - 1}/${TOTAL_BYTES}`, Digest: digest },
      (put) => put(chunk),
    );
    if (r.status !== 200) throw new Error(`part at ${off} -> ${r.status}: ${r.text.slice(0, 300)}`);
    parts.push((JSON.parse(r.text) as { part: unknown }).part);
  }
  let committed: Record<string, unknown> | undefined;
  for (let attempt = 0; attempt < 600 && !committed; attempt++) {
    const res = await fetch(ends.commit ?? '', {
      method: 'POST',
      headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json', Digest: `sha=${wholeB64}` },
      body: JSON.stringify({ parts }),
    });
    const text = await res.text();
    if (res.status === 201) committed = JSON.parse(text) as Record<string, unknown>;
    else if (res.status === 202) await new Promise((r) => setTimeout(r, Number(res.headers.get('retry-after') ?? '1') * 1000));
    else throw new Error(`commit -> ${res.status}: ${text.slice(0, 300)}`);
  }
  if (!committed) throw new Error('commit never finished');
  const ms = performance.now() - started;
  const entry = (committed.entries as Record<string, unknown>[])[0];
  if (entry?.size !== TOTAL_BYTES) throw new Error(`committed size ${String(entry?.size)} != ${TOTAL_BYTES}`);
  return { ms, fileId: String(entry.id) };
}

async function simpleUpload(srv: ServerProcess, folderId: string, block: Buffer): Promise<number> {
  const boundary = `----boxbench${Date.now()}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="attributes"\r\n\r\n${JSON.stringify({ name: 'simple-1g.bin', parent: { id: folderId } })}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="simple-1g.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const started = performance.now();
  const r = await streamRequest(
    `${srv.uploadUrl}/files/content`,
    'POST',
    { Authorization: `Bearer ${TOKEN}`, 'Content-Type': `multipart/form-data; boundary=${boundary}`, 'Content-Length': head.length + TOTAL_BYTES + tail.length },
    async (put) => {
      await put(head);
      for (let off = 0; off < TOTAL_BYTES; off += BLOCK_BYTES) await put(block.subarray(0, Math.min(BLOCK_BYTES, TOTAL_BYTES - off)));
      await put(tail);
    },
  );
  const ms = performance.now() - started;
  if (r.status !== 201) throw new Error(`simple upload -> ${r.status}: ${r.text.slice(0, 300)}`);
  return ms;
}

async function download(srv: ServerProcess, fileId: string): Promise<number> {
  const started = performance.now();
  const redirect = await fetch(`${srv.apiUrl}/files/${fileId}/content`, { headers: { Authorization: `Bearer ${TOKEN}` }, redirect: 'manual' });
  const location = redirect.headers.get('location');
  if (redirect.status !== 302 || !location) throw new Error(`download -> ${redirect.status}, no Location`);
  const res = await fetch(location);
  let bytes = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.byteLength;
  const ms = performance.now() - started;
  if (bytes !== TOTAL_BYTES) throw new Error(`downloaded ${bytes} bytes, expected ${TOTAL_BYTES}`);
  return ms;
}

async function listing(srv: ServerProcess, folderId: string): Promise<{ p50: number; p99: number; pages: number }> {
  const runsMs: number[] = [];
  let pages = 0;
  for (let run = 0; run < LIST_RUNS; run++) {
    const started = performance.now();
    let marker: string | undefined;
    let count = 0;
    pages = 0;
    do {
      const q = `usemarker=true&limit=${PAGE_LIMIT}&fields=name,size,modified_at,sha1${marker ? `&marker=${encodeURIComponent(marker)}` : ''}`;
      const page = await api(srv, 'GET', `/folders/${folderId}/items?${q}`);
      count += (page.entries as unknown[]).length;
      pages++;
      marker = typeof page.next_marker === 'string' && page.next_marker !== '' ? page.next_marker : undefined;
    } while (marker);
    runsMs.push(performance.now() - started);
    if (count !== ITEMS) throw new Error(`listed ${count} items, expected ${ITEMS}`);
  }
  runsMs.sort((a, b) => a - b);
  return { p50: percentile(runsMs, 50), p99: percentile(runsMs, 99), pages };
}

export async function run(): Promise<void> {
  const srv = await startServerProcess();
  try {
    const big = String((await actAs(srv, 'createFolder', ['0', 'bench-10k'])).id);
    const seedStarted = performance.now();
    const SEED_CONCURRENCY = 8;
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let i = next++; i < ITEMS; i = next++) {
        if (i % 10 === 0) await actAs(srv, 'createFolder', [big, `dir-${String(i).padStart(5, '0')}`]);
        else await actAs(srv, 'uploadFile', [big, `file-${String(i).padStart(5, '0')}.txt`, `item ${i}`]);
      }
    };
    await Promise.all(Array.from({ length: SEED_CONCURRENCY }, worker));
    const seedMs = performance.now() - seedStarted;
    console.log(`seeded ${ITEMS} items in ${(seedMs / 1000).toFixed(2)} s (control surface over HTTP, ${SEED_CONCURRENCY} at a time)`);
    const l = await listing(srv, big);
    console.log(`full marker-paged listing of ${ITEMS} items (${l.pages} pages of ${PAGE_LIMIT}, ${LIST_RUNS} runs): p50 ${l.p50.toFixed(1)} ms, p99 ${l.p99.toFixed(1)} ms`);

    const transfers = String((await actAs(srv, 'createFolder', ['0', 'bench-transfers'])).id);
    const block = makeBlock();
    const mib = TOTAL_BYTES / (1024 * 1024);
    const session = await sessionUpload(srv, transfers, block);
    console.log(`upload session  ${mib} MiB: ${(session.ms / 1000).toFixed(2)} s, ${mibPerSec(TOTAL_BYTES, session.ms)} MiB/s (parts of 8 MiB, sequential, incl. commit)`);
    const simpleMs = await simpleUpload(srv, transfers, block);
    console.log(`simple upload   ${mib} MiB: ${(simpleMs / 1000).toFixed(2)} s, ${mibPerSec(TOTAL_BYTES, simpleMs)} MiB/s (one streamed multipart request)`);
    const downMs = await download(srv, session.fileId);
    console.log(`download        ${mib} MiB: ${(downMs / 1000).toFixed(2)} s, ${mibPerSec(TOTAL_BYTES, downMs)} MiB/s (302, then the streamed body)`);
    console.log(`box-server peak RSS over the whole run: ${peakRssMib(srv.child.pid)} (content streams through disk, never whole in memory)`);
  } finally {
    await stopServerProcess(srv);
  }
}

/** VmHWM of a live process, from /proc (Linux). */
function peakRssMib(pid: number | undefined): string {
  if (pid === undefined) return 'unknown';
  try {
    const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? 'unknown' : `${(Number(kb) / 1024).toFixed(0)} MiB`;
  } catch {
    return 'unknown';
  }
}
