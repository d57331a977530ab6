/**
 * One simulated world: box-server in this process on port 0 (persisting to a data dir, so the checks can read
 * Box's full state, trash and versions included, without asking the engine), a mirror folder, a state dir, an
 * OAuth login (so `expireAllTokens` is a fault the client can recover from, by refreshing), a private HOME, and
 * the real `boxsync` CLI as a child process over real HTTP.
 *
 * Layout of the world's temp dir:
 *   mirror/       the local folder boxsync syncs
 *   state/        boxsync's state dir (journal, lock, local trash, token file, control socket)
 *   home/         HOME and every XDG_* dir of the child: must stay as it was
 *   outside/      a few files next to the mirror: must stay as they were
 *   config.json   must stay as it was
 * box-server's data dir is elsewhere (under /dev/shm when it exists: its fsyncs are then cheap).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBoxServer, type BoxServer, type RecordedRequest, type ServerActor } from '../../src/box-server/index.js';
import { writeBoxConfig } from '../support/box-config.js';
import { cliEntry, repoRoot, type RunAs } from '../support/cli.js';

export const DEV_TOKEN = 'sim-dev-token';
const CLIENT_ID = 'sim-client';
const CLIENT_SECRET = 'sim-client-secret';

export interface World {
  readonly srv: BoxServer;
  readonly web: ServerActor;
  readonly remoteRootId: string;
  readonly dir: string;
  readonly mirror: string;
  readonly stateDir: string;
  readonly home: string;
  readonly outside: string;
  readonly configFile: string;
  readonly boxDataDir: string;
  readonly env: NodeJS.ProcessEnv;
  close(): Promise<void>;
}

export async function startWorld(opts: { transferConcurrency: number; planWindowEntries?: number }): Promise<World> {
  const dir = await mkdtemp(join(tmpdir(), 'boxsync-sim-'));
  const shm = '/dev/shm';
  const boxDataDir = await mkdtemp(join(existsSync(shm) ? shm : tmpdir(), 'boxsync-sim-box-'));
  const srv = await startBoxServer({ port: 0, tokens: [DEV_TOKEN], dataDir: boxDataDir, longPollTimeoutMs: 1000, chunkedPartSizeBytes: 4 * 1024 * 1024 });
  const web = srv.control.as('1');
  const remoteRootId = web.createFolder('0', 'Sim').id;
  const mirror = join(dir, 'mirror');
  const stateDir = join(dir, 'state');
  const home = join(dir, 'home');
  const outside = join(dir, 'outside');
  const configFile = join(dir, 'config.json');
  await mkdir(stateDir, { mode: 0o700 });
  await mkdir(mirror);
  for (const d of ['config', 'data', 'state', 'cache', 'runtime']) await mkdir(join(home, d), { recursive: true, mode: 0o700 });
  await mkdir(outside);
  await writeFile(join(outside, 'keep.txt'), 'a file beside the mirror that boxsync must never touch\n');
  await writeFile(join(outside, 'mirror-lookalike.txt'), 'same prefix as the mirror folder\n');

  const tokenFile = join(stateDir, 'tokens.json');
  await login(srv, tokenFile);

  await writeBoxConfig(configFile, {
    srv,
    token: 'unused',
    remoteId: remoteRootId,
    localPath: mirror,
    stateDir,
    socketPath: join(stateDir, 'control.sock'),
    extra: {
      auth: { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, tokenFile },
      // Small trees: a scenario that deletes two of four files is not a mass delete.
      safety: { maxDeletes: 100_000, maxDeleteFraction: 1 },
      transferConcurrency: opts.transferConcurrency,
      ...(opts.planWindowEntries === undefined ? {} : { planWindowEntries: opts.planWindowEntries }),
      localTrash: { mode: 'state', retentionDays: 30 },
    },
  });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home,
    XDG_CONFIG_HOME: join(home, 'config'),
    XDG_DATA_HOME: join(home, 'data'),
    XDG_STATE_HOME: join(home, 'state'),
    XDG_CACHE_HOME: join(home, 'cache'),
    XDG_RUNTIME_DIR: join(home, 'runtime'),
    BOXSYNC_LOG_LEVEL: process.env.BOXSYNC_SIM_LOG_LEVEL ?? 'warn',
  };
  for (const k of Object.keys(env)) if (k.startsWith('BOXSYNC_') && k !== 'BOXSYNC_LOG_LEVEL') delete env[k];
  return {
    srv,
    web,
    remoteRootId,
    dir,
    mirror,
    stateDir,
    home,
    outside,
    configFile,
    boxDataDir,
    env,
    async close() {
      await srv.close();
      // BOXSYNC_SIM_KEEP=1 keeps the mirror, state and config of every world for a post-mortem (soak replays).
      if (process.env.BOXSYNC_SIM_KEEP === '1') return;
      await rm(dir, { recursive: true, force: true });
      await rm(boxDataDir, { recursive: true, force: true });
    },
  };
}

/**
 * An OAuth login, as `boxsync login` would leave it: the token file holds an access and a refresh token. Called
 * when the world starts, and again after a fault revoked every token (a user logging in afresh).
 */
export async function login(srv: BoxServer, tokenFile: string): Promise<void> {
  srv.control.registerOAuthClient({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, userId: '1' });
  const code = srv.control.issueAuthCode(CLIENT_ID);
  const res = await fetch(srv.tokenUrl, {
    method: 'POST',
    body: new URLSearchParams({ grant_type: 'authorization_code', code, client_id: CLIENT_ID, client_secret: CLIENT_SECRET }),
  });
  if (!res.ok) throw new Error(`sim: OAuth code exchange failed: ${res.status} ${await res.text()}`);
  const pair = (await res.json()) as { access_token: string; refresh_token: string; expires_in: number };
  await writeFile(tokenFile, JSON.stringify({ accessToken: pair.access_token, refreshToken: pair.refresh_token, expiresAtMs: Date.now() + pair.expires_in * 1000 }), { mode: 0o600 });
}

