/**
 * Random correlated trees for the planner property test: a synced base, then random edits on each side, and
 * the run loop (plan -> shuffle -> apply until quiescent) with its assertions. Kept apart from the test file
 * so a failing case can be replayed from its JSON in a scratch test.
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import type { RelPath, SyncDirection } from '../../src/core/model.js';
import { pathsTouched, type Operation } from '../../src/core/operations.js';
import { depth, foldKey, isAncestorOrSelf, joinPath } from '../../src/core/paths.js';
import { plan } from '../../src/core/plan.js';
import { Sim, p } from './plan-sim.js';

// 'A' next to 'a' makes case-only renames possible (never twins: `free` compares as Box does).
const names = ['a', 'A', 'b', 'c.txt', 'd.txt', 'e'] as const;
const contents = ['p', 'q', 'r', 's', 't', 'u'] as const;
const maxDepth = 4;
export const maxPasses = 40;

interface Edit {
  readonly op: 'write' | 'mkdir' | 'move' | 'delete';
  readonly i: number;
  readonly j: number;
  readonly name: string;
  readonly content: string;
  readonly flag: boolean;
}

const editArb: fc.Arbitrary<Edit> = fc.record({
  op: fc.constantFrom('write', 'write', 'mkdir', 'move', 'delete'),
  i: fc.nat(60),
  j: fc.nat(60),
  name: fc.constantFrom(...names),
  content: fc.constantFrom(...contents),
  flag: fc.boolean(),
});

export const caseArb = fc.record({
  base: fc.array(fc.record({ folder: fc.boolean(), j: fc.nat(60), name: fc.constantFrom(...names), content: fc.constantFrom(...contents) }), {
    maxLength: 16,
  }),
  local: fc.array(editArb, { maxLength: 12 }),
  remote: fc.array(editArb, { maxLength: 12 }),
  order: fc.array(fc.nat(), { minLength: 1, maxLength: 16 }),
});

type Side = 'local' | 'remote';

function tree(sim: Sim, side: Side): Map<RelPath, 'folder' | string> {
  const out = new Map<RelPath, 'folder' | string>();
  if (side === 'local') for (const l of sim.world.local.values()) out.set(l.path, l.kind === 'folder' ? 'folder' : (l.sha1 ?? '?'));
  else for (const [path, r] of sim.remoteTree()) out.set(path, r.kind === 'folder' ? 'folder' : (r.sha1 ?? '?'));
  return out;
}

function folders(t: Map<RelPath, string>): (RelPath | '')[] {
  return ['', ...[...t].filter(([, v]) => v === 'folder').map(([k]) => k)];
}

function pick<T>(xs: readonly T[], i: number): T | undefined {
  return xs.length === 0 ? undefined : xs[i % xs.length];
}

/** No other entry has this name as Box compares names (`self` may hold it: a case-only rename). */
function free(t: Map<RelPath, string>, path: RelPath, self?: RelPath): boolean {
  const k = foldKey(path);
  return ![...t.keys()].some((x) => x !== self && foldKey(x) === k);
}

function seedBase(sim: Sim, base: readonly { folder: boolean; j: number; name: string; content: string }[]): void {
  for (const b of base) {
    const t = tree(sim, 'local');
    const parent = pick(folders(t), b.j) ?? '';
    const path = joinPath(parent, b.name);
    if (depth(path) > maxDepth || !free(t, path)) continue;
    sim.seed({ [path]: b.folder ? null : b.content });
  }
}

