/**
 * The config's `daemon` object: defaults, validation that names the key, and the BOXSYNC_* environment
 * variables that override it per process (checked by the same rules).
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig, type Config } from '../../src/config/index.js';
import { daemonSettings } from '../../src/daemon/lifecycle/daemon-settings.js';

const env = { HOME: '/home/me', XDG_STATE_HOME: '/home/me/.local/state', XDG_RUNTIME_DIR: '/run/user/1000' };
const FILE = '/x/config.json';
const minimal = { auth: { developerToken: 'T' }, folders: [{ remoteId: '0', localPath: '/home/me/Box' }] };

function parse(extra: Record<string, unknown> = {}): Config {
  return parseConfig(JSON.stringify({ ...minimal, ...extra }), FILE, env);
}

function problemsOf(extra: Record<string, unknown>): { key: string; message: string }[] {
  try {
    parse(extra);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return [...(e as ConfigError).problems];
  }
  throw new Error('expected a ConfigError');
}

describe('config: daemon', () => {
  it('has defaults for every daemon setting', () => {
    const c = parse();
    expect(c.daemon).toEqual({
      streamType: 'sync',
      watcher: 'inotify',
      maxWatches: null,
      fallbackScanSec: 60,
      shutdownTimeoutSec: 4,
      syncCheckSec: 5,
      uploadGrowingEverySec: 60,
      notifications: true,
      ui: { enabled: true, port: 8385 },
      schedules: { journalMaintenance: '45 4 * * *', tokenRefresh: '*/30 * * * *' },
    });
    expect(daemonSettings(c, {})).toEqual({
      streamType: 'sync',
      watcher: 'inotify',
      maxWatches: undefined,
      fallbackScanMs: 60_000,
      shutdownTimeoutMs: 4_000,
      syncCheckMs: 5_000,
      uploadGrowingEveryMs: 60_000,
      ui: { enabled: true, port: 8385 },
      schedules: {
        fullRescan: '0 3 * * *',
        uploadSessionCleanup: '17 * * * *',
        localTrashPurge: '30 4 * * *',
        journalMaintenance: '45 4 * * *',
        tokenRefresh: '*/30 * * * *',
      },
    });
  });

  it('takes the values from the file', () => {
    const c = parse({
      schedules: { fullRescan: '0 2 * * *' },
      daemon: { streamType: 'changes', watcher: 'chokidar', maxWatches: 5000, fallbackScanSec: 30, shutdownTimeoutSec: 9, syncCheckSec: 2, schedules: { tokenRefresh: '*/10 * * * *' } },
    });
    const s = daemonSettings(c, {});
    expect(s).toMatchObject({ streamType: 'changes', watcher: 'chokidar', maxWatches: 5000, fallbackScanMs: 30_000, shutdownTimeoutMs: 9_000, syncCheckMs: 2_000 });
    expect(s.schedules).toMatchObject({ fullRescan: '0 2 * * *', tokenRefresh: '*/10 * * * *', journalMaintenance: '45 4 * * *' });
    expect(daemonSettings(parse({ daemon: { ui: { enabled: false, port: 0 } } }), {}).ui).toEqual({ enabled: false, port: 0 });
    expect(daemonSettings(parse({ daemon: { ui: { port: 9000 } } }), { BOXSYNC_UI_PORT: '0' }).ui).toEqual({ enabled: true, port: 0 });
    expect(problemsOf({ daemon: { ui: { port: 70_000, open: true } } }).map((p) => p.key).sort()).toEqual(['daemon.ui.open', 'daemon.ui.port']);
    expect(() => daemonSettings(parse(), { BOXSYNC_UI_PORT: 'http' })).toThrow(/BOXSYNC_UI_PORT="http" is invalid: expected a port number/);
    // The idle check's slice length, for tests and tuning: no config key, its default unless the variable is set.
    expect(daemonSettings(parse(), {}).idleCheckSliceMs).toBeUndefined();
    expect(daemonSettings(parse(), { BOXSYNC_IDLE_CHECK_SLICE_MS: '0' }).idleCheckSliceMs).toBe(0);
    expect(daemonSettings(parse(), { BOXSYNC_IDLE_CHECK_SLICE_MS: '5' }).idleCheckSliceMs).toBe(5);
    expect(() => daemonSettings(parse(), { BOXSYNC_IDLE_CHECK_SLICE_MS: '2.5' })).toThrow(/BOXSYNC_IDLE_CHECK_SLICE_MS="2.5" is invalid: expected whole milliseconds, 0 to 1000/);
    expect(() => daemonSettings(parse(), { BOXSYNC_IDLE_CHECK_SLICE_MS: '5000' })).toThrow(/BOXSYNC_IDLE_CHECK_SLICE_MS/);
  });

  it('names each bad daemon key, and refuses unknown ones', () => {
    const problems = problemsOf({
      daemon: { streamType: 'admin_logs', shutdownTimeoutSec: 0, maxWatches: -1, fallbackScanSec: 1.5, schedules: { tokenRefresh: 'often' }, watchers: 'dirs' },
    });
    expect(problems.map((p) => p.key).sort()).toEqual(
      ['daemon.fallbackScanSec', 'daemon.maxWatches', 'daemon.schedules.tokenRefresh', 'daemon.shutdownTimeoutSec', 'daemon.streamType', 'daemon.watchers'].sort(),
    );
    expect(problems.find((p) => p.key === 'daemon.watchers')?.message).toMatch(/unknown key/);
    expect(problems.find((p) => p.key === 'daemon.schedules.tokenRefresh')?.message).toMatch(/cron expression/);
    expect(problemsOf({ daemon: { shutdownTimeoutSec: 601 } }).map((p) => p.key)).toEqual(['daemon.shutdownTimeoutSec']);
  });

  it('lets the environment override the file, value by value', () => {
    const c = parse({ daemon: { streamType: 'changes', watcher: 'chokidar', shutdownTimeoutSec: 9, maxWatches: 100 } });
    const s = daemonSettings(c, {
      BOXSYNC_DAEMON_STREAM: 'all',
      BOXSYNC_WATCHER: 'dirs',
      BOXSYNC_MAX_WATCHES: '7',
      BOXSYNC_FALLBACK_SCAN_SEC: '1',
      BOXSYNC_SHUTDOWN_TIMEOUT_SEC: '3',
      BOXSYNC_SYNC_CHECK_SEC: '4',
    });
    expect(s).toMatchObject({ streamType: 'all', watcher: 'dirs', maxWatches: 7, fallbackScanMs: 1_000, shutdownTimeoutMs: 3_000, syncCheckMs: 4_000 });
    // Unset or empty variables leave the file's value.
    expect(daemonSettings(c, { BOXSYNC_SHUTDOWN_TIMEOUT_SEC: '' })).toMatchObject({ streamType: 'changes', watcher: 'chokidar', shutdownTimeoutMs: 9_000, maxWatches: 100 });
  });

  it('checks each variable by its key\'s rule and names it in the error', () => {
    const c = parse();
    expect(() => daemonSettings(c, { BOXSYNC_DAEMON_STREAM: 'admin_logs' })).toThrow(/BOXSYNC_DAEMON_STREAM="admin_logs" is invalid: expected sync, changes or all\. Nothing was synced/);
    expect(() => daemonSettings(c, { BOXSYNC_SHUTDOWN_TIMEOUT_SEC: '2.5' })).toThrow(/BOXSYNC_SHUTDOWN_TIMEOUT_SEC="2\.5" is invalid: expected whole seconds, 1 to 600/);
    expect(() => daemonSettings(c, { BOXSYNC_MAX_WATCHES: 'lots' })).toThrow(/BOXSYNC_MAX_WATCHES="lots" is invalid/);
    expect(() => daemonSettings(c, { BOXSYNC_WATCHER: 'inotifywait' })).toThrow(/BOXSYNC_WATCHER/);
  });
});
