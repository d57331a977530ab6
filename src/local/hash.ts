/**
 * Streaming SHA-1 of a file (lower-case hex, as Box reports it): never reads a whole file into memory. The
 * caller may pass the size it saw (`sizeHintBytes`) so a small file is read with a buffer of about its own size:
 * a 1 MiB read buffer per 1 KiB file made the heap churn through gigabytes on a big tree. The size is only a
 * hint: a file that grew meanwhile is still read to its end (the caller's re-stat tells whether the hash matches
 * a stable state of the file).
 */
import { createHash } from 'node:crypto';
import type { FsModule } from './fs-module.js';

const MIN_CHUNK_BYTES = 16 * 1024;
const MAX_CHUNK_BYTES = 1 << 20;

export async function sha1File(fs: FsModule, absPath: string, sizeHintBytes?: number): Promise<string> {
  const hash = createHash('sha1');
  // +1 so a file of exactly that size ends on the first read instead of needing a second one to see EOF.
  const chunk = sizeHintBytes === undefined ? MAX_CHUNK_BYTES : Math.min(MAX_CHUNK_BYTES, Math.max(MIN_CHUNK_BYTES, sizeHintBytes + 1));
  const stream = fs.createReadStream(absPath, { highWaterMark: chunk });
  for await (const data of stream) hash.update(data as Buffer);
  return hash.digest('hex');
}
