// Box's official generated SDK, pointed at box-server, as an independent client: if the SDK's own
// deserializers and assertions (uploadBigFile checks every part's sha1, size and offset) accept our answers,
// box-server speaks Box's wire format and not just our reading of it.
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { Readable } from 'node:stream';
import type * as Sdk from 'box-typescript-sdk-gen';
import type * as SdkErrors from 'box-typescript-sdk-gen/box/errors';
import type * as SdkManagers from 'box-typescript-sdk-gen/managers';
import type { Event } from 'box-typescript-sdk-gen/schemas/event.generated';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBoxServer, type BoxServer } from '../../src/box-server/index.js';
import { waitFor } from '../support/wait.js';

// The SDK's ESM build (1.19.1) redeclares BoxApiError's fields as class fields, which resets the
// responseInfo the base constructor assigned; the CommonJS build keeps it, so load that one.
const requireCjs = createRequire(import.meta.url);
const { BoxClient, BoxDeveloperTokenAuth, BoxOAuth, OAuthConfig } = requireCjs('box-typescript-sdk-gen') as typeof Sdk;
const { BoxApiError } = requireCjs('box-typescript-sdk-gen/box/errors') as typeof SdkErrors;
const { DownloadFileHeaders, UploadFileVersionHeaders } = requireCjs('box-typescript-sdk-gen/managers') as typeof SdkManagers;

let srv: BoxServer;
let client: Sdk.BoxClient;

// A long reconnect timeout: an event that arrives well before it can only have come through new_change.
const LONG_POLL_TIMEOUT_MS = 30_000;

beforeAll(async () => {
  srv = await startBoxServer({ port: 0, tokens: ['SDK-T1'], longPollTimeoutMs: LONG_POLL_TIMEOUT_MS });
  const auth = new BoxDeveloperTokenAuth({ token: 'SDK-T1' });
  client = new BoxClient({ auth }).withCustomBaseUrls(baseUrlsOf(srv));
});

function baseUrlsOf(s: BoxServer): { baseUrl: string; uploadUrl: string; oauth2Url: string } {
  return { baseUrl: s.baseUrl, uploadUrl: `${s.baseUrl}/api`, oauth2Url: `${s.baseUrl}/api/oauth2` };
}

afterAll(async () => {
  await srv?.close();
});

function sha1Hex(b: Buffer | string): string {
  return createHash('sha1').update(b).digest('hex');
}

async function readAll(stream: Readable | undefined): Promise<Buffer> {
  if (!stream) throw new Error('the SDK returned no stream');
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(c as Uint8Array));
  return Buffer.concat(chunks);
}

/** Deterministic bytes, generated chunk by chunk so the 25 MB never sit in one buffer. */
function patternStream(sizeBytes: number, hash: ReturnType<typeof createHash>): Readable {
  const chunkBytes = 1 << 20;
  let sent = 0;
  return new Readable({
    read() {
      if (sent >= sizeBytes) {
        this.push(null);
        return;
      }
      const n = Math.min(chunkBytes, sizeBytes - sent);
      const chunk = Buffer.alloc(n);
      for (let i = 0; i < n; i += 997) chunk[i] = (sent + i) % 253;
      sent += n;
      hash.update(chunk);
      this.push(chunk);
    },
  });
}

async function expectApiError(p: Promise<unknown>, status: number): Promise<SdkErrors.BoxApiError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(BoxApiError);
    const err = e as SdkErrors.BoxApiError;
    expect(err.responseInfo.statusCode).toBe(status);
    return err;
  }
  throw new Error(`expected the SDK to fail with HTTP ${status}, but the call succeeded`);
}

