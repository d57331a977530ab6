/**
 * The Node floor of an initial mirror over Box's API (compare.bench.ts's "node floor" column): the least any Node
 * client must do to copy a Box folder tree, and nothing more.
 *   node test/bench/floor-client.mjs API_URL TOKEN FOLDER_ID DEST CONCURRENCY
 * Lists the folders (GET /folders/{id}/items, marker paging, CONCURRENCY listings at once) and downloads each file
 * as it is found, CONCURRENCY at once, as Box serves a download: GET /files/{id}/content with the token answers 302,
 * and the Location is fetched without it. Each file is written to a temp name, fsynced as it closes, and renamed
 * into place, so that it is as durable as a file boxsync records as synced. No journal, no checks, no hashing, no
 * retries, no progress, no logging; it stops at the first error (exit 1). Plain `node:http` with a keep-alive
 * agent: what boxsync's download path uses.
 */
import { createWriteStream } from 'node:fs';
import { mkdir, rename } from 'node:fs/promises';
import { once } from 'node:events';
import http from 'node:http';
import { join } from 'node:path';

const [apiUrl, token, rootId, dest, concurrencyArg] = process.argv.slice(2);
const concurrency = Number(concurrencyArg);
if (!apiUrl || !token || !rootId || !dest || !(concurrency >= 1)) {
  console.error('usage: floor-client.mjs API_URL TOKEN FOLDER_ID DEST CONCURRENCY');
  process.exit(2);
}
const agent = new http.Agent({ keepAlive: true, maxSockets: 2 * concurrency });

/** One GET; resolves with the response (body unread). */
function get(url, auth) {
  return new Promise((resolve, reject) => {
    http.get(url, { agent, headers: auth ? { authorization: `Bearer ${token}` } : {} }, resolve).on('error', reject);
  });
}

async function expect(res, status, what) {
  if (res.statusCode !== status) {
    res.resume();
    throw new Error(`${what}: HTTP ${res.statusCode}, expected ${status}`);
  }
}

async function json(url) {
  const res = await get(url, true);
  await expect(res, 200, url);
  const chunks = [];
  for await (const c of res) chunks.push(c);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

/**
 * `size` runners over a queue that may grow while they run. `idle()` resolves once the queue is empty and nothing
 * runs (or rejects with the first error); work adds more only while it runs, so idle means finished.
 */
function pool(size, work) {
  const queue = [];
  let running = 0;
  let error = null;
  let waiters = [];
  const settle = () => {
    if (error === null && (running > 0 || queue.length > 0)) return;
    for (const w of waiters) (error === null ? w.resolve() : w.reject(error));
    waiters = [];
  };
  const pump = () => {
    while (error === null && running < size && queue.length > 0) {
      running += 1;
      work(queue.shift()).then(
        () => {
          running -= 1;
          pump();
          settle();
        },
        (e) => {
          error ??= e;
          running -= 1;
          settle();
        },
      );
    }
  };
  return {
    add(item) {
      queue.push(item);
      pump();
    },
    idle: () => new Promise((resolve, reject) => {
      waiters.push({ resolve, reject });
      settle();
    }),
  };
}

let files = 0;
const downloads = pool(concurrency, async ({ id, path }) => {
  const api = await get(`${apiUrl}/files/${id}/content`, true);
  await expect(api, 302, `GET /files/${id}/content`);
  api.resume();
  const body = await get(new URL(api.headers.location, apiUrl).toString(), false);
  await expect(body, 200, `download of file ${id}`);
  const temp = `${path}.floor-part`;
  const out = createWriteStream(temp, { flush: true });
  for await (const chunk of body) if (!out.write(chunk)) await once(out, 'drain');
  out.end();
  await once(out, 'close');
  await rename(temp, path);
  files += 1;
});

const listings = pool(concurrency, async ({ id, dir }) => {
  await mkdir(dir, { recursive: true });
  let marker = '';
  do {
    const page = await json(`${apiUrl}/folders/${id}/items?fields=type,id,name&limit=1000&usemarker=true${marker ? `&marker=${encodeURIComponent(marker)}` : ''}`);
    for (const e of page.entries) {
      if (e.type === 'folder') listings.add({ id: e.id, dir: join(dir, e.name) });
      else if (e.type === 'file') downloads.add({ id: e.id, path: join(dir, e.name) });
    }
    const next = page.next_marker ?? '';
    // A server that answers the same marker again would page for ever.
    if (next !== '' && next === marker) throw new Error(`GET /folders/${id}/items: the marker did not move`);
    marker = next;
  } while (marker !== '');
});

try {
  listings.add({ id: rootId, dir: dest });
  await listings.idle();
  // Every download was added by a listing, so none is added after this.
  await downloads.idle();
  agent.destroy();
  console.log(`floor client: ${files} files`);
} catch (e) {
  console.error(`floor client: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
}
