/**
 * The real daemon as a child process against box-server on port 0 (in the test process), with a real temp
 * mirror, a real SQLite journal and its control socket. Web-side changes go through box-server's control actor.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { startBoxServer, type BoxServer, type BoxServerOptions, type ServerActor } from '../../src/box-server/index.js';
import { sendControl } from '../../src/daemon/control/control-client.js';
import type { DaemonStatus } from '../../src/daemon/control/control-protocol.js';
import { writeBoxConfig } from '../support/box-config.js';
import { spawnCli, type RunAs } from '../support/cli.js';
import { makeTempDir } from '../support/tmp.js';
import { waitFor } from '../support/wait.js';

export interface DaemonRun {
  readonly child: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
}

export interface Harness {
  readonly srv: BoxServer;
  readonly web: ServerActor;
  readonly dir: string;
  readonly mirror: string;
  readonly rootId: string;
  readonly socketPath: string;
  readonly configFile: string;
  /** `boxsync daemon --config FILE ...args` with `env` added to this process's environment. */
  start(env?: NodeJS.ProcessEnv, args?: readonly string[], as?: RunAs): Promise<DaemonRun>;
  /** The daemon started as `start` does, without waiting for its first pass. */
  launch(env?: NodeJS.ProcessEnv, args?: readonly string[], as?: RunAs): DaemonRun;
  status(): Promise<DaemonStatus>;
  /** Wait until a pass finished after now and the daemon is idle. */
  settled(timeoutMs?: number): Promise<DaemonStatus>;
  stop(run: DaemonRun): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  close(): Promise<void>;
}

export async function createHarness(opts: { server?: BoxServerOptions; config?: Record<string, unknown> } = {}): Promise<Harness> {
  const { dir, cleanup } = await makeTempDir('boxsync-d-');
  const srv = await startBoxServer({ port: 0, tokens: ['T'], longPollTimeoutMs: 3000, ...opts.server });
  const web = srv.control.as('1');
  const rootId = web.createFolder('0', 'Mirror').id;
  const mirror = join(dir, 'Box');
  await mkdir(mirror);
  const socketPath = join(dir, 'c.sock');
  const configFile = join(dir, 'config.json');
  await writeBoxConfig(configFile, {
    srv,
    token: 'T',
    remoteId: rootId,
    localPath: mirror,
    stateDir: join(dir, 'state'),
    socketPath,
    extra: { log: { level: 'info' }, ...opts.config },
  });
  const runs: DaemonRun[] = [];

  const h: Harness = {
    srv,
    web,
    dir,
    mirror,
    rootId,
    socketPath,
    configFile,
    launch(env = {}, args = [], as) {
      const child = spawnCli(['daemon', '--config', configFile, ...args], { env: { BOXSYNC_SYNC_CHECK_SEC: '3', BOXSYNC_UI_PORT: '0', ...env }, ...(as ? { as } : {}) });
      let out = '';
      child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.on('close', (code, signal) => r({ code, signal })));
      const run: DaemonRun = { child, exited, output: () => out };
      runs.push(run);
      return run;
    },
    async start(env = {}, args = [], as) {
      const run = h.launch(env, args, as);
      const { child } = run;
      await waitFor(
        async () => {
          if (child.exitCode !== null) throw new Error(`daemon exited early (${child.exitCode}):\n${run.output()}`);
          const s = await h.status().catch(() => null);
          return s && s.engine.lastSuccessfulSyncAtMs !== null && s.engine.phase === 'idle' ? s : null;
        },
        { timeoutMs: 60_000, intervalMs: 100, what: 'the daemon to finish its first pass' },
      ).catch((e: unknown) => {
        throw new Error(`${String(e)}\n--- daemon output ---\n${run.output()}`);
      });
      return run;
    },
    status: () => sendControl<DaemonStatus>(socketPath, { verb: 'status' }),
    // A pass that starts after this call (count the passes before asking for one, when it may end first).
    async settled(timeoutMs = 30_000) {
      const before = (await h.status()).passes;
      return waitFor(
        async () => {
          const s = await h.status();
          return s.passes > before && s.engine.phase === 'idle' ? s : null;
        },
        { timeoutMs, what: 'a pass to finish' },
      );
    },
    async stop(run) {
      if (run.child.exitCode === null && run.child.signalCode === null) run.child.kill('SIGTERM');
      return run.exited;
    },
    async close() {
      for (const r of runs) {
        if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill('SIGKILL');
        await r.exited;
      }
      await srv.close();
      await cleanup();
    },
  };
  return h;
}

/** A box-server request held open by its fault hook until `release()`: the next `method` request to `path`. */
export function holdRequest(srv: BoxServer, method: string, path: string): { readonly started: () => boolean; readonly release: () => void } {
  let started = false;
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  srv.control.failNext({
    method,
    path,
    hook: async () => {
      started = true;
      await held;
    },
  });
  return { started: () => started, release };
}
