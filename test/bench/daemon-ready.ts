/** When the benches take a daemon's own first pass as done (compare.bench.ts's idle daemon, first-pass.ts). */
import type { DaemonStatus } from '../../src/daemon/control/control-protocol.js';

/** A pass of this process succeeded, the engine is idle, and the watchers and the event stream are up. */
export function firstPassDone(s: DaemonStatus | null): s is DaemonStatus {
  return (
    s !== null &&
    s.passes > 0 &&
    s.engine.phase === 'idle' &&
    s.engine.lastSuccessfulSyncAtMs !== null &&
    s.engine.lastSuccessfulSyncAtMs >= s.startedAtMs &&
    s.watchers.every((x) => x.health.state !== 'starting') &&
    s.remoteStream.state !== 'starting'
  );
}