function edit(sim: Sim, side: Side, e: Edit): void {
  const t = tree(sim, side);
  const entries = [...t.keys()];
  const files = entries.filter((k) => t.get(k) !== 'folder');
  const target = pick(folders(t), e.j) ?? '';
  const fresh = joinPath(target, e.name);
  const fits = depth(fresh) <= maxDepth && free(t, fresh);
  switch (e.op) {
    case 'write': {
      const existing = e.flag ? pick(files, e.i) : undefined;
      if (existing !== undefined) {
        if (side === 'local') sim.localWrite(existing, e.content, { atomic: e.i % 2 === 0 });
        else sim.remoteWrite(existing, e.content);
      } else if (fits) {
        if (side === 'local') sim.localWrite(fresh, e.content);
        else sim.remoteWrite(fresh, e.content);
      }
      return;
    }
    case 'mkdir':
      if (!fits) return;
      if (side === 'local') sim.localMkdir(fresh);
      else sim.remoteMkdir(fresh);
      return;
    case 'move': {
      const from = pick(entries, e.i);
      if (from === undefined || depth(fresh) > maxDepth || !free(t, fresh, from) || isAncestorOrSelf(from, fresh)) return;
      const subtreeDepth = Math.max(...entries.filter((k) => isAncestorOrSelf(from, k)).map((k) => depth(k) - depth(from)));
      if (depth(fresh) + subtreeDepth > maxDepth) return;
      if (side === 'local') sim.localMove(from, fresh);
      else sim.remoteMove(from, fresh);
      return;
    }
    case 'delete': {
      const victim = pick(entries, e.i);
      if (victim === undefined) return;
      if (side === 'local') sim.localDelete(victim);
      else if (e.flag) sim.remoteTrash(victim);
      else sim.remoteDelete(victim);
      return;
    }
    default:
      return e.op satisfies never;
  }
}

export function assertIndependent(ops: readonly Operation[]): void {
  const touched = ops.filter((o) => o.kind !== 'report').flatMap((o) => pathsTouched(o).map((path) => ({ o, key: p(foldKey(path)) })));
  for (let a = 0; a < touched.length; a++) {
    for (let b = a + 1; b < touched.length; b++) {
      const x = touched[a]!;
      const y = touched[b]!;
      if (x.o === y.o) continue;
      if (isAncestorOrSelf(x.key, y.key) || isAncestorOrSelf(y.key, x.key)) {
        throw new Error(`batch is not independent: ${x.o.kind} ${x.key} and ${y.o.kind} ${y.key}`);
      }
    }
  }
}

/** A failed fast-check run as one error that says how to replay it. */
export function throwOnFailure<T>(details: fc.RunDetails<T>, seed: number): void {
  if (!details.failed) return;
  const msg = fc.defaultReportMessage(details) ?? 'property failed';
  const cause = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
  throw new Error(`${msg}\nCause: ${cause}\nReplay: BOXSYNC_PROPERTY_SEED=${seed} BOXSYNC_PROPERTY_PATH=${details.counterexamplePath ?? ''}`);
}

export function shuffled<T>(xs: readonly T[], order: readonly number[]): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = order[i % order.length]! % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

function liveContents(sim: Sim): Set<string> {
  const out = new Set<string>();
  for (const side of ['local', 'remote'] as const) for (const v of tree(sim, side).values()) if (v !== 'folder') out.add(v);
  return out;
}

/** Content kept outside the live trees: local trash, Box trash (and deleted-folder contents), Box version history. */
function keptContents(sim: Sim): Set<string> {
  const out = new Set<string>();
  for (const l of sim.world.localTrash) if (l.sha1) out.add(l.sha1);
  for (const r of sim.world.remote.values()) if (r.sha1 && sim.remotePath(r.id) === null) out.add(r.sha1);
  for (const versions of sim.world.remoteVersions.values()) for (const v of versions) out.add(v);
  return out;
}

export type Case = typeof caseArb extends fc.Arbitrary<infer T> ? T : never;

const writesOf: Record<'download-only' | 'upload-only', readonly Operation['kind'][]> = {
  'download-only': ['upload', 'upload-version', 'create-remote-folder', 'remote-move', 'remote-trash', 'remote-restore'],
  'upload-only': ['download', 'create-local-folder', 'local-move', 'local-trash', 'conflict-copy', 'write-weblink'],
};