/**
 * Rewrite the config's `folders[0].exclude`, as a user editing the file between runs would (a scope change: the
 * simulation checks that it never causes a delete). The caller takes a new fingerprint of what is outside.
 */
export async function setExclude(w: World, patterns: readonly string[]): Promise<void> {
  const config = JSON.parse(await readFile(w.configFile, 'utf8')) as { folders: Array<Record<string, unknown>> };
  config.folders[0]!['exclude'] = patterns;
  await writeFile(w.configFile, JSON.stringify(config, null, 2));
}

/** What ends a child early: the Nth request of a class in box-server's log, or a delay. */
export type KillTrigger =
  | { readonly kind: 'request'; readonly match: RequestClass; readonly n: number }
  | { readonly kind: 'delay'; readonly ms: number };

export type RequestClass = 'any' | 'list' | 'download' | 'upload' | 'session-part' | 'commit' | 'write' | 'events';

export function classify(r: RecordedRequest): RequestClass[] {
  const out: RequestClass[] = ['any'];
  const p = r.path;
  if (r.method === 'GET' && (/\/files\/[^/]+\/content$/.test(p) || p.startsWith('/dl/'))) out.push('download');
  if (r.method === 'GET' && /\/folders\/[^/]+(\/items)?$/.test(p)) out.push('list');
  if (r.method === 'GET' && /\/events$/.test(p)) out.push('events');
  if (r.method === 'POST' && /\/files(\/[^/]+)?\/content$/.test(p)) out.push('upload');
  if (r.method === 'PUT' && /\/upload_sessions\/[^/]+$/.test(p)) out.push('session-part', 'upload');
  if (r.method === 'POST' && /\/upload_sessions\/[^/]+\/commit$/.test(p)) out.push('commit', 'upload');
  if ((r.method === 'PUT' || r.method === 'DELETE' || r.method === 'POST') && /\/(files|folders)(\/[^/]+)?$/.test(p)) out.push('write');
  return out;
}

export function describeTrigger(t: KillTrigger): string {
  return t.kind === 'delay' ? `after ${t.ms} ms` : `after request #${t.n} of class ${t.match}`;
}

export interface ChildRun {
  readonly command: string;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** True when the trigger fired and the child died of SIGKILL (a kill point survived, if the world converges). */
  readonly killed: boolean;
  readonly killNote: string;
  readonly ms: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly requests: readonly RecordedRequest[];
}

/**
 * Run `boxsync <args> --config FILE` as a child. With a trigger, box-server's request log is polled every few ms
 * and the child gets SIGKILL right after the chosen request was answered (or after the delay). Without one, the
 * child runs to its end (bounded by `timeoutMs`, after which it is killed and reported).
 */
export async function runChild(
  w: World,
  args: readonly string[],
  o: { trigger?: KillTrigger; timeoutMs?: number; during?: () => Promise<void>; as?: RunAs } = {},
): Promise<ChildRun> {
  w.srv.control.clearRequests();
  const started = Date.now();
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', cliEntry, ...args, '--config', w.configFile], {
    cwd: repoRoot,
    env: w.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(o.as ? { uid: o.as.uid, gid: o.as.gid } : {}),
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  let exited = false;
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => {
      exited = true;
      resolve({ code, signal });
    }),
  );
  let fired = false;
  let killNote = '';
  const fire = (note: string): void => {
    if (exited || fired) return;
    fired = true;
    killNote = note;
    child.kill('SIGKILL');
  };
  const timers: NodeJS.Timeout[] = [];
  const t = o.trigger;
  if (t?.kind === 'delay') timers.push(setTimeout(() => fire(describeTrigger(t)), t.ms));
  if (t?.kind === 'request') {
    const poll = setInterval(() => {
      let seen = 0;
      for (const r of w.srv.control.requests()) {
        if (!classify(r).includes(t.match)) continue;
        seen += 1;
        if (seen >= t.n) {
          fire(`${describeTrigger(t)}: ${r.method} ${r.path} ${r.status}`);
          break;
        }
      }
    }, 3);
    timers.push(poll);
  }
  // Work done while the child runs (the daemon scenarios' operations); awaited before the result is returned.
  // A rejection is kept, not left unhandled while the child still runs, and rethrown once the child is gone.
  const during: Promise<unknown> = (o.during ? o.during() : Promise.resolve()).then(
    () => undefined,
    (e: unknown) => e ?? new Error('during() rejected'),
  );
  let timedOut = false;
  timers.push(
    setTimeout(() => {
      if (exited) return;
      timedOut = true;
      child.kill('SIGKILL');
    }, o.timeoutMs ?? 60_000),
  );
  const { code, signal } = await closed;
  const duringError = await during;
  if (duringError !== undefined) throw duringError;
  for (const tm of timers) clearTimeout(tm);
  if (timedOut) stderr += `\n[sim] the child did not exit within ${o.timeoutMs ?? 60_000} ms and was killed\n`;
  return {
    command: `boxsync ${args.join(' ')}`,
    code: timedOut ? null : code,
    signal,
    killed: fired && signal === 'SIGKILL',
    killNote,
    ms: Date.now() - started,
    stdout,
    stderr,
    requests: w.srv.control.requests(),
  };
}
