/**
 * The merge-base rules have one source (core/tree-effects.ts) and two appliers: the planner's simulation on
 * in-memory maps (core/apply.ts) and the reconciler's commit on the SQLite journal (engine/commit.ts). This
 * test runs the same random operations through both and compares the three trees after every operation.
 *
 * Random correlated trees come from the planner property test (a synced base, random edits on each side, plus
 * a few new Box web links); the planner chooses the operations, the batch is shuffled, and the simulated
 * executor supplies each outcome (Box answer, local stat). The map world is the truth the journal must mirror:
 * a real better-sqlite3 file per case, opened with the project's journal code, loaded with what the observer
 * would have recorded, then changed by commitOutcome only (and, after restoring a Box folder, by the listing of
 * its contents that the executor does in production).
 *
 * Replay a failure with BOXSYNC_PROPERTY_SEED=<seed> (printed on failure).
 */
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyEffects, simulate, worldTrees } from '../../src/core/apply.js';
import type { RelPath, RemoteEntry, RemoteId } from '../../src/core/model.js';
import type { Operation } from '../../src/core/operations.js';
import { foldKey, isAncestor, joinPath } from '../../src/core/paths.js';
import { plan } from '../../src/core/plan.js';
import { effectsOf } from '../../src/core/tree-effects.js';
import { commitOutcome } from '../../src/engine/commit.js';
import { openJournal } from '../../src/journal/index.js';
import type { Journal } from '../../src/ports/journal.js';
import { caseArb, caseSim, maxPasses, shuffled, type Case } from '../core/plan-random.js';
import { ROOT_ID, type Sim } from '../core/plan-sim.js';
import { makeTempDir } from '../support/tmp.js';

const linkArb = fc.array(fc.record({ j: fc.nat(60), name: fc.constantFrom('w', 'W', 'link'), url: fc.constantFrom('https://a.example/', 'https://b.example/') }), {
  maxLength: 2,
});
const equivalenceArb = fc.record({ c: caseArb, links: linkArb });

let tmp: { dir: string; cleanup: () => Promise<void> };
let files = 0;
beforeAll(async () => {
  tmp = await makeTempDir('boxsync-merge-base-');
});
afterAll(() => tmp.cleanup());

/** New Box web links in live Box folders, where neither side uses the link file's name. */
function addWeblinks(sim: Sim, links: readonly { j: number; name: string; url: string }[]): void {
  for (const l of links) {
    const folders: (RelPath | '')[] = ['', ...[...sim.remoteTree()].filter(([, r]) => r.kind === 'folder').map(([path]) => path)];
    const path = joinPath(folders[l.j % folders.length]!, l.name);
    const key = foldKey(`${path}.url`);
    const taken = [...sim.remoteTree().keys(), ...sim.world.local.keys()].some((k) => foldKey(k) === key);
    if (!taken) sim.remoteWeblink(path, l.url);
  }
}

/** What the observer would have recorded for this world: the live Box tree, trash marks, disk and base. */
function load(journal: Journal, sim: Sim): void {
  const root = sim.root.id;
  journal.transaction(() => {
    journal.putRemote(sim.world.remote.get(ROOT_ID)!);
    for (const r of sim.remoteTree().values()) journal.putRemote(r);
    for (const id of sim.world.remoteTrashed) journal.markTrashed(id, true);
    for (const l of sim.world.local.values()) journal.putLocal(root, l);
    for (const s of sim.world.synced.values()) journal.putSynced(root, s);
  });
}

/** What the executor lists into the journal after restoring a Box folder: everything live below it. */
function listRestored(journal: Journal, sim: Sim, id: RemoteId): void {
  const at = sim.remotePath(id);
  if (at === null) return;
  for (const [path, r] of sim.remoteTree()) if (isAncestor(at, path)) journal.putRemote(r);
}

/** The journal's live remote tree by local-spelling path, walked from the root as remoteTree() does. */
function journalRemoteTree(journal: Journal): Map<RelPath, RemoteEntry> {
  const out = new Map<RelPath, RemoteEntry>();
  const walk = (parentId: RemoteId, parent: RelPath | ''): void => {
    for (const r of journal.remoteChildren(parentId)) {
      if (r.status !== 'active') continue;
      const path = joinPath(parent, r.kind === 'weblink' ? `${r.name}.url` : r.name);
      out.set(path, r);
      if (r.kind === 'folder') walk(r.id, path);
    }
  };
  walk(ROOT_ID, '');
  return out;
}