/**
 * The simulated root of a case: its synced base (whose contents are returned), then the edits on each side.
 * `sim` may be a subclass that also records the edits (the dry-run property test replays them on real stores).
 */
export function caseSim(c: Case, direction: SyncDirection = 'two-way', sim: Sim = new Sim(direction)): { sim: Sim; baseContents: Set<string> } {
  seedBase(sim, c.base);
  const baseContents = new Set([...sim.world.synced.values()].flatMap((s) => (s.sha1 ? [s.sha1] : [])));
  for (const e of c.local) edit(sim, 'local', e);
  for (const e of c.remote) edit(sim, 'remote', e);
  return { sim, baseContents };
}

/**
 * One case to quiescence. Two-way: the trees converge. One-way: no write on the protected side. Both: the
 * run terminates and no content is lost.
 */
/**
 * One pass of the planner over a simulated root: plans (in one or more pieces), hands every batch to `apply`
 * (which applies it to the world before the next piece is planned) and says whether the whole pass was quiescent.
 */
export type PlanPass = (sim: Sim, apply: (ops: readonly Operation[]) => void) => boolean;

/** The production shape of a full pass: one snapshot of the whole root, one plan. */
export const wholePass: PlanPass = (sim, apply) => {
  const result = plan(sim.snapshot(), { nowMs: sim.clockMs });
  assertIndependent(result.ops);
  if (result.quiescent) return true;
  apply(result.ops);
  return false;
};

export function runCase(c: Case, direction: SyncDirection = 'two-way', planPass: PlanPass = wholePass): { passes: number; kinds: ReadonlySet<Operation['kind']> } {
  const { sim, baseContents } = caseSim(c, direction);

  const atStart = liveContents(sim);
  const newAtStart = [...atStart].filter((x) => !baseContents.has(x));

  const trace = process.env.BOXSYNC_PROPERTY_TRACE === '1';
  if (trace) console.log('local', [...tree(sim, 'local')], 'remote', [...tree(sim, 'remote')], 'base', [...sim.world.synced.keys()]);
  let passes = 0;
  const kinds = new Set<Operation['kind']>();
  let last: readonly Operation[] = [];
  const apply = (ops: readonly Operation[]): void => {
    if (trace) console.log(`pass ${passes}:`, JSON.stringify(ops.map((o) => [o.kind, ...pathsTouched(o), o.reason])));
    last = ops;
    for (const op of shuffled(ops, c.order)) {
      kinds.add(op.kind);
      sim.apply(op);
    }
  };
  for (;;) {
    if (planPass(sim, apply)) break;
    if (++passes > maxPasses) throw new Error(`no quiescence after ${maxPasses} passes; last batch: ${JSON.stringify(last.map((o) => [o.kind, pathsTouched(o)]))}`);
  }

  const live = liveContents(sim);
  const anywhere = new Set([...live, ...keptContents(sim)]);
  for (const x of atStart) expect(anywhere.has(x), `content ${x} lost`).toBe(true);
  if (direction !== 'two-way') {
    expect([...kinds].filter((k) => writesOf[direction].includes(k))).toEqual([]);
    return { passes, kinds };
  }
  for (const x of newAtStart) expect(live.has(x), `new content ${x} no longer in either tree`).toBe(true);

  const local = tree(sim, 'local');
  const remote = tree(sim, 'remote');
  expect([...local].sort()).toEqual([...remote].sort());
  const base = [...sim.world.synced.values()];
  expect(base.map((s) => s.path).sort()).toEqual([...local.keys()].sort());
  const remoteByPath = sim.remoteTree();
  for (const s of base) {
    const r = remoteByPath.get(s.path)!;
    expect(s.remoteId, s.path).toBe(r.id);
    expect(s.sha1, s.path).toBe(r.sha1);
    expect(s.inode, s.path).toBe(sim.world.local.get(s.path)!.inode);
  }
  return { passes, kinds };
}

