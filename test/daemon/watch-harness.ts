/**
 * A ConvergenceWatch (src/daemon/lifecycle/convergence-watch.ts) on an engine test harness's real engine and
 * journal, for the tests of its checks: the harness's one root, nothing ignored, no wait between checks; `deps`
 * gives the rest (request, busy, slice length, onChecked).
 */
import { ConvergenceWatch, type ConvergenceWatchDeps } from '../../src/daemon/lifecycle/convergence-watch.js';
import { silentLogger } from '../../src/logger.js';
import type { Harness } from '../engine/support/harness.js';

export const noIgnore = (): boolean => false;

export function watchOnHarness(h: Harness, deps: Pick<ConvergenceWatchDeps, 'request' | 'busy'> & Partial<ConvergenceWatchDeps>): ConvergenceWatch {
  return new ConvergenceWatch({
    engine: h.engine,
    journal: h.journal,
    roots: [h.root],
    isIgnoredFor: () => noIgnore,
    log: silentLogger,
    minCheckIntervalMs: 0,
    ...deps,
  });
}
