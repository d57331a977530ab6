/**
 * Batching: choose, from all candidate operations of a pass, a set with no two operations on the same path
 * or on an ancestor and its descendant, so that the executor may run them in any order or concurrently.
 * PURE, O(n · depth).
 *
 * Candidates are taken shallowest first, and at equal depth those that free a name (trash, conflict copy,
 * forget) before moves, links and transfers: a folder's operation covers its subtree, and a freed name lets
 * the operation that wants it go on the next pass. Paths are compared folded (case and normalization), the
 * way Box compares names. Reports touch nothing and are always kept.
 */
import type { Operation } from './operations.js';
import { assertNever } from './operations.js';
import type { Candidate } from './plan-context.js';
import { ancestorsOf, depth, foldKey } from './paths.js';
import { asRelPath } from './model.js';

function rank(op: Operation): number {
  switch (op.kind) {
    case 'forget':
    case 'local-trash':
    case 'remote-trash':
    case 'conflict-copy':
      return 0;
    case 'remote-move':
    case 'local-move':
    case 'remote-restore':
      return 1;
    case 'link':
      return 2;
    case 'download':
    case 'upload':
    case 'upload-version':
    case 'create-remote-folder':
    case 'create-local-folder':
    case 'write-weblink':
    case 'report':
      return 3;
    default:
      return assertNever(op);
  }
}

export function selectBatch(candidates: readonly Candidate[]): Operation[] {
  const keyed = candidates.map((c) => ({
    c,
    keys: c.paths.map((p) => foldKey(p)),
    depth: Math.min(...c.paths.map((p) => depth(p))),
    rank: rank(c.op),
  }));
  keyed.sort((a, b) => a.depth - b.depth || a.rank - b.rank);
  const claimed = new Set<string>();
  const hasClaimBelow = new Set<string>();
  const out: Operation[] = [];
  for (const { c, keys } of keyed) {
    if (c.op.kind === 'report') {
      out.push(c.op);
      continue;
    }
    const clash = keys.some((k) => claimed.has(k) || hasClaimBelow.has(k) || ancestorsOf(asRelPath(k)).some((a) => claimed.has(a)));
    if (clash) continue;
    for (const k of keys) {
      claimed.add(k);
      for (const a of ancestorsOf(asRelPath(k))) hasClaimBelow.add(a);
    }
    out.push(c.op);
  }
  return out;
}
