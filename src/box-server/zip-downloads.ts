/**
 * Zip downloads, as Box serves them (`POST /zip_downloads`, then the `download_url` and `status_url` it returns):
 *
 * - create checks every item (files and folders the user can see; never the root `0`), counts the files the
 *   archive will hold (at most 10,000: `zip_download_file_count_exceeded_limit`), renames items whose names clash
 *   at the top of the archive (both get a random name with their extension, listed in `name_conflicts`), and
 *   answers 202 with the two URLs and `expires_at`;
 * - the content URL needs no token (like dl.boxcloud.com) and works once: a second GET is 404. It streams a zip
 *   (deflated entries with data descriptors, ZIP64 where sizes need it) holding each file under its path below
 *   the requested item; a requested folder is a folder entry `name/` with its tree; an empty folder is kept. A
 *   file trashed or deleted since the request is skipped (`skipped_file_count`). At most 5 archives stream at once
 *   per user (429 `user_too_many_concurrent_downloads`);
 * - the status URL answers 404 until the content was asked for, then the counts and `state`
 *   (`in_progress`, `succeeded`, `failed`).
 *
 * Archives live in memory only (a restart forgets them, as an expired request would be). The bytes come from
 * box-server's own zip writer (src/box-server/zip-writer.ts: the layout yazl wrote, at a fraction of the CPU).
 */
import { randomBytes } from 'node:crypto';
import { extname } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { BoxError } from './box-error.js';
import { cutAfter } from './download.js';
import type { ServerCore } from './core.js';
import { param, readJson, sendJson, type Ctx } from './http-context.js';
import type { ItemRec } from './state.js';
import type { ZipFaults } from './types.js';
import { api, open, type Route } from './route.js';
import { rootFolderId } from './store.js';
import { visibleTo } from './visibility.js';
import { ZipStream, type ZipPart } from './zip-writer.js';

/** Box: "the limit for an archive is either the Account's upload limit or 10,000 files". */
export const ZIP_MAX_FILES = 10_000;
/** Box: "a maximum of 5 parallel downloads of zip archives per user". */
export const ZIP_MAX_CONCURRENT_PER_USER = 5;
/** How long the URLs stay valid before the download starts (Box: "a few seconds"; generous for slow clients). */
export const ZIP_EXPIRES_MS = 60_000;

interface ZipEntry {
  /** Path inside the archive ('/'-separated); folders end in '/'. */
  readonly path: string;
  readonly item: ItemRec;
}

interface ZipRec {
  readonly id: string;
  readonly userId: string;
  /** Emptied once the content was served (it is served once): only the counts stay, for the status URL. */
  entries: readonly ZipEntry[];
  readonly totalFileCount: number;
  readonly expiresAtMs: number;
  readonly name: string;
  started: boolean;
  downloaded: number;
  skippedFiles: number;
  skippedFolders: number;
  state: 'in_progress' | 'failed' | 'succeeded';
}

const registries = new WeakMap<ServerCore, Map<string, ZipRec>>();
const faultsOf = new WeakMap<ServerCore, ZipFaults>();

/** Test control (BoxServerControl.zipFaults): damage the archives served from now on. */
export function setZipFaults(core: ServerCore, f: ZipFaults | null): void {
  if (f === null) faultsOf.delete(core);
  else faultsOf.set(core, f);
}

function registry(core: ServerCore): Map<string, ZipRec> {
  let r = registries.get(core);
  if (!r) {
    r = new Map();
    registries.set(core, r);
  }
  return r;
}

function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function badRequest(message: string, code = 'bad_request'): BoxError {
  return new BoxError(400, code, message);
}

/** The requested items, checked: an array of {type, id} naming files and folders the caller can see. */
function requestedItems(ctx: Ctx, body: Record<string, unknown>): ItemRec[] {
  const items = body['items'];
  if (!Array.isArray(items) || items.length === 0) throw badRequest("'items' must be a non-empty list of files and folders");
  const store = ctx.core.store;
  const seen = new Set<string>();
  const out: ItemRec[] = [];
  for (const raw of items) {
    if (typeof raw !== 'object' || raw === null) throw badRequest("each of 'items' must be an object with 'type' and 'id'");
    const { type, id } = raw as Record<string, unknown>;
    if (type !== 'file' && type !== 'folder') throw badRequest("each item's 'type' must be 'file' or 'folder'");
    if (typeof id !== 'string' || !/^\d+$/.test(id)) throw badRequest("each item needs a string 'id'");
    if (type === 'folder' && id === rootFolderId) throw badRequest('The root folder (0) cannot be added to a zip archive');
    const item = store.active(type, id);
    if (!visibleTo(store, ctx.userId, item, ctx.sharedRoot)) throw new BoxError(404, 'not_found', `Could not find the specified resource (${type} ${id})`);
    if (seen.has(id)) continue;
    seen.add(id);
    out.push(item);
  }
  return out;
}

