import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';

/** Lower-case hex SHA-1 of a file, streamed. */
export async function sha1File(path: string): Promise<string> {
  const h = createHash('sha1');
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) h.update(chunk as Buffer);
  return h.digest('hex');
}
