/** Streaming SHA-1 of a file (lower-case hex, as Box reports it): never reads a whole file into memory. */
import { createHash } from 'node:crypto';
import type { FsModule } from './fs-module.js';

export async function sha1File(fs: FsModule, absPath: string): Promise<string> {
  const hash = createHash('sha1');
  const stream = fs.createReadStream(absPath, { highWaterMark: 1 << 20 });
  for await (const chunk of stream) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
