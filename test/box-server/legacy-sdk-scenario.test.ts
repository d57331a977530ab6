// The legacy official SDK (box-node-sdk 3.x, installed as box-node-sdk-legacy) pointed at box-server, over
// HTTPS as on Box: a second client, older and written independently of the generated one, with its own
// request shapes (the `content` part, `lock.type`, new versions sent with no attributes part at all, marker
// and offset paging iterators, a chunked uploader that checks every part, an event stream that long-polls).
// If it works unchanged against box-server, box-server did not just learn one client's habits.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBoxServer, type BoxServer } from '../../src/box-server/index.js';
import { waitFor } from '../support/wait.js';

/* The legacy SDK's typings are loose (`any` almost everywhere); these are the shapes this test reads. */
interface Item {
  type: string;
  id: string;
  name: string;
  etag?: string;
  sha1?: string;
  size?: number;
  item_status?: string;
  file_version?: { id: string; sha1: string };
  lock?: { type: string; created_by: { id: string }; expired_at?: string; is_download_prevented: boolean } | null;
  shared_link?: { url: string; access: string; is_password_enabled: boolean } | null;
  parent?: { id: string };
}
interface Collection<T> {
  total_count?: number;
  entries: T[];
  next_marker?: string | null;
}
interface LegacyEvent {
  event_type: string;
  source?: { id?: string; type?: string } | null;
}
interface LegacyError extends Error {
  statusCode?: number;
  response?: { body?: { code?: string } };
}
/* eslint-disable @typescript-eslint/no-explicit-any */
type LegacyClient = any;

const requireCjs = createRequire(import.meta.url);
const BoxSDK = requireCjs('box-node-sdk-legacy') as new (config: Record<string, unknown>) => { getBasicClient(token: string): LegacyClient };
// The package's main is lib/box-node-sdk.js; its package.json is one level up.
const LEGACY_VERSION = (JSON.parse(readFileSync(new URL('../package.json', pathToFileURL(requireCjs.resolve('box-node-sdk-legacy'))), 'utf8')) as { version: string }).version;

const tls = (name: string): string => readFileSync(new URL(`../support/tls/${name}`, import.meta.url), 'utf8');
const cert = tls('localhost-test-only.crt');

// Long enough that an event reaching the stream well before it can only have come through new_change.
const LONG_POLL_TIMEOUT_MS = 30_000;

let srv: BoxServer;
let client: LegacyClient;
let pagingClient: LegacyClient;

function sdkFor(iterators: boolean): { getBasicClient(token: string): LegacyClient } {
  return new BoxSDK({
    clientID: 'legacy-client',
    clientSecret: 'legacy-secret',
    apiRootURL: srv.baseUrl,
    uploadAPIRootURL: `${srv.baseUrl}/api`,
    authorizeRootURL: `${srv.baseUrl}/api`,
    iterators,
    numMaxRetries: 0,
    request: { agentOptions: { keepAlive: false, ca: cert } },
  });
}

beforeAll(async () => {
  srv = await startBoxServer({ port: 0, tokens: ['LEGACY-T'], longPollTimeoutMs: LONG_POLL_TIMEOUT_MS, tls: { key: tls('localhost-test-only.key'), cert } });
  client = sdkFor(false).getBasicClient('LEGACY-T');
  pagingClient = sdkFor(true).getBasicClient('LEGACY-T');
});

afterAll(async () => {
  await srv?.close();
});

const sha1Hex = (b: Buffer | string): string => createHash('sha1').update(b).digest('hex');

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(c as Uint8Array));
  return Buffer.concat(chunks);
}

async function expectError(p: Promise<unknown>, status: number, code?: string): Promise<void> {
  let err: LegacyError | undefined;
  try {
    await p;
  } catch (e) {
    err = e as LegacyError;
  }
  expect(err, `expected a ${status} error`).toBeDefined();
  expect(err!.statusCode).toBe(status);
  if (code !== undefined) expect(err!.response?.body?.code).toBe(code);
}

async function collect<T>(iterator: AsyncIterator<T>, bound = 1000): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < bound; i++) {
    const r = await iterator.next();
    if (r.done) return out;
    out.push(r.value);
  }
  throw new Error(`iterator still going after ${bound} items`);
}

