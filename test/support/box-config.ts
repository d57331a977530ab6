/**
 * A boxsync config file for a test or bench whose Box is box-server `srv`: every endpoint pointed at it, a
 * developer token, one mirrored folder, and Box's per-user rate limits lifted (box-server does not rate-limit;
 * Box's real 1000 calls/min would make a 1,000-file test wait a minute). `folder` is merged into folders[0] and
 * `extra` at the top level, after the defaults, so either may override them. Written with mode 0600, as a file
 * holding a token must be.
 */
import { writeFile } from 'node:fs/promises';
import type { BoxServer } from '../../src/box-server/index.js';

export interface BoxConfigOptions {
  readonly srv: BoxServer;
  readonly token: string;
  readonly remoteId: string;
  readonly localPath: string;
  readonly stateDir: string;
  readonly socketPath: string;
  readonly folder?: Readonly<Record<string, unknown>> | undefined;
  readonly extra?: Readonly<Record<string, unknown>> | undefined;
}

export async function writeBoxConfig(file: string, o: BoxConfigOptions): Promise<void> {
  const config = {
    remote: { apiUrl: o.srv.apiUrl, uploadUrl: o.srv.uploadUrl, tokenUrl: o.srv.tokenUrl, authorizeUrl: o.srv.authorizeUrl },
    auth: { developerToken: o.token },
    folders: [{ remoteId: o.remoteId, localPath: o.localPath, ...o.folder }],
    stateDir: o.stateDir,
    socketPath: o.socketPath,
    rateLimit: { apiCallsPerMinute: 1_000_000, uploadsPerMinute: 1_000_000 },
    ...o.extra,
  };
  await writeFile(file, JSON.stringify(config, null, 2), { mode: 0o600 });
}