function byPath<T>(entries: Iterable<readonly [string, T]>): (readonly [string, T])[] {
  return [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

function expectSameTrees(journal: Journal, sim: Sim, after: string): void {
  const root = sim.root.id;
  expect(byPath(journalRemoteTree(journal)), `remote tree after ${after}`).toEqual(byPath(sim.remoteTree()));
  expect(byPath([...journal.localUnder(root, '')].map((l) => [l.path, l] as const)), `local tree after ${after}`).toEqual(byPath(sim.world.local));
  expect(byPath([...journal.syncedUnder(root, '')].map((s) => [s.path, s] as const)), `synced tree after ${after}`).toEqual(byPath(sim.world.synced));
  const trashed = [...sim.world.remote.keys()].filter((id) => journal.isTrashed(id));
  expect(trashed.sort(), `trash marks after ${after}`).toEqual([...sim.world.remoteTrashed].sort());
}

/** One case to quiescence, every outcome applied to both; returns the kinds of operation it ran. */
function runBoth(c: Case, links: readonly { j: number; name: string; url: string }[]): Set<Operation['kind']> {
  const { sim } = caseSim(c);
  addWeblinks(sim, links);
  const { journal } = openJournal(join(tmp.dir, `journal-${++files}.sqlite`));
  const kinds = new Set<Operation['kind']>();
  try {
    load(journal, sim);
    expectSameTrees(journal, sim, 'loading');
    for (let pass = 1; ; pass++) {
      const result = plan(sim.snapshot(), { nowMs: sim.clockMs });
      if (result.quiescent) break;
      if (pass > maxPasses) throw new Error(`no quiescence after ${maxPasses} passes`);
      for (const op of shuffled(result.ops, c.order)) {
        kinds.add(op.kind);
        const outcome = simulate(sim.world, op, sim.alloc);
        applyEffects(sim.world, effectsOf(op, outcome, worldTrees(sim.world)));
        journal.transaction(() => commitOutcome(journal, sim.root.id, op, { ...outcome, bytes: 0 }));
        if (op.kind === 'remote-restore' && op.itemKind === 'folder') listRestored(journal, sim, op.remoteId);
        expectSameTrees(journal, sim, `pass ${pass}: ${JSON.stringify(op)}`);
      }
    }
  } finally {
    journal.close();
  }
  return kinds;
}

// Each case opens its own journal file (tens of ms: creation, WAL, migrations), so fewer cases than the planner's
// property test; BOXSYNC_PROPERTY_RUNS raises it, and the timeout with it.
const numRuns = Number(process.env.BOXSYNC_PROPERTY_RUNS ?? 100);

describe('merge-base rules: the map simulation and the SQLite journal agree', () => {
  it('random operations leave the same remote, local and synced trees on both', { timeout: Math.max(60_000, numRuns * 250) }, () => {
    const seed = process.env.BOXSYNC_PROPERTY_SEED ? Number(process.env.BOXSYNC_PROPERTY_SEED) : Date.now() % 2 ** 31;
    const seen = new Set<Operation['kind']>();
    const details = fc.check(
      fc.property(equivalenceArb, ({ c, links }) => {
        for (const k of runBoth(c, links)) seen.add(k);
      }),
      { seed, numRuns },
    );
    if (details.failed) {
      const cause = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
      throw new Error(`${fc.defaultReportMessage(details) ?? 'property failed'}\nCause: ${cause}\nReplay: BOXSYNC_PROPERTY_SEED=${seed}`);
    }
    expect(details.numRuns).toBe(numRuns);
    // Every rule must have been exercised, or the comparison would hold vacuously.
    const all: Operation['kind'][] = ['upload', 'upload-version', 'download', 'create-remote-folder', 'create-local-folder', 'remote-move', 'local-move',
      'remote-trash', 'local-trash', 'remote-restore', 'conflict-copy', 'link', 'forget', 'write-weblink'];
    expect(all.filter((k) => !seen.has(k))).toEqual([]);
  });
});
