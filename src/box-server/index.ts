/**
 * box-server: a Box API 2.0-compatible HTTP server on one port. API at `/2.0`, uploads at `/api/2.0`, token
 * endpoint at `/oauth2/token`, authorize page at `/api/oauth2/authorize`; download and long-poll URLs are
 * absolute URLs on the same server; test control at `/_control/*`. In memory by default (blobs still stream
 * to a private temp dir), or persisted under `dataDir`.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Auth } from './auth.js';
import { BlobStore } from './blob-store.js';
import { makeControl } from './control.js';
import type { ServerCore } from './core.js';
import { BoxLimits } from './box-limits.js';
import { Faults } from './faults.js';
import { Persistence } from './persistence.js';
import { allRoutes } from './routes.js';
import { createHandler } from './router.js';
import { seedSample } from './sample.js';
import { defaultUserId, newState, Store } from './store.js';
import type { BoxServer, BoxServerOptions } from './types.js';

export type { BoxServer, BoxServerControl, BoxServerOptions, FaultRule, RecordedRequest, ServerActor } from './types.js';

export async function startBoxServer(opts: BoxServerOptions = {}): Promise<BoxServer> {
  const host = opts.host ?? '127.0.0.1';
  const privateDir = opts.dataDir ? null : mkdtempSync(join(tmpdir(), 'box-server-'));
  const rootDir = opts.dataDir ?? privateDir!;
  mkdirSync(rootDir, { recursive: true });
  const persistence = opts.dataDir ? new Persistence(opts.dataDir) : null;
  const loaded = persistence ? persistence.load() : null;
  const state = loaded ?? newState(Date.now());
  let baseUrl = '';
  const store = new Store(state, new BlobStore(rootDir, opts.dataDir !== undefined), persistence, (host) => (host && opts.publicUrls?.[host]) || baseUrl);
  const core: ServerCore = {
    store,
    auth: new Auth(store, opts.accessTokenTtlSec ?? 3600),
    faults: new Faults(),
    boxLimits: opts.boxLimits ? new BoxLimits(opts.boxLimits === true ? {} : opts.boxLimits) : null,
    longPollTimeoutMs: opts.longPollTimeoutMs ?? 60_000,
    chunkedPartSizeBytes: opts.chunkedPartSizeBytes ?? 8_388_608,
    sessionCommitWaitMs: opts.sessionCommitWaitMs ?? 5000,
    logRequests: opts.logRequests ?? false,
    chaos: { duplicate: false, reorder: false },
    commitAccepted: { remaining: 0, retryAfterSec: 1 },
    requestLog: [],
    sessionHashes: new Map(),
    closing: new AbortController(),
  };
  for (const t of opts.tokens ?? []) core.auth.addDeveloperToken(defaultUserId, t);
  if (opts.sample && !loaded) seedSample(store);
  store.snapshot();

  const handler = createHandler(core, allRoutes);
  const serverOpts = { requestTimeout: 0, keepAliveTimeout: 5000 };
  const server: Server = opts.tls
    ? createTlsServer({ ...serverOpts, key: opts.tls.key, cert: opts.tls.cert }, handler)
    : createServer(serverOpts, handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const urlHost = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  baseUrl = `${opts.tls ? 'https' : 'http'}://${urlHost}:${addr.port}`;

  let closed: Promise<void> | null = null;
  return {
    baseUrl,
    apiUrl: `${baseUrl}/2.0`,
    uploadUrl: `${baseUrl}/api/2.0`,
    tokenUrl: `${baseUrl}/oauth2/token`,
    authorizeUrl: `${baseUrl}/api/oauth2/authorize`,
    control: makeControl(core),
    close() {
      closed ??= (async () => {
        core.closing.abort();
        store.flush();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        store.snapshot();
        if (privateDir) rmSync(privateDir, { recursive: true, force: true });
      })();
      return closed;
    },
  };
}
