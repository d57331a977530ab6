/**
 * Harness for the `sync --once` end-to-end tests: box-server in this process on port 0, a real temp folder with a
 * mirror, a state dir and a config file, and the real CLI as a child process (test/support/cli.ts).
 *
 * `env.sync()` runs `boxsync sync --once --config FILE` and returns the child's exit code and output. Everything the
 * tests assert on comes from the real disk, the server's control API, or the server's request log.
 */
import { lstat, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import { startBoxServer, type BoxServer, type RecordedRequest, type ServerActor } from '../../src/box-server/index.js';
import { writeBoxConfig } from '../support/box-config.js';
import { runCli, type CliResult, type RunAs } from '../support/cli.js';
import { makeTempDir } from '../support/tmp.js';

export const TOKEN = 'e2e-secret-token-T';

export interface SyncEnv {
  readonly srv: BoxServer;
  /** The web user: makes "web" changes on Box. */
  readonly web: ServerActor;
  readonly dir: string;
  readonly mirror: string;
  readonly stateDir: string;
  readonly configFile: string;
  /** Write (or rewrite) the config; `extra` is merged at the top level, `folder` into folders[0]. */
  writeConfig(opts?: { extra?: Record<string, unknown>; folder?: Record<string, unknown> }): Promise<void>;
  sync(args?: readonly string[], opts?: { env?: NodeJS.ProcessEnv; timeoutMs?: number; as?: RunAs }): Promise<CliResult>;
  /** `sync(args)`, failing the test with an account of the run (see `explain`) unless it exits 0. */
  syncOk(args?: readonly string[]): Promise<CliResult>;
  close(): Promise<void>;
}

export interface SyncEnvOptions {
  readonly sample?: boolean;
  /** Box folder to mirror (default: a fresh folder "Mirror" under the account root, so tests do not share). */
  readonly remoteId?: string;
  readonly chunkedPartSizeBytes?: number;
}

export async function startSyncEnv(opts: SyncEnvOptions = {}): Promise<SyncEnv & { readonly remoteRootId: string }> {
  const srv = await startBoxServer({
    port: 0,
    tokens: [TOKEN],
    sample: opts.sample ?? false,
    longPollTimeoutMs: 1000,
    ...(opts.chunkedPartSizeBytes !== undefined ? { chunkedPartSizeBytes: opts.chunkedPartSizeBytes } : {}),
  });
  const web = srv.control.as('1');
  const remoteRootId = opts.remoteId ?? web.createFolder('0', 'Mirror').id;
  const tmp = await makeTempDir('boxsync-e2e-');
  const mirror = join(tmp.dir, 'mirror');
  const stateDir = join(tmp.dir, 'state');
  const configFile = join(tmp.dir, 'config.json');
  const writeConfig: SyncEnv['writeConfig'] = async (o = {}) => {
    await writeBoxConfig(configFile, {
      srv,
      token: TOKEN,
      remoteId: remoteRootId,
      localPath: mirror,
      stateDir,
      socketPath: join(tmp.dir, 'control.sock'),
      folder: o.folder,
      extra: o.extra,
    });
  };
  await writeConfig();
  const sync: SyncEnv['sync'] = (args = [], o = {}) =>
    runCli(['sync', '--once', '--config', configFile, ...args], {
      env: { BOXSYNC_LOG_LEVEL: 'warn', ...o.env },
      timeoutMs: o.timeoutMs ?? 90_000,
      ...(o.as ? { as: o.as } : {}),
    });
  return {
    srv,
    web,
    remoteRootId,
    dir: tmp.dir,
    mirror,
    stateDir,
    configFile,
    writeConfig,
    sync,
    async syncOk(args) {
      const r = await sync(args);
      expect(r.code, explain(r)).toBe(0);
      return r;
    },
    close: async () => {
      await srv.close();
      await tmp.cleanup();
    },
  };
}

/** Every file and folder under `dir`, relative, '/'-separated, sorted; folders end in '/'. */
export async function listTree(dir: string, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(join(dir, prefix), { withFileTypes: true })) {
    const rel = prefix === '' ? e.name : `${prefix}/${e.name}`;
    if (e.isDirectory()) {
      out.push(`${rel}/`);
      out.push(...(await listTree(dir, rel)));
    } else {
      out.push(rel);
    }
  }
  return out.sort();
}

export async function readText(path: string): Promise<string> {
  return readFile(path, 'utf8');
}

export async function writeText(path: string, content: string | Buffer): Promise<void> {
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, content);
}

export async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}

/** Requests that moved file content: downloads (GET .../content) and uploads (POST of content or session parts). */
export function contentRequests(srv: BoxServer): { readonly downloads: RecordedRequest[]; readonly uploads: RecordedRequest[] } {
  const reqs = srv.control.requests();
  return {
    downloads: reqs.filter((r) => r.method === 'GET' && /\/files\/[^/]+\/content$/.test(r.path)),
    uploads: reqs.filter(
      (r) =>
        (r.method === 'POST' && /\/files(\/[^/]+)?\/content$/.test(r.path)) ||
        (r.method !== 'GET' && /\/upload_sessions(\/[^/]+)?$/.test(r.path)),
    ),
  };
}

/** Item-changing requests on Box (moves/renames are PUT on the item, trash is DELETE). */
export function writeRequests(srv: BoxServer): RecordedRequest[] {
  return srv.control.requests().filter((r) => r.method !== 'GET' && r.method !== 'OPTIONS');
}

/** The last non-empty line of stdout: the one-line summary. */
export function summaryLine(r: CliResult): string {
  const lines = r.stdout.split('\n').filter((l) => l.trim() !== '');
  return lines[lines.length - 1] ?? '';
}

/** A readable account of a run, for assertion messages. */
export function explain(r: CliResult): string {
  return `exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr.slice(-4000)}`;
}