/** Top-level names that clash (case-insensitively, as Box's names do) get random names keeping their extension. */
function topNames(items: readonly ItemRec[]): { names: Map<string, string>; conflicts: unknown[][] } {
  const byKey = new Map<string, ItemRec[]>();
  for (const i of items) {
    const k = i.name.toLowerCase();
    byKey.set(k, [...(byKey.get(k) ?? []), i]);
  }
  const names = new Map<string, string>();
  const conflicts: unknown[][] = [];
  for (const group of byKey.values()) {
    if (group.length === 1) {
      names.set(group[0]!.id, group[0]!.name);
      continue;
    }
    const pair: unknown[] = [];
    for (const i of group) {
      const renamed = `${randomBytes(3).toString('hex')}${i.type === 'file' ? extname(i.name) : ''}`;
      names.set(i.id, renamed);
      pair.push({ id: i.id, type: i.type, original_name: i.name, download_name: renamed });
    }
    conflicts.push(pair);
  }
  return { names, conflicts };
}

function entriesOf(ctx: Ctx, items: readonly ItemRec[], names: ReadonlyMap<string, string>): ZipEntry[] {
  const store = ctx.core.store;
  const out: ZipEntry[] = [];
  let files = 0;
  const add = (path: string, item: ItemRec): void => {
    if (item.type === 'file') {
      files += 1;
      if (files > ZIP_MAX_FILES) {
        throw badRequest(`The archive would hold more than ${ZIP_MAX_FILES} files; split the request`, 'zip_download_file_count_exceeded_limit');
      }
      out.push({ path, item });
      return;
    }
    if (item.type !== 'folder') return;
    out.push({ path: `${path}/`, item });
    for (const c of store.children(item.id)) if (visibleTo(store, ctx.userId, c, ctx.sharedRoot)) add(`${path}/${c.name}`, c);
  };
  for (const i of items) add(names.get(i.id) ?? i.name, i);
  return out;
}

async function create(ctx: Ctx): Promise<void> {
  const body = await readJson(ctx);
  const items = requestedItems(ctx, body);
  const { names, conflicts } = topNames(items);
  const entries = entriesOf(ctx, items, names);
  const fileName = typeof body['download_file_name'] === 'string' && body['download_file_name'] !== '' ? body['download_file_name'] : `Box-Download`;
  const id = `${randomBytes(18).toString('base64url')}=${randomBytes(24).toString('base64url')}`;
  const now = ctx.core.store.now();
  const rec: ZipRec = {
    id,
    userId: ctx.userId,
    entries,
    totalFileCount: entries.filter((e) => e.item.type === 'file').length,
    expiresAtMs: now + ZIP_EXPIRES_MS,
    name: `${fileName}.zip`,
    started: false,
    downloaded: 0,
    skippedFiles: 0,
    skippedFolders: 0,
    state: 'in_progress',
  };
  registry(ctx.core).set(id, rec);
  const store = ctx.core.store;
  sendJson(ctx, 202, {
    download_url: `${store.baseUrl('download')}/2.0/zip_downloads/${id}/content`,
    status_url: `${store.baseUrl('api')}/2.0/zip_downloads/${id}/status`,
    expires_at: isoSeconds(rec.expiresAtMs),
    name_conflicts: conflicts,
  });
}

function status(ctx: Ctx): void {
  const rec = registry(ctx.core).get(param(ctx, 0));
  if (!rec || rec.userId !== ctx.userId || !rec.started) {
    throw new BoxError(404, 'not_found', 'No zip download with this id has started; create one with POST /zip_downloads and fetch its download_url first');
  }
  sendJson(ctx, 200, {
    total_file_count: rec.totalFileCount,
    downloaded_file_count: rec.downloaded,
    skipped_file_count: rec.skippedFiles,
    skipped_folder_count: rec.skippedFolders,
    state: rec.state,
  });
}

function streamingFor(core: ServerCore, userId: string): number {
  let n = 0;
  for (const r of registry(core).values()) if (r.userId === userId && r.started && r.state === 'in_progress') n += 1;
  return n;
}