describe('official Box SDK against box-server', () => {
  it('lists, uploads, uploads 25 MB in chunks, and downloads a range', async () => {
    const root = await client.folders.getFolderItems('0');
    expect(Array.isArray(root.entries)).toBe(true);
    const folder = await client.folders.createFolder({ name: 'sdk-scenario', parent: { id: '0' } });
    const files = await client.uploads.uploadFile({
      attributes: { name: 'hello.txt', parent: { id: folder.id } },
      file: Readable.from([Buffer.from('hello from the sdk')]),
    });
    const hello = files.entries?.[0];
    expect(hello?.name).toBe('hello.txt');
    expect(hello?.sha1).toBe(sha1Hex('hello from the sdk'));

    const sizeBytes = 25 * 1024 * 1024;
    const hash = createHash('sha1');
    const big = await client.chunkedUploads.uploadBigFile(patternStream(sizeBytes, hash), 'big.bin', sizeBytes, folder.id);
    expect(big.size).toBe(sizeBytes);
    expect(big.sha1).toBe(hash.digest('hex'));

    const listing = await client.folders.getFolderItems(folder.id);
    expect(listing.entries?.map((e) => e.name).sort()).toEqual(['big.bin', 'hello.txt']);

    const range = await readAll(await client.downloads.downloadFile(big.id, { headers: new DownloadFileHeaders({ range: 'bytes=1000-1999' }) }));
    expect(range.length).toBe(1000);
    const expected = Buffer.alloc(1000);
    for (let i = 0; i < 1000; i++) {
      const abs = 1000 + i;
      expected[i] = abs % 997 === 0 ? abs % 253 : 0;
    }
    expect(range.equals(expected)).toBe(true);
    const whole = await readAll(await client.downloads.downloadFile(hello!.id));
    expect(whole.toString()).toBe('hello from the sdk');
  });

  it('refuses a new version with a stale etag (412), then moves and renames', async () => {
    const folder = await client.folders.createFolder({ name: 'sdk-versions', parent: { id: '0' } });
    const dest = await client.folders.createFolder({ name: 'sdk-dest', parent: { id: '0' } });
    const first = (await client.uploads.uploadFile({ attributes: { name: 'doc.txt', parent: { id: folder.id } }, file: Readable.from([Buffer.from('one')]) })).entries![0]!;
    const staleEtag = first.etag!;
    await client.uploads.uploadFileVersion(first.id, { attributes: { name: 'doc.txt' }, file: Readable.from([Buffer.from('two')]) }, { headers: new UploadFileVersionHeaders({ ifMatch: staleEtag }) });
    const err = await expectApiError(
      client.uploads.uploadFileVersion(first.id, { attributes: { name: 'doc.txt' }, file: Readable.from([Buffer.from('three')]) }, { headers: new UploadFileVersionHeaders({ ifMatch: staleEtag }) }),
      412,
    );
    // The SDK keeps `code` JSON-encoded (with quotes); the parsed body has it plain.
    expect((err.responseInfo.body as { code?: string } | undefined)?.code).toBe('precondition_failed');
    expect((await client.files.getFileById(first.id)).sha1).toBe(sha1Hex('two'));

    const moved = await client.files.updateFileById(first.id, { requestBody: { parent: { id: dest.id } } });
    expect(moved.parent?.id).toBe(dest.id);
    const renamed = await client.files.updateFileById(first.id, { requestBody: { name: 'doc-renamed.txt' } });
    expect(renamed.name).toBe('doc-renamed.txt');
    expect(renamed.pathCollection?.entries.map((e) => e.name)).toEqual(['All Files', 'sdk-dest']);
  });

  it('trashes and restores; lists versions and promotes one', async () => {
    const folder = await client.folders.createFolder({ name: 'sdk-trash', parent: { id: '0' } });
    const f = (await client.uploads.uploadFile({ attributes: { name: 'v.txt', parent: { id: folder.id } }, file: Readable.from([Buffer.from('v1')]) })).entries![0]!;
    await client.uploads.uploadFileVersion(f.id, { attributes: { name: 'v.txt' }, file: Readable.from([Buffer.from('v2')]) });
    await client.files.deleteFileById(f.id);
    const trashed = await client.trashedFiles.getTrashedFileById(f.id);
    expect(trashed.itemStatus).toBe('trashed');
    const restored = await client.trashedFiles.restoreFileFromTrash(f.id);
    expect(restored.itemStatus).toBe('active');

    const versions = await client.fileVersions.getFileVersions(f.id);
    const v1 = versions.entries?.find((v) => v.sha1 === sha1Hex('v1'));
    expect(v1).toBeDefined();
    const promoted = await client.fileVersions.promoteFileVersion(f.id, { requestBody: { id: v1!.id, type: 'file_version' } });
    expect(promoted.sha1).toBe(sha1Hex('v1'));
    expect((await client.files.getFileById(f.id)).sha1).toBe(sha1Hex('v1'));
  });

  it('reads events and gets a long poll woken by a change (EventStream)', async () => {
    // Drain the stream from the start, as a client must: a short page does not mean the end, an empty one does.
    const types = new Set<string | undefined>();
    let position = '0';
    for (let page = 0; page < 50; page++) {
      const chunk = await client.events.getEvents({ streamPosition: position, streamType: 'changes', limit: 500 });
      for (const e of chunk.entries ?? []) types.add(e.eventType);
      position = String(chunk.nextStreamPosition);
      if ((chunk.chunkSize ?? 0) === 0) break;
    }
    for (const t of ['ITEM_CREATE', 'ITEM_UPLOAD', 'ITEM_MOVE', 'ITEM_RENAME', 'ITEM_TRASH', 'ITEM_UNDELETE_VIA_TRASH', 'ITEM_MAKE_CURRENT_VERSION']) {
      expect(types, `events seen: ${[...types].join(',')}`).toContain(t);
    }
    const now = await client.events.getEvents({ streamPosition: 'now' });
    expect(now.entries ?? []).toHaveLength(0);

    const stream = client.events.getEventStream({ streamPosition: String(now.nextStreamPosition), streamType: 'changes' });
    const seen: Event[] = [];
    const errors: unknown[] = [];
    stream.on('data', (e: Event) => seen.push(e));
    stream.on('error', (e: unknown) => errors.push(e));
    try {
      // Wait until the SDK has asked for the realtime server: it long-polls right after.
      await waitFor(() => srv.control.requests().some((r) => r.method === 'OPTIONS' && r.path.endsWith('/events')), { what: 'OPTIONS /events from the SDK' });
      const startedMs = Date.now();
      const woke = srv.control.as('1').createFolder('0', 'made-on-the-web');
      const ev = await waitFor(() => seen.find((e) => e.source !== undefined && (e.source as { id?: string }).id === woke.id), {
        timeoutMs: LONG_POLL_TIMEOUT_MS / 3,
        what: 'the ITEM_CREATE event through the long poll',
      });
      expect(ev.eventType).toBe('ITEM_CREATE');
      expect(Date.now() - startedMs).toBeLessThan(LONG_POLL_TIMEOUT_MS);
      expect(errors).toEqual([]);
    } finally {
      stream.destroy();
    }
  });

  it('with event chaos on, raw pages repeat and reorder events, and the SDK EventStream still yields each once', async () => {
    const start = await client.events.getEvents({ streamPosition: 'now' });
    srv.control.setEventChaos({ duplicate: true, reorder: true });
    const stream = client.events.getEventStream({ streamPosition: String(start.nextStreamPosition), streamType: 'changes' });
    const seen: Event[] = [];
    const errors: unknown[] = [];
    stream.on('data', (e: Event) => seen.push(e));
    stream.on('error', (e: unknown) => errors.push(e));
    try {
      const actor = srv.control.as('1');
      const made = Array.from({ length: 5 }, (_, i) => actor.createFolder('0', `chaos-${i}`).id);
      const raw = await client.events.getEvents({ streamPosition: String(start.nextStreamPosition), streamType: 'changes' });
      const ids = (raw.entries ?? []).map((e) => e.eventId);
      expect(new Set(ids).size, 'chaos must repeat at least one event in a page').toBeLessThan(ids.length);
      const mine = (e: Event): string | undefined => {
        const id = (e.source as { id?: string } | undefined)?.id;
        return e.eventType === 'ITEM_CREATE' && id !== undefined && made.includes(id) ? id : undefined;
      };
      await waitFor(() => new Set(seen.map(mine).filter(Boolean)).size === made.length, { timeoutMs: 10_000, what: 'all five ITEM_CREATE events through the SDK stream' });
      const counts = new Map<string, number>();
      for (const e of seen) {
        const id = mine(e);
        if (id) counts.set(id, (counts.get(id) ?? 0) + 1);
      }
      expect([...counts.values()]).toEqual([1, 1, 1, 1, 1]);
      expect(errors).toEqual([]);
    } finally {
      srv.control.setEventChaos({});
      stream.destroy();
    }
  });

  it('OAuth 2.0 through the SDK: authorize, code grant, API call, rotating refresh, revoke', async () => {
    srv.control.registerOAuthClient({ clientId: 'sdk-app', clientSecret: 'sdk-secret', redirectUris: ['http://localhost:7/cb'] });
    const oauth = new BoxOAuth({ config: new OAuthConfig({ clientId: 'sdk-app', clientSecret: 'sdk-secret' }) });
    const oauthClient = new BoxClient({ auth: oauth }).withCustomBaseUrls(baseUrlsOf(srv));
    // The SDK builds the authorize URL on account.box.com; its query is what a browser would carry to us.
    const authorize = new URL(oauth.getAuthorizeUrl({ redirectUri: 'http://localhost:7/cb', state: 'st-1' }));
    const approve = await fetch(srv.authorizeUrl, { method: 'POST', body: authorize.searchParams, redirect: 'manual' });
    expect(approve.status).toBe(302);
    const back = new URL(String(approve.headers.get('location')));
    expect(back.searchParams.get('state')).toBe('st-1');
    const first = await oauth.getTokensAuthorizationCodeGrant(String(back.searchParams.get('code')), oauthClient.networkSession);
    expect(first.accessToken).toBeTypeOf('string');
    expect((await oauthClient.users.getUserMe()).id).toBe('1');

    const second = await oauth.refreshToken(oauthClient.networkSession);
    expect(second.refreshToken).not.toBe(first.refreshToken);
    expect((await oauthClient.users.getUserMe()).id).toBe('1');
    const replay = await fetch(srv.tokenUrl, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: String(first.refreshToken), client_id: 'sdk-app', client_secret: 'sdk-secret' }),
    });
    expect(replay.status).toBe(400);
    expect(((await replay.json()) as { error?: string }).error).toBe('invalid_grant');

    await oauth.revokeToken(oauthClient.networkSession);
    const revoked = await fetch(`${srv.apiUrl}/users/me`, { headers: { Authorization: `Bearer ${String(second.accessToken)}` } });
    expect(revoked.status).toBe(401);
  });

  it('locks and unlocks; creates a shared link', async () => {
    const folder = await client.folders.createFolder({ name: 'sdk-lock', parent: { id: '0' } });
    const f = (await client.uploads.uploadFile({ attributes: { name: 'l.txt', parent: { id: folder.id } }, file: Readable.from([Buffer.from('lock')]) })).entries![0]!;
    const locked = await client.files.updateFileById(f.id, { requestBody: { lock: { access: 'lock', isDownloadPrevented: true } }, queryParams: { fields: ['lock'] } });
    expect(locked.lock?.type).toBe('lock');
    expect(locked.lock?.isDownloadPrevented).toBe(true);
    const unlocked = await client.files.updateFileById(f.id, { requestBody: { lock: null }, queryParams: { fields: ['lock'] } });
    expect(unlocked.lock ?? null).toBeNull();

    const shared = await client.sharedLinksFiles.addShareLinkToFile(f.id, { sharedLink: { access: 'open' } }, { fields: 'shared_link' });
    expect(shared.sharedLink?.url).toMatch(/^http/);
    expect(shared.sharedLink?.access).toBe('open');
    const again = await client.sharedLinksFiles.getSharedLinkForFile(f.id, { fields: 'shared_link' });
    expect(again.sharedLink?.url).toBe(shared.sharedLink?.url);
  });
});
