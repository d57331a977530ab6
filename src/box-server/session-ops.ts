/**
 * Chunked upload sessions. Parts are written straight into one sparse session file at their offsets (so a
 * 10 GB upload never sits in memory or gets copied part by part); each part is hashed as it streams and checked
 * against its `Digest` and the part grid. Commit checks the parts list and the whole-file SHA-1, then adopts
 * the session file as the new file's (or version's) blob. Sessions expire after 7 days.
 */
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, createReadStream, createWriteStream, openSync, rmSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BoxError } from './box-error.js';
import { HashingCounter } from './blob-store.js';
import type { PartRec, SessionRec } from './state.js';
import type { Store } from './store.js';

export const minSessionFileBytes = 20_000_000;
export const sessionLifetimeMs = 7 * 86_400_000;

export function openSession(store: Store, init: Omit<SessionRec, 'id' | 'expiresAtMs' | 'parts' | 'committedFileId' | 'totalParts'>): SessionRec {
  const id = randomBytes(16).toString('hex').toUpperCase();
  const s: SessionRec = {
    ...init,
    id,
    totalParts: Math.ceil(init.fileSizeBytes / init.partSizeBytes),
    expiresAtMs: store.now() + sessionLifetimeMs,
    parts: [],
    committedFileId: null,
  };
  closeSync(openSync(store.blobs.sessionPath(id), 'w'));
  store.state.sessions[id] = s;
  store.markDirty();
  return s;
}

export function dropSession(store: Store, s: SessionRec): void {
  rmSync(store.blobs.sessionPath(s.id), { force: true });
  delete store.state.sessions[s.id];
  store.markDirty();
}

/** The live session, or 404; an expired one is dropped and answers 410 session_expired. */
export function liveSession(store: Store, id: string, userId: string): SessionRec {
  const s = Object.hasOwn(store.state.sessions, id) ? store.state.sessions[id] : undefined;
  if (!s) throw new BoxError(404, 'not_found', `No upload session ${id}`);
  if (s.expiresAtMs <= store.now()) {
    dropSession(store, s);
    throw new BoxError(410, 'session_expired', 'The upload session has expired; start a new one');
  }
  if (s.userId !== userId) throw new BoxError(403, 'forbidden', 'Only the user who created the upload session may use it');
  return s;
}

export function expireAllSessions(store: Store): void {
  for (const s of Object.values(store.state.sessions)) s.expiresAtMs = store.now() - 1;
  store.markDirty();
}

/** `sha=<base64>` (either case) to hex, or 400. */
export function digestHex(header: string | string[] | undefined, what: string): string {
  const h = Array.isArray(header) ? header[0] : header;
  const m = /^\s*sha=([A-Za-z0-9+/=]+)\s*$/i.exec(h ?? '');
  const hex = m ? Buffer.from(m[1]!, 'base64').toString('hex') : '';
  if (hex.length !== 40) throw new BoxError(400, 'bad_request', `${what} needs a Digest header "sha=<base64 SHA-1>"; nothing was stored`);
  return hex;
}

function parseContentRange(header: string | undefined, s: SessionRec): { first: number; last: number } {
  const m = /^bytes (\d+)-(\d+)\/(\d+)$/.exec((header ?? '').trim());
  if (!m) throw new BoxError(400, 'bad_request', 'A part needs a Content-Range header "bytes <first>-<last>/<file size>"; nothing was stored');
  const first = Number(m[1]);
  const last = Number(m[2]);
  const total = Number(m[3]);
  const expectedLast = Math.min(first + s.partSizeBytes, s.fileSizeBytes) - 1;
  if (total !== s.fileSizeBytes || first % s.partSizeBytes !== 0 || first >= s.fileSizeBytes || last !== expectedLast) {
    throw new BoxError(416, 'range_not_satisfiable', `Content-Range ${header ?? ''} does not fit the session: parts start at multiples of ${s.partSizeBytes} and are that long except the last; file size ${s.fileSizeBytes}`);
  }
  return { first, last };
}

export async function writePart(store: Store, s: SessionRec, body: Readable, contentRange: string | undefined, digest: string | string[] | undefined): Promise<PartRec> {
  const { first, last } = parseContentRange(contentRange, s);
  const expectedSha1 = digestHex(digest, 'A part');
  const size = last - first + 1;
  const existing = s.parts.find((p) => p.offset === first);
  if (existing) {
    body.resume();
    if (existing.sha1 === expectedSha1) return existing;
    throw new BoxError(409, 'range_overlaps_existing_part', 'A part with a different content was already uploaded at this offset; parts are immutable');
  }
  const counter = new HashingCounter(size, () => new BoxError(400, 'bad_request', `The part body is longer than its Content-Range (${size} bytes); nothing was stored`));
  try {
    await pipeline(body, counter, createWriteStream(store.blobs.sessionPath(s.id), { flags: 'r+', start: first }));
  } catch (e) {
    body.resume();
    throw e instanceof BoxError ? e : new BoxError(400, 'bad_request', 'The part body could not be read completely; upload the part again');
  }
  if (counter.sizeBytes !== size) throw new BoxError(400, 'bad_request', `The part body has ${counter.sizeBytes} bytes, its Content-Range says ${size}; upload the part again`);
  const sha1 = counter.hash.digest('hex');
  if (sha1 !== expectedSha1) throw new BoxError(400, 'bad_digest', 'The Digest does not match the SHA-1 of the part; upload the part again');
  if (s.parts.some((p) => p.offset === first)) return s.parts.find((p) => p.offset === first)!;
  const part: PartRec = { partId: randomBytes(4).toString('hex').toUpperCase(), offset: first, sizeBytes: size, sha1 };
  s.parts.push(part);
  s.parts.sort((a, b) => a.offset - b.offset);
  store.markDirty();
  return part;
}

/** Throws 400 parts_mismatch unless `listed` names exactly the uploaded parts and they cover the file. */
export function checkPartsList(s: SessionRec, listed: unknown): void {
  if (!Array.isArray(listed)) throw new BoxError(400, 'bad_request', "The commit body needs 'parts', the list of uploaded parts in offset order");
  const ok =
    s.parts.length === s.totalParts &&
    listed.length === s.parts.length &&
    listed.every((p: unknown, i) => {
      const want = s.parts[i]!;
      const got = (p ?? {}) as Record<string, unknown>;
      return got['part_id'] === want.partId && Number(got['offset'] ?? want.offset) === want.offset && Number(got['size'] ?? want.sizeBytes) === want.sizeBytes && (got['sha1'] === undefined || String(got['sha1']).toLowerCase() === want.sha1);
    });
  if (!ok) {
    throw new BoxError(400, 'parts_mismatch', `The parts list does not match the ${s.parts.length} of ${s.totalParts} parts uploaded; upload the missing parts or send the parts exactly as listed`);
  }
}

export async function wholeFileSha1(store: Store, s: SessionRec): Promise<string> {
  const hash = createHash('sha1');
  for await (const chunk of createReadStream(store.blobs.sessionPath(s.id)) as AsyncIterable<Buffer>) hash.update(chunk);
  return hash.digest('hex');
}
