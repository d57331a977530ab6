/**
 * The compare bench's measurements on Box's own wire and under Box's limits (compare.bench.ts uses them):
 *
 * - Box's wire (issue 30, "memory on the same wire"): box-server started as Box in this process (`startAsBox`, what
 *   `boxsync server --as-box` runs: HTTPS for Box's host names signed by a local CA, a loopback CONNECT proxy), and
 *   two clients that reach it only through HTTPS_PROXY, believing they talk to Box: rclone's Box backend (`rclone
 *   copy box:FOLDER DEST`, the token as the remote's access_token, `--ca-cert`, as test/box-server/rclone.test.ts
 *   drives it) and `boxsync sync --once` with the default config and no `remote` section at all (Box's own URLs),
 *   trusting the CA through NODE_EXTRA_CA_CERTS. Both run over TLS, both pay Box's two requests per download.
 * - API calls (issue 29): box-server's request log, read and emptied every 20 ms while a client runs (it keeps the
 *   last 2,000 requests; a read that finds it full marks the count as a lower bound). An API call is a request to an
 *   API route (under /2.0 or /api/2.0, 429s included, counted apart too); pre-signed download URLs (/dl/...), zip
 *   content URLs and the long-poll URL are not API calls, as on Box and as box-server's `boxLimits` counts them.
 */
import { writeFile } from 'node:fs/promises';
import { startAsBox, type AsBoxServer } from '../../src/box-server/as-box.js';
import { requestLogCapacity } from '../../src/box-server/core.js';
import type { BoxServer } from '../../src/box-server/index.js';
import { writeBoxConfig } from '../support/box-config.js';
import { measureCommand, measureSync, type Measured } from './sync.bench.js';

export interface RequestCount {
  /** Requests to API routes (429s included). */
  readonly apiCalls: number;
  /** Of those, the ones answered 429. */
  readonly refused: number;
  /** Every other request: download URLs, zip content, long polls. */
  readonly other: number;
  /** false when the request log filled up between two reads (then the counts are lower bounds). */
  readonly complete: boolean;
}

const apiRoute = /^\/(?:api\/)?2\.0\//;
/** Zip content URLs live under /2.0 but are pre-signed, not API calls (box-server serves them as open routes). */
const zipContent = /^\/(?:api\/)?2\.0\/zip_downloads\/[^/]+\/content\/?$/;

export function isApiCall(path: string): boolean {
  return apiRoute.test(path) && !zipContent.test(path);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Counts `srv`'s requests from now until `stop()` (which waits 100 ms for the last requests' log lines). */
export function countRequests(srv: BoxServer): { stop(): Promise<RequestCount> } {
  let apiCalls = 0;
  let refused = 0;
  let other = 0;
  let complete = true;
  const drain = (): void => {
    const log = srv.control.requests();
    srv.control.clearRequests();
    if (log.length >= requestLogCapacity) complete = false;
    for (const r of log) {
      if (!isApiCall(r.path)) other++;
      else {
        apiCalls++;
        if (r.status === 429) refused++;
      }
    }
  };
  srv.control.clearRequests();
  const timer = setInterval(drain, 20);
  return {
    async stop() {
      await sleep(100);
      clearInterval(timer);
      drain();
      return { apiCalls, refused, other, complete };
    },
  };
}

/** Runs `measure` while counting `srv`'s requests. */
export async function counted(srv: BoxServer, measure: () => Promise<Measured>): Promise<{ m: Measured; calls: RequestCount }> {
  const c = countRequests(srv);
  try {
    const m = await measure();
    return { m, calls: await c.stop() };
  } catch (e) {
    await c.stop();
    throw e;
  }
}

/** API calls per file, as the table prints it ("≥" when the count is a lower bound). */
export function perFile(c: RequestCount | null | undefined, files: number): string {
  if (!c) return 'n/a';
  return `${c.complete ? '' : '≥'}${(c.apiCalls / files).toFixed(3)}`;
}

/** box-server as Box, in this process, with `token` for user 1. */
export function startWire(token: string): Promise<AsBoxServer> {
  return startAsBox({ port: 0, tokens: [token] });
}

/** What a client of the as-box server needs in its environment: the proxy, and the CA for Node. */
export function wireEnv(box: AsBoxServer): NodeJS.ProcessEnv {
  return { HTTPS_PROXY: box.proxyUrl, https_proxy: box.proxyUrl, NO_PROXY: '', no_proxy: '', NODE_EXTRA_CA_CERTS: box.caCertFile };
}

/** rclone's config file for the Box backend: remote `box`, the developer token as its access_token (mode 0600). */
export async function writeRcloneBoxConfig(file: string, token: string): Promise<void> {
  await writeFile(file, `[box]\ntype = box\naccess_token = ${token}\n`, { mode: 0o600 });
}

/** `rclone copy box:FOLDER DEST` through the as-box proxy, with the same --transfers and --checkers as the http column. */
export function rcloneBoxCopy(box: AsBoxServer, folderPath: string, dest: string, rcloneConfig: string): Promise<Measured> {
  return measureCommand(
    ['rclone', 'copy', `box:${folderPath}`, dest, '--transfers', '8', '--checkers', '16', '--config', rcloneConfig, '--ca-cert', box.caCertFile],
    { ...wireEnv(box), RCLONE_CONFIG: rcloneConfig },
  );
}

/**
 * boxsync's config for the as-box server: the bench's default config (no rate-limit overrides) and no `remote`
 * section, so boxsync uses Box's own URLs, which only the proxy in its environment sends to box-server.
 */
export async function writeWireConfig(file: string, o: { box: AsBoxServer; token: string; remoteId: string; localPath: string; stateDir: string; socketPath: string }): Promise<void> {
  await writeBoxConfig(file, {
    srv: o.box.server,
    token: o.token,
    remoteId: o.remoteId,
    localPath: o.localPath,
    stateDir: o.stateDir,
    socketPath: o.socketPath,
    extra: { rateLimit: undefined, remote: undefined },
  });
}

/** `boxsync sync --once` through the as-box proxy. */
export function measureWireSync(box: AsBoxServer, configFile: string): Promise<Measured> {
  return measureSync(configFile, wireEnv(box));
}
