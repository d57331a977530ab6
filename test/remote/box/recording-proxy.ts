/**
 * A transparent HTTP proxy in front of box-server that records which requests carried an Authorization
 * header (box-server's own request log leaves that header out) and rewrites redirect Locations so that the
 * download host is reached through the proxy too.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ProxiedRequest {
  readonly method: string;
  readonly path: string;
  readonly hadAuthorization: boolean;
}

export interface RecordingProxy {
  readonly baseUrl: string;
  readonly seen: ProxiedRequest[];
  close(): Promise<void>;
}

export async function startRecordingProxy(targetBaseUrl: string): Promise<RecordingProxy> {
  const target = new URL(targetBaseUrl);
  const seen: ProxiedRequest[] = [];
  let baseUrl = '';
  const server: Server = createServer((req, res) => {
    seen.push({ method: req.method ?? '', path: (req.url ?? '').split('?')[0]!, hadAuthorization: req.headers.authorization !== undefined });
    const up = request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host } },
      (upRes) => {
        const headers = { ...upRes.headers };
        if (typeof headers.location === 'string') headers.location = headers.location.replace(targetBaseUrl, baseUrl);
        res.writeHead(upRes.statusCode ?? 502, headers);
        upRes.pipe(res);
      },
    );
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
