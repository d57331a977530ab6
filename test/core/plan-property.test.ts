/**
 * Seeded property test of the planner: random correlated trees (a synced base, then random edits, moves,
 * deletes and creates on each side), then plan -> shuffle the batch -> apply as if every operation succeeded
 * (src/core/apply.ts), until quiescent. Asserts termination, convergence (same tree on both sides, a base row
 * for every item and no other), no content lost, and that no batch holds an ancestor/descendant pair.
 *
 * Replay a failure with BOXSYNC_PROPERTY_SEED=<seed> (and BOXSYNC_PROPERTY_PATH=<path> to go straight to the
 * shrunk case); both are printed when it fails.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { caseArb, maxPasses, runCase, throwOnFailure } from './plan-random.js';

describe('planner property: random correlated trees converge without losing content', () => {
  it('terminates, converges, keeps every content, never batches an ancestor with a descendant', () => {
    const seed = process.env.BOXSYNC_PROPERTY_SEED ? Number(process.env.BOXSYNC_PROPERTY_SEED) : Date.now() % 2 ** 31;
    const path = process.env.BOXSYNC_PROPERTY_PATH;
    const numRuns = Number(process.env.BOXSYNC_PROPERTY_RUNS ?? 1000);
    let maxSeen = 0;
    const seen = new Set<string>();
    const details = fc.check(
      fc.property(caseArb, (c) => {
        const r = runCase(c);
        maxSeen = Math.max(maxSeen, r.passes);
        for (const k of r.kinds) seen.add(k);
      }),
      { seed, numRuns, ...(path ? { path } : {}) },
    );
    throwOnFailure(details, seed);
    expect(details.numRuns).toBeGreaterThan(0);
    expect(maxSeen).toBeLessThanOrEqual(maxPasses);
    if (!path) {
      // The generator must reach every kind of change, or the property would hold vacuously.
      const exercised = ['upload', 'upload-version', 'download', 'create-remote-folder', 'create-local-folder', 'remote-move', 'local-move',
        'remote-trash', 'local-trash', 'remote-restore', 'conflict-copy', 'link', 'forget'];
      expect(exercised.filter((k) => !seen.has(k))).toEqual([]);
    }
  });

  for (const direction of ['download-only', 'upload-only'] as const) {
    it(`${direction}: terminates, keeps every content, never writes to the protected side`, () => {
      const seed = process.env.BOXSYNC_PROPERTY_SEED ? Number(process.env.BOXSYNC_PROPERTY_SEED) : Date.now() % 2 ** 31;
      const details = fc.check(
        fc.property(caseArb, (c) => {
          runCase(c, direction);
        }),
        { seed, numRuns: Number(process.env.BOXSYNC_PROPERTY_RUNS ?? 1000) / 4 },
      );
      throwOnFailure(details, seed);
      expect(details.numRuns).toBeGreaterThan(0);
    });
  }
});
