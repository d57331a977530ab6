import { createServer } from 'node:net';

/** A TCP port free on 127.0.0.1 right now (for a server that must listen on a port chosen in advance). */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}
