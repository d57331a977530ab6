/** Two in-memory streams (a run's stdout and stderr) and what has been written to each. */
import { PassThrough } from 'node:stream';

export function capturedStreams(): { streams: { tty: false; out: PassThrough; err: PassThrough }; out: () => string; err: () => string } {
  const out = new PassThrough();
  const err = new PassThrough();
  let o = '';
  let e = '';
  out.on('data', (d: Buffer) => (o += d.toString()));
  err.on('data', (d: Buffer) => (e += d.toString()));
  return { streams: { tty: false, out, err }, out: () => o, err: () => e };
}
