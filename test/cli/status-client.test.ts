/**
 * `boxsync status` and the control verbs as a real child process, talking to a control socket served from
 * the test (the full daemon behind it is covered by test/daemon/daemon-e2e.test.ts).
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ControlRequest, DaemonStatus, PathStatus } from '../../src/daemon/control/control-protocol.js';
import { startControlServer, type ControlServer } from '../../src/daemon/control/control-server.js';
import { asRelPath, asRemoteId, asRootId } from '../../src/core/model.js';
import { repoRoot, runCli } from '../support/cli.js';
import { makeTempDir } from '../support/tmp.js';

function sampleStatus(nowMs: number): DaemonStatus {
  const root = asRootId('r1');
  return {
    pid: 4242,
    startedAtMs: nowMs - 90_000,
    configFile: '/home/me/.config/boxsync/config.json',
    stopping: false,
    engine: {
      phase: 'transferring',
      roots: [
        {
          root,
          localPath: '/home/me/Box',
          remoteId: asRemoteId('123'),
          inSync: { files: 10, folders: 2, bytes: 2048 },
          queued: { ops: 3, bytes: 5 * 1024 * 1024 },
          inFlight: [{ root, path: asRelPath('big.iso'), direction: 'up', doneBytes: 50, totalBytes: 200, startedAtMs: nowMs - 1000 }],
          rateBytesPerSec: 1024 * 1024,
          etaSec: 7,
        },
      ],
      conflicts: [{ root, path: asRelPath('a.txt'), copy: asRelPath('a (conflicted copy).txt'), atMs: nowMs - 5000 }],
      errors: [
        { root, path: asRelPath('bad:name'), code: 'name-invalid', message: 'Box refuses this name', nextRetryAtMs: null, sinceMs: new Date(2026, 0, 5, 14, 2).getTime() },
        { root, path: asRelPath('slow.txt'), code: 'rate_limited', message: 'Box said slow down', nextRetryAtMs: nowMs + 60_000, sinceMs: nowMs },
      ],
      heldGuard: null,
      lastSuccessfulSyncAtMs: nowMs - 60_000,
      fatal: null,
    },
    passes: 3,
    watchers: [{ root, localPath: '/home/me/Box', kind: 'dirs', health: { state: 'degraded', reason: 'inotify watch limit reached', fallbackScanMs: 60_000 }, lastFallbackScanAtMs: null }],
    remoteStream: { configured: 'sync', effective: 'changes', state: 'listening', note: 'no ITEM_SYNC event arrived', lastEventAtMs: null, nextRetryAtMs: null },
    schedules: [],
    notices: ['/home/me/Box: inotify watch limit reached'],
    eventLoop: { maxDelayMs: 140.5, recentMaxDelayMs: 31.2, p99DelayMs: 21.6 },
    idleCheck: { running: true, slices: 12, pauses: 1, done: 0 },
    controls: { pausedPairs: [], bandwidthBytesPerSec: 512 * 1024, notifications: { on: false, available: true } },
  };
}

describe('boxsync status (client)', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let server: ControlServer | null = null;
  const seen: ControlRequest[] = [];

  beforeEach(async () => {
    ({ dir, cleanup } = await makeTempDir('boxsync-status-'));
    seen.length = 0;
  });
  afterEach(async () => {
    await server?.close();
    server = null;
    await cleanup();
  });

  it('says clearly that no daemon runs, with exit code 3', async () => {
    const r = await runCli(['status', '--socket', join(dir, 'none.sock')]);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/no boxsync daemon is running/);
    expect(r.stderr).toMatch(/boxsync daemon/);
  });

  it('reports no daemon and a failed request the same way for status, status --json and the control verbs', async () => {
    const none = join(dir, 'none.sock');
    const verb = await runCli(['pause', '--socket', none]);
    expect(verb.code).toBe(3);
    expect(verb.stderr).toBe(`boxsync: no boxsync daemon is running (nothing answers on ${none}); start it with \`boxsync daemon\` or \`systemctl --user start boxsync\`\n`);
    const noneJson = await runCli(['status', '--json', '--socket', none]);
    expect(noneJson.code).toBe(3);
    expect(JSON.parse(noneJson.stdout)).toEqual({ running: false, socket: none, lastExit: null });

    const socketPath = join(dir, 'c.sock');
    server = await startControlServer(socketPath, async () => {
      throw new Error('the daemon is shutting down');
    });
    const text = await runCli(['status', '--socket', socketPath]);
    expect(text.code).toBe(2);
    expect(text.stderr).toMatch(/^boxsync: .*the daemon is shutting down\n$/);
    const json = await runCli(['status', '--json', '--socket', socketPath]);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toEqual({ running: null, socket: socketPath, error: expect.stringMatching(/the daemon is shutting down/) });
    const refused = await runCli(['resume', '--socket', socketPath]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^boxsync: .*the daemon is shutting down\n$/);
  });

  it('prints a readable summary, and the same data as JSON with --json', async () => {
    const socketPath = join(dir, 'c.sock');
    const now = Date.now();
    server = await startControlServer(socketPath, async (req) => {
      seen.push(req);
      return sampleStatus(now);
    });
    const text = await runCli(['status', '--socket', socketPath]);
    // A degraded watcher and a parked item: the daemon needs attention.
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/health: NEEDS ATTENTION: 1 item failing \(retried with backoff\); 1 item parked until changed; watcher degraded for \/home\/me\/Box/);
    expect(text.stdout).toMatch(/pid 4242/);
    expect(text.stdout).toMatch(/transferring/);
    expect(text.stdout).toMatch(/in sync: 10 files, 2 folders, 2\.0 KB/);
    expect(text.stdout).toMatch(/queued: 3 operations, 5\.0 MB/);
    expect(text.stdout).toMatch(/↑ big\.iso\s+25% of 200 B/);
    expect(text.stdout).toMatch(/ETA 7 s/);
    expect(text.stdout).toMatch(/DEGRADED: inotify watch limit reached/);
    expect(text.stdout).toMatch(/changes \(configured: sync\)/);
    expect(text.stdout).toMatch(/bandwidth limit: 512 KiB\/s; notifications: off/);
    expect(text.stdout).toMatch(/event loop: blocked at most 31\.2 ms in the last minute, 140\.5 ms since the start \(p99 21\.6 ms\)/);
    expect(text.stdout).toMatch(/idle check: reading the journal for paths out of sync \(12 slices so far, paused 1 time\(s\) for a pass\)/);
    expect(text.stdout).toMatch(/a\.txt: your copy kept as a \(conflicted copy\)\.txt/);
    // Since when each item fails: the day too when it began before today.
    expect(text.stdout).toMatch(/bad:name: Box refuses this name \(name-invalid; waits for the file to change; since 2026-01-05 14:02\)/);
    const today = new Date(now);
    const hhmm = `${String(today.getHours()).padStart(2, '0')}:${String(today.getMinutes()).padStart(2, '0')}`;
    expect(text.stdout).toMatch(new RegExp(`slow\\.txt: Box said slow down \\(rate_limited; retry in [^;]+; since ${hhmm}\\)`));
    const json = await runCli(['status', '--json', '--socket', socketPath]);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toEqual({
      running: true,
      healthy: false,
      attention: ['1 item failing (retried with backoff)', '1 item parked until changed', 'watcher degraded for /home/me/Box'],
      ...sampleStatus(now),
    });
  });

  it('never says healthy while the remote event stream is stopped, and says why it stopped', async () => {
    const socketPath = join(dir, 'c.sock');
    const now = Date.now();
    const healthy = sampleStatus(now);
    const base: DaemonStatus = { ...healthy, engine: { ...healthy.engine, errors: [] }, watchers: [], notices: [] };
    let answer: DaemonStatus = base;
    server = await startControlServer(socketPath, async () => answer);
    const ok = await runCli(['status', '--socket', socketPath]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/health: ok/);

    // Stopped without a fatal error (a reason the stream kept): attention, with that reason.
    answer = { ...base, remoteStream: { ...base.remoteStream, state: 'stopped', note: 'GET /events: the stream refused us' } };
    const stopped = await runCli(['status', '--socket', socketPath]);
    expect(stopped.code).toBe(1);
    expect(stopped.stdout).toMatch(/health: NEEDS ATTENTION: remote events stopped \(GET \/events: the stream refused us\): changes made on Box are not seen/);
    const json = JSON.parse((await runCli(['status', '--json', '--socket', socketPath])).stdout) as { healthy: boolean; attention: string[] };
    expect(json).toMatchObject({ healthy: false, attention: ['remote events stopped (GET /events: the stream refused us): changes made on Box are not seen'] });

    // Stopped by a fatal error: the error itself, then what it stopped.
    answer = { ...answer, notices: ['syncing stopped: Box refused the developer token; sync stopped'] };
    const fatal = await runCli(['status', '--socket', socketPath]);
    expect(fatal.code).toBe(1);
    expect(fatal.stdout).toMatch(/health: NEEDS ATTENTION: syncing stopped: Box refused the developer token; sync stopped; remote events stopped \(by the fatal error\)/);

    // A daemon on its way out (SIGTERM) is not "ok" either.
    answer = { ...base, stopping: true, remoteStream: { ...base.remoteStream, state: 'stopped', note: null } };
    const leaving = await runCli(['status', '--socket', socketPath]);
    expect(leaving.code).toBe(1);
    expect(leaving.stdout).toMatch(/remote events stopped \(the daemon is stopping\)/);
  });

  it('asks about one path, resolved against the working directory', async () => {
    const socketPath = join(dir, 'c.sock');
    server = await startControlServer(socketPath, async (req) => {
      seen.push(req);
      const p: PathStatus = {
        path: req.verb === 'status-path' ? req.path : '',
        root: asRootId('r1'),
        relPath: asRelPath('docs/x.txt'),
        state: 'in-sync',
        detail: 'in sync with Box file 77',
        lastOperation: { kind: 'upload', reason: 'new local file', ok: true, error: null, atMs: Date.now() - 3000 },
        failure: null,
      };
      return p;
    });
    const r = await runCli(['status', 'docs/x.txt', '--socket', socketPath]);
    expect(r.code).toBe(0);
    expect(seen[0]).toEqual({ verb: 'status-path', path: join(repoRoot, 'docs/x.txt') });
    expect(r.stdout).toMatch(/in-sync/);
    expect(r.stdout).toMatch(/because: new local file/);
  });

  it('sends the control verbs and reports a refused one with exit code 2', async () => {
    const socketPath = join(dir, 'c.sock');
    server = await startControlServer(socketPath, async (req) => {
      seen.push(req);
      if (req.verb === 'confirm-guard') throw new Error(`no safety guard with id ${req.id} is held; nothing was changed`);
      return { message: `${req.verb} done` };
    });
    for (const verb of ['pause', 'resume', 'sync-now']) {
      const r = await runCli([verb, '--socket', socketPath]);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(`${verb} done\n`);
    }
    const bad = await runCli(['confirm', 'nope', '--socket', socketPath]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/no safety guard with id nope/);
    expect(seen.map((s) => s.verb)).toEqual(['pause', 'resume', 'sync-now', 'confirm-guard']);
  });
});