/**
 * Blobs up to this size go into the archive read whole (the writer then decides how: stored when they do not
 * compress, deflated in one call or as a stream); bigger ones are streamed from the store and deflated.
 */
const ZIP_WHOLE_MAX_BYTES = 1024 * 1024;

/**
 * The archive's entries, made as the writer reaches each one (so a file trashed meanwhile is skipped, and counted),
 * with the test faults applied; `downloaded` counts each file once its bytes are in the archive.
 */
function* archiveParts(core: ServerCore, rec: ZipRec): Generator<ZipPart> {
  const store = core.store;
  const faults = faultsOf.get(core);
  const written = (): void => {
    rec.downloaded += 1;
  };
  for (const original of rec.entries) {
    if (faults?.drop?.includes(original.path)) continue;
    const path = faults?.rename?.[original.path] ?? original.path;
    if (original.item.type === 'file' && faults?.corrupt?.includes(original.path)) {
      const v = store.currentVersion(original.item);
      if (v !== null && v.sizeBytes > 0) {
        const bytes = Buffer.from(store.blobs.readAllSync(v.blobId));
        bytes[0] = bytes[0]! ^ 0xff;
        yield { kind: 'bytes', path, mtimeMs: original.item.contentModifiedAtMs, data: bytes, onWritten: written };
        continue;
      }
    }
    const item = store.item(original.item.id);
    const live = item !== undefined && item.status === 'active';
    if (original.item.type === 'folder') {
      if (!live) {
        rec.skippedFolders += 1;
        continue;
      }
      yield { kind: 'folder', path, mtimeMs: item.contentModifiedAtMs };
      continue;
    }
    const v = live ? store.currentVersion(item) : null;
    if (!live || v === null) {
      rec.skippedFiles += 1;
      continue;
    }
    const mtimeMs = item.contentModifiedAtMs;
    if (v.sizeBytes === 0) yield { kind: 'bytes', path, mtimeMs, data: Buffer.alloc(0), onWritten: written };
    // Opened only when the archive reaches this entry: one open blob at a time, whatever the file count.
    else if (v.sizeBytes > ZIP_WHOLE_MAX_BYTES) yield { kind: 'stream', path, mtimeMs, size: v.sizeBytes, open: () => store.blobs.read(v.blobId, 0, v.sizeBytes - 1), onWritten: written };
    else yield { kind: 'bytes', path, mtimeMs, data: store.blobs.readAllSync(v.blobId), onWritten: written };
  }
}

async function content(ctx: Ctx): Promise<void> {
  const core = ctx.core;
  const store = core.store;
  const rec = registry(core).get(param(ctx, 0));
  if (!rec || rec.started || rec.expiresAtMs <= store.now()) {
    throw new BoxError(404, 'not_found', 'This zip download does not exist, has expired or was already downloaded; create a new one with POST /zip_downloads');
  }
  if (streamingFor(core, rec.userId) >= ZIP_MAX_CONCURRENT_PER_USER) {
    throw new BoxError(429, 'user_too_many_concurrent_downloads', `At most ${ZIP_MAX_CONCURRENT_PER_USER} zip archives download at once per user`);
  }
  rec.started = true;
  const zip = new ZipStream(archiveParts(core, rec));
  ctx.res.writeHead(200, {
    'box-request-id': ctx.requestId,
    'Content-Type': 'application/zip',
    'Content-Disposition': `attachment;filename="${rec.name.replace(/["\\\r\n]/g, '_')}";filename*=UTF-8''${encodeURIComponent(rec.name)}`,
  });
  try {
    if (ctx.midBodyReset) await pipeline(zip, cutAfter(ctx, 4096), ctx.res);
    else await pipeline(zip, ctx.res);
    rec.state = 'succeeded';
  } catch {
    // The client went away, a blob could not be read, or the writer refused a name (only a test's rename fault can
    // make one): the archive is cut there, and the status says so.
    rec.state = 'failed';
  }
  rec.entries = [];
}

/** `POST /zip_downloads` and the status URL are API routes; the content URL is an open (pre-signed) one. */
export const zipRoutes: readonly Route[] = [
  open('GET', /^\/(?:api\/)?2\.0\/zip_downloads\/([A-Za-z0-9_=-]+)\/content$/, content),
  api('POST', /^\/zip_downloads$/, create),
  api('GET', /^\/zip_downloads\/([A-Za-z0-9_=-]+)\/status$/, status),
];
