/**
 * `boxsync demo-live [--dir DIR] [--check]`: the main job, live, on the embedded default.
 *
 * 1. starts box-server in this process with sample content (persisted under DIR/box-server);
 * 2. writes DIR/config.json (mode 0600) pointing at it, the mirror at DIR/Box;
 * 3. runs the daemon in this process (the same code `boxsync daemon` runs) and prints its status to the
 *    terminal whenever it changes;
 * 4. shows both directions with their latency: a file written on the "web" (box-server) appears in the mirror,
 *    a file written in the mirror appears on box-server;
 * 5. keeps running until Ctrl-C, so edits in either place can be watched (`boxsync status --config ...` works
 *    too). With --check it exits after step 4 (exit 0 when both directions arrived).
 */
import { access, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import { isVerbose } from '../global-options.js';
import type { DaemonStatus } from '../../daemon/control/control-protocol.js';
import { setUpDemo } from './demo-setup.js';

export function register(program: Command): void {
  program
    .command('demo-live')
    .description('Run the daemon live on the embedded default: box-server with sample content, mirrored into a local folder')
    .option('--dir <dir>', 'where to put the mirror, config and state (default: a new temp folder)')
    .option('--check', 'show one change each way with its latency, then stop (for scripts and tests)')
    .action(async (opts: { dir?: string; check?: boolean }, cmd: Command) => {
      process.exitCode = await runDemoLive({ dir: opts.dir, check: opts.check === true, verbose: isVerbose(cmd) });
    });
}

async function runDemoLive(opts: { dir?: string | undefined; check: boolean; verbose: boolean }): Promise<number> {
  const say = (line = ''): void => void process.stdout.write(`${line}\n`);
  const [{ runDaemon }, { composeDaemonParts }, { sendControl }, { formatDaemonStatus }] = await Promise.all([
    import('../../daemon/lifecycle/daemon.js'),
    import('../../daemon/lifecycle/daemon-parts.js'),
    import('../../daemon/control/control-client.js'),
    import('../../daemon/control/status-text.js'),
  ]);
  const { dir, mirror, configFile, socketPath, server } = await setUpDemo({
    dir: opts.dir,
    tempPrefix: 'boxsync-live-',
    longPollTimeoutMs: 30_000,
    logLevel: 'warn',
  });
  say(`box-server with sample content: ${server.baseUrl}`);
  say(`mirror:                         ${mirror}`);
  say(`status from another terminal:   boxsync status --config ${configFile}`);
  say();

  const web = server.control.as('1');
  let result = 0;
  const ready = async (): Promise<void> => {
    const status = (): Promise<DaemonStatus> => sendControl<DaemonStatus>(socketPath, { verb: 'status' });
    await within(60_000, async () => {
      const s = await status();
      return s.engine.lastSuccessfulSyncAtMs !== null && s.watchers.length >= s.engine.roots.length && s.watchers.every((w) => w.health.state !== 'starting');
    });
    process.stdout.write(formatDaemonStatus(await status()));
    say();
    const t0 = Date.now();
    web.uploadFile('0', 'From the web.txt', `Written on box-server at ${new Date().toISOString()}\n`);
    const down = await within(10_000, () => access(join(mirror, 'From the web.txt')).then(() => true, () => false));
    say(`web -> disk:  "From the web.txt" ${down ? `appeared in the mirror after ${Date.now() - t0} ms` : 'did NOT arrive within 10 s'}`);
    const t1 = Date.now();
    await writeFile(join(mirror, 'From this machine.txt'), `Written locally at ${new Date().toISOString()}\n`);
    const up = await within(10_000, async () => web.findByPath('/From this machine.txt') !== null);
    say(`disk -> web:  "From this machine.txt" ${up ? `reached box-server after ${Date.now() - t1} ms` : 'did NOT arrive within 10 s'}`);
    say();
    if (!down || !up) result = 1;
    if (opts.check) {
      process.kill(process.pid, 'SIGTERM');
      return;
    }
    say(`Edit files in ${mirror} and watch them sync; Ctrl-C stops the daemon and box-server.`);
    say('To change the "web" side, call box-server as any Box client would, with the demo token from the config:');
    say(`  TOKEN=$(node -p "require('${configFile}').auth.developerToken")`);
    say(`  curl -H "Authorization: Bearer $TOKEN" -F 'attributes={"name":"hello.txt","parent":{"id":"0"}}' -F file=@/etc/hostname ${server.uploadUrl}/files/content`);
    say(`  curl -H "Authorization: Bearer $TOKEN" ${server.apiUrl}/folders/0/items    # what is on the "web" now`);
    let last = '';
    const timer = setInterval(() => {
      void status()
        .then((s) => {
          const r = s.engine.roots[0];
          const line = `${s.engine.phase}: ${r?.inSync.files ?? 0} files in sync, ${r?.queued.ops ?? 0} queued, ${r?.inFlight.length ?? 0} transferring, ${s.engine.errors.length} errors, ${s.engine.conflicts.length} conflicts`;
          if (line !== last) say(`[${new Date().toLocaleTimeString()}] ${line}`);
          last = line;
        })
        .catch(() => clearInterval(timer));
    }, 1_000);
    timer.unref();
  };

  try {
    const code = await runDaemon({ configPath: configFile, compose: composeDaemonParts(), verbose: opts.verbose, onReady: () => void ready() });
    return code !== 0 ? code : result;
  } finally {
    await server.close();
    say(`The demo folder is kept: ${dir}`);
  }
}

async function within(timeoutMs: number, probe: () => Promise<boolean>): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probe()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}
