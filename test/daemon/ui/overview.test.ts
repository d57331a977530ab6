/** The page's overall state from a DaemonStatus: the same reasons `boxsync status` gives (status-text.ts). */
import { expect, it } from 'vitest';
import type { DaemonStatus } from '../../../src/daemon/control/control-protocol.js';
import { overallState } from '../../../src/daemon/ui/overview.js';

const root = { root: 'r1', localPath: '/home/me/Box', remoteId: '1', inSync: { files: 3, folders: 1, bytes: 10 }, queued: { ops: 0, bytes: 0 }, inFlight: [], rateBytesPerSec: 0, etaSec: null };

function status(over: { engine?: object; remoteStream?: object; watchers?: DaemonStatus['watchers'] } = {}): DaemonStatus {
  return {
    pid: 1,
    startedAtMs: 0,
    configFile: '/c.json',
    stopping: false,
    passes: 1,
    engine: { phase: 'idle', roots: [root], conflicts: [], errors: [], heldGuard: null, lastSuccessfulSyncAtMs: 1, fatal: null, ...over.engine },
    watchers: over.watchers ?? [],
    remoteStream: { configured: 'sync', effective: 'sync', state: 'listening', note: null, lastEventAtMs: null, nextRetryAtMs: null, ...over.remoteStream },
    schedules: [],
    notices: [],
  } as unknown as DaemonStatus;
}

it('up to date, syncing, paused, needs attention and offline, each with its reason', () => {
  expect(overallState(status())).toEqual({ state: 'up-to-date', reasons: [] });
  expect(overallState(status({ engine: { phase: 'transferring' } })).state).toBe('syncing');
  expect(overallState(status({ engine: { roots: [{ ...root, queued: { ops: 2, bytes: 5 } }] } }))).toEqual({ state: 'syncing', reasons: ['2 operations to do'] });
  expect(overallState(status({ engine: { phase: 'paused' } })).state).toBe('paused');
  const parked = overallState(status({ engine: { errors: [{ root: 'r1', path: 'a', code: 'name_invalid', message: 'no', nextRetryAtMs: null }] } }));
  expect(parked).toEqual({ state: 'needs-attention', reasons: ['1 item parked until changed'] });
  const guard = overallState(status({ engine: { phase: 'paused', heldGuard: { id: 'mass-delete:r1:6', message: 'm' } } }));
  expect(guard).toEqual({ state: 'needs-attention', reasons: ['a safety guard holds syncing (mass-delete:r1:6)'] });
  expect(overallState(status({ remoteStream: { state: 'reconnecting', note: 'connect ECONNREFUSED' } }))).toEqual({ state: 'offline', reasons: ['Box cannot be reached: connect ECONNREFUSED'] });
  // A fatal error is not "offline": it needs the user.
  expect(overallState(status({ engine: { fatal: { code: 'auth_revoked', message: 'login revoked' } }, remoteStream: { state: 'reconnecting', note: 'x' } })).state).toBe('needs-attention');
});