describe(`legacy box-node-sdk ${LEGACY_VERSION} against box-server`, () => {
  const v1 = Buffer.from('legacy version one\n');
  const v2 = Buffer.from('legacy version two, longer\n');
  let file: Item;

  it('reads the current user and uploads a file (multipart with a `content` part)', async () => {
    const me = (await client.users.get(client.CURRENT_USER_ID)) as Item;
    expect(me.type).toBe('user');
    expect(me.id).toBe('1');
    const up = (await client.files.uploadFile('0', 'legacy.txt', v1)) as Collection<Item>;
    expect(up.total_count).toBe(1);
    file = up.entries[0]!;
    expect(file.name).toBe('legacy.txt');
    expect(file.size).toBe(v1.length);
    expect(file.sha1).toBe(sha1Hex(v1));
    expect(file.parent?.id).toBe('0');
  });

  it('uploads a new version with no attributes part; the name stays', async () => {
    // Watch the multipart parts the SDK hands to its transport for this call.
    const partsSent: string[][] = [];
    const upload = client.upload as (...args: unknown[]) => unknown;
    client.upload = function (this: unknown, ...args: unknown[]): unknown {
      partsSent.push(Object.keys(args[2] as Record<string, unknown>));
      return upload.apply(this, args);
    };
    let up: Collection<Item>;
    try {
      up = (await client.files.uploadNewFileVersion(file.id, v2)) as Collection<Item>;
    } finally {
      client.upload = upload;
    }
    expect(partsSent).toEqual([['content']]);
    const updated = up.entries[0]!;
    expect(updated.id).toBe(file.id);
    expect(updated.name).toBe('legacy.txt');
    expect(updated.sha1).toBe(sha1Hex(v2));
    expect(updated.file_version?.id).not.toBe(file.file_version?.id);
    expect(updated.etag).not.toBe(file.etag);
    expect((await readAll(await client.files.getReadStream(file.id))).equals(v2)).toBe(true);
  });

  it('lists versions and promotes the first one back', async () => {
    const versions = (await client.files.getVersions(file.id)) as Collection<{ id: string; sha1: string; type: string }>;
    expect(versions.entries).toHaveLength(1);
    expect(versions.entries[0]!.sha1).toBe(sha1Hex(v1));
    const promoted = (await client.files.promoteVersion(file.id, versions.entries[0]!.id)) as { type: string; id: string; sha1: string };
    expect(promoted.type).toBe('file_version');
    expect(promoted.sha1).toBe(sha1Hex(v1));
    const now = (await client.files.get(file.id)) as Item;
    expect(now.sha1).toBe(sha1Hex(v1));
    expect(now.file_version?.id).toBe(promoted.id);
    expect((await readAll(await client.files.getReadStream(file.id))).equals(v1)).toBe(true);
    const after = (await client.files.getVersions(file.id)) as Collection<{ sha1: string }>;
    expect(after.entries.map((v) => v.sha1).sort()).toEqual([sha1Hex(v1), sha1Hex(v2)].sort());
    file = now;
  });

  it('honours If-Match (412 on a stale etag) and If-None-Match (304 on the current one)', async () => {
    const current = (await client.files.get(file.id)) as Item;
    const stale = file.etag === current.etag ? '0' : file.etag!;
    await expectError(client.files.update(file.id, { name: 'stale.txt', etag: stale }), 412, 'precondition_failed');
    const renamed = (await client.files.update(file.id, { name: 'legacy-renamed.txt', etag: current.etag })) as Item;
    expect(renamed.name).toBe('legacy-renamed.txt');
    expect(renamed.etag).not.toBe(current.etag);

    const notModified = (await client.get(`/files/${file.id}`, { headers: { 'If-None-Match': renamed.etag } })) as { statusCode: number };
    expect(notModified.statusCode).toBe(304);
    const modified = (await client.get(`/files/${file.id}`, { headers: { 'If-None-Match': current.etag } })) as { statusCode: number; body: Item };
    expect(modified.statusCode).toBe(200);
    expect(modified.body.name).toBe('legacy-renamed.txt');
    await expectError(client.files.delete(file.id, { etag: current.etag }), 412, 'precondition_failed');
    file = renamed;
  });

  it('locks (legacy `lock.type`) and reads the lock back with fields=lock, then unlocks', async () => {
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d{3}Z$/, '+00:00');
    await client.files.lock(file.id, { expires_at: expiresAt, is_download_prevented: false });
    const locked = (await client.files.get(file.id, { fields: 'lock' })) as Item;
    expect(locked.lock?.type).toBe('lock');
    expect(locked.lock?.created_by.id).toBe('1');
    // Box takes `expires_at` in the request and answers with `expired_at` (its Lock schema's name).
    expect(Date.parse(locked.lock!.expired_at!)).toBe(Date.parse(expiresAt));
    expect(locked.lock?.is_download_prevented).toBe(false);
    await client.files.unlock(file.id);
    const unlocked = (await client.files.get(file.id, { fields: 'lock' })) as Item;
    expect(unlocked.lock).toBeNull();
  });

  it('creates a password-protected shared link, resolves it through shared items, and removes it', async () => {
    const shared = (await client.files.update(file.id, { shared_link: { access: 'open', password: 'Legacy-Secret-1' }, fields: 'shared_link' })) as Item;
    expect(shared.shared_link?.access).toBe('open');
    expect(shared.shared_link?.is_password_enabled).toBe(true);
    const url = shared.shared_link!.url;
    const resolved = (await client.sharedItems.get(url, 'Legacy-Secret-1')) as Item;
    expect(resolved.id).toBe(file.id);
    expect(resolved.type).toBe('file');
    await expectError(client.sharedItems.get(url, 'wrong-password'), 403);

    const link = (await client.weblinks.create('https://example.com/legacy', '0', { name: 'legacy link' })) as Item;
    const linkShared = (await client.weblinks.update(link.id, { shared_link: { access: 'open' } })) as Item;
    expect(linkShared.shared_link?.access).toBe('open');
    expect(((await client.sharedItems.get(linkShared.shared_link!.url)) as Item).id).toBe(link.id);

    await client.files.update(file.id, { shared_link: null });
    const gone = (await client.files.get(file.id, { fields: 'shared_link' })) as Item;
    // A file's shared_link is not nullable in the spec; box-server leaves the key out when there is none.
    expect(gone.shared_link ?? null).toBeNull();
    await expectError(client.sharedItems.get(url, 'Legacy-Secret-1'), 404);
  });

  it('trashes and restores a file and a folder, lists the trash, and purges', async () => {
    await client.files.delete(file.id);
    const trashed = (await client.files.getTrashedFile(file.id)) as Item;
    expect(trashed.item_status).toBe('trashed');
    const trash = (await client.trash.get({ limit: 100 })) as Collection<Item>;
    expect(trash.entries.map((e) => e.id)).toContain(file.id);
    const restored = (await client.files.restoreFromTrash(file.id, {})) as Item;
    expect(restored.item_status).toBe('active');
    expect(restored.parent?.id).toBe('0');

    const folder = (await client.folders.create('0', 'legacy-trash-folder')) as Item;
    await client.files.uploadFile(folder.id, 'inside.txt', 'inside');
    await client.folders.delete(folder.id, { recursive: true });
    const trashedFolder = (await client.folders.getTrashedFolder(folder.id)) as Item;
    expect(trashedFolder.item_status).toBe('trashed');
    await expectError(client.folders.get(folder.id), 404, 'trashed');
    const back = (await client.folders.restoreFromTrash(folder.id, { name: 'legacy-restored-folder' })) as Item;
    expect(back.name).toBe('legacy-restored-folder');
    const inside = (await client.folders.getItems(folder.id, { fields: 'name' })) as Collection<Item>;
    expect(inside.entries.map((e) => e.name)).toEqual(['inside.txt']);

    const doomed = ((await client.files.uploadFile('0', 'doomed.txt', 'bye')) as Collection<Item>).entries[0]!;
    await client.files.delete(doomed.id);
    await client.files.deletePermanently(doomed.id);
    await expectError(client.files.getTrashedFile(doomed.id), 404);
  });

  it('pages a folder with offset and marker iterators and with plain offset/limit', async () => {
    const folder = (await client.folders.create('0', 'legacy-paging')) as Item;
    for (let i = 0; i < 7; i++) await client.files.uploadFile(folder.id, `f${i}.txt`, `file ${i}`);
    for (const name of ['sub-a', 'sub-b']) await client.folders.create(folder.id, name);
    const expected = ['sub-a', 'sub-b', ...Array.from({ length: 7 }, (_, i) => `f${i}.txt`)];

    const byOffset = await collect<Item>(await pagingClient.folders.getItems(folder.id, { limit: 3, fields: 'name' }));
    expect(byOffset.map((e) => e.name)).toEqual(expected);
    const byMarker = await collect<Item>(await pagingClient.folders.getItems(folder.id, { usemarker: true, limit: 4, fields: 'name' }));
    expect(byMarker.map((e) => e.name)).toEqual(expected);

    const page = (await client.folders.getItems(folder.id, { limit: 4, offset: 4, fields: 'name' })) as Collection<Item>;
    expect(page.total_count).toBe(9);
    expect(page.entries.map((e) => e.name)).toEqual(expected.slice(4, 8));
    const marked = (await client.folders.getItems(folder.id, { usemarker: true, limit: 5, fields: 'name' })) as Collection<Item>;
    expect(marked.entries.map((e) => e.name)).toEqual(expected.slice(0, 5));
    expect(typeof marked.next_marker).toBe('string');
  });

  it('uploads a 20 MB file with the chunked uploader (every part checked against the server)', async () => {
    const size = 20_000_123;
    const content = Buffer.alloc(size);
    for (let i = 0; i < size; i += 4093) content[i] = (i / 4093) % 251;
    const uploader = await client.files.getChunkedUploader('0', size, 'legacy-big.bin', content);
    const parts: number[] = [];
    uploader.on('chunkUploaded', (part: { part: { size: number } }) => parts.push(part.part.size));
    const committed = (await uploader.start()) as Collection<Item>;
    const big = committed.entries[0]!;
    expect(big.name).toBe('legacy-big.bin');
    expect(big.size).toBe(size);
    expect(big.sha1).toBe(sha1Hex(content));
    expect(parts.reduce((a, b) => a + b, 0)).toBe(size);
    expect(parts.length).toBeGreaterThan(1);
  });

  it('reads events from a position and gets a change through the long-polling event stream', async () => {
    const page = (await client.events.get({ stream_position: '0', limit: 50 })) as { entries: LegacyEvent[]; next_stream_position: string | number };
    expect(page.entries.length).toBeGreaterThan(0);
    expect(page.entries.map((e) => e.event_type)).toContain('ITEM_UPLOAD');
    const info = (await client.events.getLongPollInfo()) as { url: string; retry_timeout: number };
    expect(info.url.startsWith(`${srv.baseUrl}/`)).toBe(true);
    expect(info.retry_timeout * 1000).toBeGreaterThan(LONG_POLL_TIMEOUT_MS);

    srv.control.clearRequests();
    const stream = (await client.events.getEventStream()) as Readable;
    const seen: LegacyEvent[] = [];
    stream.on('data', (e: LegacyEvent) => seen.push(e));
    // The stream emits 'error' for a failed poll (and keeps retrying); one that is still polling when the
    // server closes after this file would otherwise throw from an emitter without a listener.
    const errors: unknown[] = [];
    let done = false;
    stream.on('error', (e: unknown) => {
      if (!done) errors.push(e);
    });
    try {
      // Once the stream has its long-poll URL (OPTIONS /events answered) it parks on it; a change made now
      // reaches the stream through new_change, long before the 30 s reconnect.
      await waitFor(() => srv.control.requests().some((r) => r.method === 'OPTIONS' && r.path.endsWith('/events')), {
        what: 'the event stream to ask for its long-poll URL',
        timeoutMs: 10_000,
      });
      const t0 = Date.now();
      const folder = (await client.folders.create('0', 'legacy-event-folder')) as Item;
      const ev = await waitFor(() => seen.find((e) => e.event_type === 'ITEM_CREATE' && e.source?.id === folder.id), {
        what: 'ITEM_CREATE of the new folder on the event stream',
        timeoutMs: 10_000,
      });
      expect(ev.source?.type).toBe('folder');
      expect(Date.now() - t0).toBeLessThan(LONG_POLL_TIMEOUT_MS);
      expect(srv.control.requests().some((r) => r.path === '/subscribe' && r.status === 200)).toBe(true);
      expect(errors).toEqual([]);
    } finally {
      done = true;
      stream.destroy();
    }
  });
});
